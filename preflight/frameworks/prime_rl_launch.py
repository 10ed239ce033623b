"""prime-rl's launch line: ``uv run rl @ a.toml [@ b.toml] [--trainer @ t.toml] [--a.b-c v]``
(also ``trainer`` / ``inference`` / ``orchestrator`` / ``sft`` ``@ x.toml``, ``python -m
prime_rl.trainer.rl.train @ x.toml``, ``torchrun ... src/prime_rl/trainer/rl/train.py @ x``),
read into one merged config as ``config.prime_rl.*`` facts.

Read at PrimeIntellect-ai/prime-rl v0.8.1.dev67 (= 559b4477, 2026-08-20): every entry point
(pyproject.toml ``[project.scripts]`` l.50-57) parses its pydantic model with pydantic-config
(docs/configuration.md "Sources and Precedence" / "TOML Composition" / "CLI Overrides"):

- ``@ path`` introduces a TOML (a dry run's resolved ``.json`` too); several compose left to
  right, deep-merged (lists replace); ``--section @ path`` nests that file under ``section``
  (``uv run rl --trainer @ trainer.toml``). A TOML names no other file: nothing is included.
- ``--a.b-c value`` sets ``a.b_c`` after every file (kebab-case on the command line); several
  values after one flag are a list; a bare ``--flag`` is true, ``--no-flag`` false (for an
  optional sub-config: off).
- A sub-command's model is the rl config's section of the same name (``trainer`` / ``inference``
  / ``orchestrator``; ``sft``'s trainer-like model is kept under ``trainer``), so one set of key
  paths serves every entry point (``config.prime_rl.entry`` says which ran).

The files composed, in merge order, are ``config.prime_rl.layers`` (``{section, path}``, path
empty for one not read): ``check --diff`` puts an edit into the file that owns the key
(:mod:`preflight.fixdiff.layers`). A file outside the job is not opened (``base_config`` Unknown
with why); more than
:data:`MAX_FILES` files, an argument pydantic-config refuses, a file that does not parse, are
problems naming the launch line or the file's line.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.layered import Key, Layered
from preflight.reading.overridelaunch import LaunchRead, Syntax, find_launch, merged_facts
from preflight.reading.overrides import MAX_OVERRIDES, Override, OverrideError, parse_flag, scalar
from preflight.reading.shelltypes import Arg
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "prime_rl"
PREFIX = f"config.{KIND}"
MAX_FILES = 16
"""``@`` files one launch line may compose (the shipped examples use one or two)."""
SECTION = {"rl": "", "trainer": "trainer", "sft": "trainer", "inference": "inference",
           "orchestrator": "orchestrator"}
"""Where each entry point's model sits in the rl config's key paths."""
_MODULE = re.compile(
    r"(?:^|/)(?:src/)?prime_rl/trainer/(rl|sft)/train\.py$|^prime_rl\.trainer\.(rl|sft)\.train$|"
    r"^prime_rl\.entrypoints\.(rl|sft|trainer|inference|orchestrator)$|"
    r"^prime_rl\.(orchestrator)\.orchestrator$")
HINT = re.compile(r"(?:^|[\s;&|(/])(?:rl|trainer|sft|inference|orchestrator)(?:\s+--[\w.-]+)?"
                  r"\s+@(?:\s|$)|prime_rl[./](?:trainer[./](?:rl|sft)[./]train|entrypoints[./]"
                  r"\w+|orchestrator[./]orchestrator)\b")
"""A prime-rl command: an entry point followed by ``@`` (its config file), or its modules."""


_OWN = frozenset({"orchestrator", "trainer", "inference", "weight_broadcast", "deployment",
                  "rollout_transport", "env_vars", "slurm", "monitors", "ckpt", "model"})


def score(data: Any) -> int:
    """An rl config: ``[orchestrator]`` with ``[trainer]`` or ``[inference]``, or their tables
    prime-rl alone spells so (``inference.vllm``, ``orchestrator.train.source``)."""
    top = {str(k) for k in list(data)[:4096]}
    orch, inf = data.get("orchestrator"), data.get("inference")
    hits = 0
    if isinstance(orch, dict) and (isinstance(data.get("trainer"), dict) or isinstance(inf, dict)):
        hits += 2
    if isinstance(inf, dict) and isinstance(inf.get("vllm"), dict):
        hits += 2
    if isinstance(orch, dict) and isinstance(orch.get("train"), dict) and \
            isinstance(orch["train"].get("source"), list):
        hits += 2
    if isinstance(data.get("weight_broadcast"), dict) and "orchestrator" in top:
        hits += 1
    return 0 if hits < 2 else 8 + 2 * hits + len(top & _OWN)


def entry_of(word: str) -> str | None:
    """The entry point ``word`` runs (``rl``, ``trainer``, ...), or None."""
    base = os.path.basename(word)
    if base in SECTION:
        return base
    hit = _MODULE.search(word)
    if hit is None:
        return None
    name = next(g for g in hit.groups() if g)
    return "trainer" if name == "rl" and "entrypoints" not in word else name


SYNTAX = Syntax(entry=lambda w: entry_of(w) is not None)


def _key(flag: str) -> str:
    """``inference.vllm.kv-cache-dtype`` -> ``inference.vllm.kv_cache_dtype``."""
    return flag.replace("-", "_")


class _Args:
    """The launch line's arguments sorted the way pydantic-config reads them."""

    def __init__(self, read: LaunchRead, path: str, starts: list[int]) -> None:
        self.read, self.path, self.starts = read, path, starts
        self.files: list[tuple[str, Any, Source]] = []      # (section, path or Unknown, where)
        self.overrides: list[tuple[Override, Source]] = []
        self.opaque: tuple[Unknown, Source] | None = None   # words not known here (``$ARGS``)

    def where(self, arg: Arg) -> Source:
        import bisect
        return Source(self.path, bisect.bisect_right(self.starts, arg.offset))

    def problem(self, arg: Arg, message: str, level: str = "error") -> None:
        self.read.problems.append(ConfigProblem(self.path, self.where(arg).line, message,
                                                level=level))

    def value(self, arg: Arg) -> Any:
        return Unknown(arg.opaque) if arg.opaque else arg.text

    def sort(self, args: list[Arg], section: str) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg.text == "@" or (arg.text.startswith("--") and i < len(args) and
                                   args[i].text == "@"):
                sect = section if arg.text == "@" else ".".join(
                    p for p in (section, _key(arg.text[2:])) if p)
                if arg.text != "@":
                    i += 1
                if i >= len(args):
                    self.problem(arg, "`@` names no file after it: pydantic-config refuses "
                                 "the command line")
                    return
                if len(self.files) >= MAX_FILES:
                    self.problem(arg, f"more than {MAX_FILES} `@` files on one launch line; "
                                 "the rest were not read (no real job composes that many)",
                                 level="warning")
                    return
                self.files.append((sect, self.value(args[i]), self.where(args[i])))
                i += 1
            elif arg.text.startswith("--") and len(arg.text) > 2:
                i = self._flag(args, i, arg, section)
            # a positional word is no setting pydantic-config takes: it refuses the line, as
            # it refuses any other unknown argument, and the job does not start
            elif not arg.opaque:
                self.problem(arg, f"{arg.text[:80]!r} is neither `@ file` nor `--key value`: "
                             "pydantic-config refuses the command line")
            elif self.opaque is None:
                # `$EXTRA_ARGS`: any file or override may come in there
                self.opaque = (Unknown(f"the launch line passes {arg.text[:60]!r}, whose words "
                                       f"are not known here ({arg.opaque[:120]})"),
                               self.where(arg))
            if len(self.overrides) > MAX_OVERRIDES:
                self.problem(arg, f"more than {MAX_OVERRIDES:,} overrides on one launch line; "
                             "only those before this line were read", level="warning")
                return

    def _flag(self, args: list[Arg], i: int, arg: Arg, section: str) -> int:
        name, eq, raw = arg.text[2:].partition("=")
        values: list[Arg] = []
        while not eq and i < len(args) and not args[i].text.startswith("--") and \
                args[i].text != "@":
            values.append(args[i])
            i += 1
        off = name.startswith("no-") and not eq and not values
        flag = ".".join(p for p in (section, _key(name[3:] if off else name)) if p)
        src = self.where(arg)
        try:
            if arg.opaque or any(v.opaque for v in values):
                why = arg.opaque or next(v.opaque for v in values if v.opaque)
                ov = parse_flag(flag, None, why)
            elif eq:
                ov = parse_flag(flag, raw)
            elif len(values) == 1:
                ov = parse_flag(flag, values[0].text)
            elif values:
                ov = parse_flag(flag, None)
                ov = Override("force", ov.path, [scalar(v.text) for v in values[:256]],
                              arg.text)
            else:
                ov = parse_flag(flag, None)
                ov = Override("force", ov.path, not off, arg.text)
        except OverrideError as exc:
            if exc.bound:
                self.problem(arg, f"{exc}: not read", level="warning")
            else:
                self.problem(arg, f"{exc}; pydantic-config refuses the command line")
            return i
        self.overrides.append((ov, src))
        return i


def _nest(target: Layered, part: Layered, base: Key) -> None:
    """``part`` merged into ``target`` under ``base`` (a ``--section @ file``), lines kept."""
    n = len(base)

    def source(key: Key) -> str:
        rel = key[n:]
        while rel:
            if rel in part.where:
                return str(part.where[rel])
            rel = rel[:-1]
        return ""
    target.merge(part.data, source, base)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """A prime-rl launch line: its ``@`` files merged in order under their sections, then its
    ``--key value`` overrides."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    entry = entry_of(read.launch.entry.text) or "rl"
    clean = text.replace("\r\n", "\n")
    starts = [0] + [m.end() for m in re.finditer(r"\n", clean)]
    args = _Args(read, path, starts)
    args.sort(list(read.launch.args), SECTION[entry])
    config = Layered()
    linked: list[Linked] = []
    unread: tuple[Unknown, Source] | None = None
    last: tuple[str, Source] | None = None
    layers: list[dict[str, str]] = []    # the files in merge order, for --diff (fixdiff/layers)
    bare = replace(read, overrides=[])
    for section, name, src in args.files:
        if isinstance(name, str) and name.strip() == "":
            name = Unknown("`@` is followed by an empty word")
        part = Layered()
        # (a YAML / JSON is parsed as YAML, with no `defaults:` chain: pydantic-config
        # includes no other file)
        style = "toml" if not isinstance(name, str) or not name.endswith(
            (".json", ".yaml", ".yml")) else "flat"
        merged = merged_facts(bare, KIND, (name, src), style=style, key="@", layered=part)
        why = merged.facts.get(f"{PREFIX}.base_config")
        if isinstance(why, Unknown):
            linked.extend(merged.linked)    # the job reports the file missing or outside it
            unread = unread or (why, src)
            layers.append({"section": section, "path": ""})
            continue
        layers.append({"section": section, "path": merged.base or str(name)})
        if not section and score(part.data) > 0:
            # an rl config the job holds as one (a trainer / inference / overlay part of one
            # is no whole config: read here, in its place, only)
            linked.extend(merged.linked)
        _nest(config, part, tuple(section.split(".")) if section else ())
        last = (merged.base or str(name), src)
    for ov, src in args.overrides:
        config.apply(ov, str(src))
    facts, prov = config.facts(PREFIX)
    line = Source(path, clean.count("\n", 0, read.launch.offset) + 1)
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = entry, str(line)
    if layers:
        facts[f"{PREFIX}.layers"], prov[f"{PREFIX}.layers"] = layers, str(line)
    if args.opaque is not None or read.launch.forwarded:
        why = args.opaque or (Unknown("the launch line passes on the caller's arguments "
                                      "(\"$@\"): more files or overrides may come"), line)
        facts[f"{PREFIX}.unread_args"], prov[f"{PREFIX}.unread_args"] = why[0], str(why[1])
    if unread is not None:
        facts[f"{PREFIX}.base_config"], prov[f"{PREFIX}.base_config"] = unread[0], str(unread[1])
    elif last is not None:
        facts[f"{PREFIX}.base_config"], prov[f"{PREFIX}.base_config"] = last[0], str(last[1])
    return ReaderOutput(facts, prov, tuple(read.problems), tuple(linked))
