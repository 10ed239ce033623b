"""Boolean settings written as words or numbers, read as their framework reads them.

``--bf16 1``, ``--merge_lora yes``, ``bf16: 1`` in a YAML or ``TrainingArguments(bf16=1)`` all
switch the setting on for the framework, but a rule that asks ``config.hf_trainer.bf16 == true``
saw ``1`` or ``"yes"`` and stayed quiet: the most common way to lose FP8 (FP8D-HF-0001) was missed
for a job that wrote ``--bf16 1``. Each framework's record names its boolean keys
(:attr:`preflight.frameworks._record.Framework.bool_keys`); the walk (jobs/walk.py) turns their
values into ``True`` / ``False`` as it merges the files' facts, whatever reader stated them.

- HfArgumentParser (HF Trainer, TRL, LLaMA-Factory, ms-swift) gives a ``bool`` field
  ``string_to_bool``: yes/true/t/y/1 and no/false/f/n/0, any case (transformers
  src/transformers/hf_argparser.py, ``string_to_bool`` and ``_parse_dataclass_field``, read at
  002496228f0c); a dict or YAML it gets
  (``parse_dict``) keeps the value, which Python's truth then decides: 1 and 0 are the same.
- axolotl's pydantic models take the same words and on/off (pydantic v2 bool validation).

A config file (or Python code) is another matter: a quoted ``bf16: 'false'`` is a string, and
what it means is each framework's loader's (``Framework.file_strings``, :func:`from_file`):
HfArgumentParser's ``parse_yaml_file`` / ``parse_dict`` keep it and the Trainer tests its truth
(on), while TRL's ``--config`` sets it as an argparse default, which ``string_to_bool`` turns
off; LLaMA-Factory and NeMo-RL keep it (OmegaConf -> dict); axolotl (pydantic), ms-swift (YAML
made flags) and accelerate (``str()`` into the environment, read by ``str_to_bool``) convert it.

A ``$VAR`` the script does not set (``--bf16 $BF16``) is Unknown: the shell gives it at run time
(redteam3: kept as the text ``$BF16``, which no rule reads as true, so ``--bf16 $BF16`` under
accelerate FP8 was "no problem"). Any other value (``bf16: auto``, Unknown) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from preflight.facts import Unknown
from preflight.reading.types import ConfigProblem

_TRUE = frozenset({"yes", "true", "t", "y", "1"})
_FALSE = frozenset({"no", "false", "f", "n", "0"})
_RUNTIME = re.compile(r"\$(?:[A-Za-z_{(])")
"""``$NAME``, ``${...}``, ``$(...)``: a value the shell gives at run time."""
_PYDANTIC_TRUE = _TRUE | {"on"}
_PYDANTIC_FALSE = _FALSE | {"off"}


def as_bool(value: Any, *, on_off: bool = False) -> Any:
    """``value`` as the boolean a framework's parser makes of it, or ``value`` unchanged (a
    list or table: Unknown, :func:`tables`)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple, dict)):
        return Unknown(f"{str(value)[:40]} is a {'table' if isinstance(value, dict) else 'list'}"
                       " where a true/false setting goes: the framework's loader refuses it or "
                       "takes its truth; which is not known here")
    if isinstance(value, int):
        return bool(value) if value in (0, 1) else value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in (_PYDANTIC_TRUE if on_off else _TRUE):
            return True
        if word in (_PYDANTIC_FALSE if on_off else _FALSE):
            return False
        if _RUNTIME.match(word):
            return Unknown(f"{value[:80]} is given at run time (the environment): whether the "
                           "setting is on is not known here")
    return value


def key_of(name: str, table: Mapping[str, tuple[frozenset[str], bool]]) -> bool | None:
    """For a fact ``config.<kind>.<key>`` (or ``config.<kind>.replaced.<key>``) whose key is
    one of ``table[kind]``'s boolean keys: whether that parser takes on/off; else None."""
    if not name.startswith("config."):
        return None
    parts = name.split(".", 2)
    if len(parts) < 3 or parts[1] not in table:
        return None
    keys, on_off = table[parts[1]]
    rest = parts[2].removeprefix("replaced.")
    return on_off if rest in keys else None


_QUOTED = frozenset({"true", "false"})
_NUMBER = re.compile(r"[ \t]*[-+]?\d+[ \t]*\Z")
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml")


def source_kind(where: str) -> str:
    """``file`` (a YAML / JSON / TOML config), ``python`` or ``cli`` (a launch script or an
    argument file: its words pass through the framework's argument parser)."""
    path = getattr(where, "path", None) or str(where).rsplit(":", 1)[0]
    low = path.lower()
    return "file" if low.endswith(CONFIG_SUFFIXES) else "python" if low.endswith(".py") else "cli"


def from_file(value: Any, how: str, *, key: str, on_off: bool, boolean: bool, number: bool,
              why: str, where: str) -> Any:
    """A string a config file (or Python code) gives a key, as the framework's loader takes it
    (``how``: :attr:`preflight.frameworks._record.Framework.file_strings`); ``boolean`` /
    ``number``: the key is one of its boolean / number settings. Anything else unchanged."""
    if not isinstance(value, str) or _RUNTIME.match(value):
        return as_bool(value, on_off=on_off) if boolean else value
    shown = f"{key} is given the string {value[:40]!r} ({where})"
    if boolean and how == "words":
        return as_bool(value, on_off=on_off)
    if boolean and how == "truth":
        return bool(value)
    if boolean and how == "either":
        words = as_bool(value, on_off=on_off)
        if words is bool(value):
            return words
        other = words if isinstance(words, bool) else "refused (the job stops)"
        return Unknown(f"{shown}: {why}; so it is {bool(value)} or {other}, by the loader that "
                       "reads the file, which is not known here")
    if number and how == "words" and _NUMBER.match(value) and len(value) < 100:
        return int(value)
    if number and how in ("truth", "either") and _NUMBER.match(value):
        return Unknown(f"{shown}: {why}; a number kept as text fails (or misbehaves) where the "
                       "framework computes with it")
    if not how and value.strip().lower() in _QUOTED:
        return Unknown(f"{shown}: a quoted boolean{'; ' + why if why else ''}; whether the "
                       "framework takes it as that boolean, keeps the text (true) or refuses it "
                       "is not known here")
    return value


def refuse_empty(facts: MutableMapping[str, Any], prov: Mapping[str, Any], path: str,
                 prefix: str, keys: Iterable[str]) -> list[ConfigProblem]:
    """A boolean flag given on a command line a value HfArgumentParser's ``string_to_bool``
    refuses: empty (``--merge_lora=``, ``--bf16= True``: the word after it is no value of it;
    redteam2 read it as the bare flag, true, and ``--diff`` wrote ``--merge_lora false true``),
    ``on``, ``1.0``, ``2``, a word with a zero-width space (redteam3: kept as text no rule reads).
    The parser stops the job there: its fact becomes Unknown, and the problems name the lines.
    A ``$VAR`` is left to :func:`as_bool`. (In a YAML, ``parse_dict`` keeps the value, whose truth
    decides: only command lines come here.)"""
    problems = []
    for key in keys:
        name = f"{prefix}.{key}"
        value = facts.get(name)
        if name not in facts or isinstance(value, (bool, Unknown)) or \
                (type(value) is int and value in (0, 1)) or (isinstance(value, str) and (
                    value.strip().lower() in _TRUE | _FALSE or _RUNTIME.match(value))):
            continue
        shown = "an empty value" if value == "" else f"{str(value)[:40]!r}"
        why = (f"--{key} is given {shown}, which the framework's argument parser refuses for a "
               "true/false setting (string_to_bool takes yes/no, true/false, t/f, y/n, 1/0), so "
               "the job stops here")
        facts[name] = Unknown(why)
        problems.append(ConfigProblem(path, getattr(prov.get(name), "line", None), why))
    return problems


def tables(facts: MutableMapping[str, Any], prov: MutableMapping[str, Any],
           table: Mapping[str, tuple[frozenset[str], bool]]) -> None:
    """A boolean key written as a table (TOML ``enable_fp8 = {a = 1}``, YAML ``fp8: {a: 1}``):
    the readers flatten it into ``key.a``, so the key itself was absent and its default (off)
    was read (redteam10: cosmos-rl FP8 "no" where pydantic refuses the config). It becomes
    Unknown, at the line of its first entry."""
    found: dict[str, str] = {}
    for name in list(facts)[:1_000_000]:
        if not name.startswith("config.") or name.count(".") < 3:
            continue
        _, kind, rest = name.split(".", 2)
        keys = table.get(kind, (frozenset(), False))[0]
        parts = rest.split(".")
        for n in range(1, min(len(parts), 16)):
            key = ".".join(parts[:n])
            if key in keys and f"config.{kind}.{key}" not in facts:
                found.setdefault(f"config.{kind}.{key}", name)
                break
    for key, inner in found.items():
        facts[key] = Unknown(f"{key.split('.', 2)[2]} is a table ({inner.split('.', 2)[2][:60]} "
                             "...) where a true/false setting goes: the framework's loader "
                             "refuses it or takes its truth; which is not known here")
        prov[key] = prov.get(inner, "config")
