"""Override launch lines: ``a.b=c`` dotlists (Hydra / OmegaConf) and ``--a.b value`` flags,
parsed as the frameworks parse them, each kept with the ``file:line`` where it is written.

Hydra's override grammar (hydra/core/override_parser, read at hydra 1.3.2; the same grammar
verl, NeMo-RL and Megatron-Bridge feed through ``OverridesParser.create().parse_overrides``):

- ``key=value`` sets, ``+key=value`` adds a key the config lacks, ``++key=value`` sets or adds,
  ``~key`` (or ``~key=value``) deletes; keys are dotted paths.
- values: ``null``, ``true``/``false`` (any case), integers and floats (``1e-5``, ``inf``,
  ``nan``), quoted strings (``'a b'``, ``"x"``), lists ``[1,2]`` and dicts ``{a:1}`` (nested),
  ``${...}`` interpolations (kept as strings, resolved over the merged config), and anything
  else as an unquoted string (``key=`` is the empty string).

NeMo-Automodel's ``--a.b value`` / ``--a.b=value`` (``_arg_parser.parse_cli_argv``) types its
values with ``translate_value``: ``none``/``None`` -> null, ``true``/``True``/``false``/
``False`` -> bools, else ``ast.literal_eval`` (strings of 1,000 characters or less), else the
string: :func:`python_literal` (``literal_eval`` only parses literals; nothing is run).

Bounded: at most :data:`MAX_OVERRIDES` overrides a line, keys of at most :data:`MAX_KEY_PARTS`
parts, values of at most :data:`MAX_VALUE_CHARS` characters and nested at most
:data:`MAX_NESTING` deep; past a bound the override is a problem, not a fact.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown

MAX_OVERRIDES = 10_000
MAX_KEY_PARTS = 64
MAX_VALUE_CHARS = 64 * 1024
MAX_NESTING = 32

_KEY = re.compile(r"[A-Za-z_][\w\-]*(?:[./@][\w\-]+)*")
_MAP_KEY = re.compile(r"[^:,{}\[\]]+")
_IN_LIST = re.compile(r"[^,\]\}]*")
_REST = re.compile(r".*", re.S)
_INT = re.compile(r"[+-]?(?:0|[1-9][\d_]*)")
_FLOAT = re.compile(r"[+-]?(?:(?:\d[\d_]*)?\.\d[\d_]*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+|"
                    r"\d[\d_]*\.(?:[eE][+-]?\d+)?|inf|nan)", re.I)


@dataclass(frozen=True)
class Override:
    """One override as the framework reads it."""

    op: str                        # set | add | force | delete
    path: tuple[str, ...]          # the dotted key, split
    value: Any                     # typed value (None for a delete); Unknown when not known here
    raw: str                       # as written (after the shell)


class OverrideError(ValueError):
    """An argument that the framework's override parser refuses (the job would not start), or,
    with ``bound`` set, one past fp8-doctor's own limits (not read, the job may well run)."""

    def __init__(self, message: str, bound: bool = False) -> None:
        super().__init__(message)
        self.bound = bound


def is_dotlist(text: str) -> bool:
    """Does the argument look like a Hydra override (``key=...``, ``+key=...``, ``~key``)?"""
    body = text.lstrip("+~")
    key = body.split("=", 1)[0]
    return bool(_KEY.fullmatch(key)) and ("=" in body or text.startswith("~")) and \
        not text.startswith("-")


def parse_hydra(text: str, unknown: str | None = None) -> Override:
    """A Hydra override; ``unknown``: why its value cannot be known here (it is still a key)."""
    if len(text) > MAX_VALUE_CHARS:
        raise OverrideError(f"an override of {len(text):,} characters; no real setting is that "
                            "long", bound=True)
    op = "set"
    body = text
    if body.startswith("++"):
        op, body = "force", body[2:]
    elif body.startswith("+"):
        op, body = "add", body[1:]
    elif body.startswith("~"):
        op, body = "delete", body[1:]
    key, eq, raw = body.partition("=")
    path = _path(key)
    if op == "delete":
        return Override(op, path, None, text)
    if not eq:
        raise OverrideError(f"{text!r} has no '=': Hydra refuses it (an override is "
                            "key=value)")
    if unknown is not None:
        return Override(op, path, Unknown(unknown), text)
    return Override(op, path, hydra_value(raw), text)


def parse_flag(flag: str, raw: str | None, unknown: str | None = None,
               typing: str = "yaml") -> Override:
    """``--a.b value`` (``raw`` None: a bare flag, which means true)."""
    path = _path(flag)
    if unknown is not None:
        return Override("force", path, Unknown(unknown), f"--{flag}")
    if raw is None:
        return Override("force", path, True, f"--{flag}")
    if len(raw) > MAX_VALUE_CHARS:
        raise OverrideError(f"--{flag} has a value of {len(raw):,} characters; no real "
                            "setting is that long", bound=True)
    value = python_literal(raw) if typing == "python" else scalar(raw)
    return Override("force", path, value, f"--{flag} {raw}")


def _path(key: str) -> tuple[str, ...]:
    if not _KEY.fullmatch(key):
        raise OverrideError(f"{key[:80]!r} is not a key Hydra accepts (letters, digits, _ and "
                            "- between dots)")
    parts = tuple(re.split(r"[./]", key))
    if len(parts) > MAX_KEY_PARTS:
        raise OverrideError(f"a key of {len(parts):,} parts; no real config is nested that deep",
                            bound=True)
    return parts


def scalar(raw: str) -> Any:
    """An unquoted primitive as Hydra (and YAML) types it."""
    low = raw.strip().lower()
    if low == "null":
        return None
    if low in ("true", "false"):
        return low == "true"
    text = raw.strip()
    if _INT.fullmatch(text) and len(text) <= 1000:
        return int(text.replace("_", ""))
    if _FLOAT.fullmatch(text) and len(text) <= 1000:
        value = float(text.replace("_", ""))
        return str(value) if not math.isfinite(value) else value
    return text


def hydra_value(raw: str) -> Any:
    """A Hydra override value (lists and dicts nested at most :data:`MAX_NESTING` deep)."""
    value, end = _Value(raw).parse(0, 0)
    if end < len(raw) and raw[end:].strip():
        return raw        # e.g. `a=[1,2]x`: Hydra would refuse or keep it as text
    return value


class _Value:
    def __init__(self, text: str) -> None:
        self.text = text

    def parse(self, i: int, depth: int) -> tuple[Any, int]:
        if depth > MAX_NESTING:
            raise OverrideError(f"a value nested more than {MAX_NESTING} deep", bound=True)
        t = self.text
        i = self.blank(i)
        if i >= len(t):
            return "", i
        c = t[i]
        if c in "'\"":
            j = i + 1
            out = []
            while j < len(t) and t[j] != c:
                if t[j] == "\\" and j + 1 < len(t):
                    j += 1
                out.append(t[j])
                j += 1
            return "".join(out), j + 1
        if c == "[":
            items: list[Any] = []
            i += 1
            while True:
                i = self.blank(i)
                if i < len(t) and t[i] == "]":
                    return items, i + 1
                item, i = self.parse(i, depth + 1)
                items.append(item)
                i = self.blank(i)
                if i < len(t) and t[i] == ",":
                    i += 1
                    continue
                return items, (i + 1 if i < len(t) and t[i] == "]" else i)
        if c == "{":
            mapping: dict[str, Any] = {}
            i += 1
            while True:
                i = self.blank(i)
                if i < len(t) and t[i] == "}":
                    return mapping, i + 1
                m = _MAP_KEY.match(t, i)
                if not m:
                    return mapping, i
                key = m.group(0).strip().strip("'\"")
                i = self.blank(m.end())
                value: Any = None
                if i < len(t) and t[i] == ":":
                    value, i = self.parse(i + 1, depth + 1)
                mapping[key] = value
                i = self.blank(i)
                if i < len(t) and t[i] == ",":
                    i += 1
                    continue
                return mapping, (i + 1 if i < len(t) and t[i] == "}" else i)
        if t.startswith("${", i):
            j = _interp_end(t, i)
            if depth == 0:
                return t[i:].strip(), len(t)    # "${a}x" etc.: text resolved later
            return t[i:j], j
        m = (_IN_LIST if depth else _REST).match(t, i)
        assert m is not None
        return scalar(m.group(0)), m.end()

    def blank(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        return i


def _interp_end(text: str, i: int) -> int:
    depth = 0
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def python_literal(raw: str) -> Any:
    """NeMo-Automodel's ``translate_value`` (components/config/loader.py at v0.5.0)."""
    special = {"none": None, "None": None, "true": True, "True": True, "false": False,
               "False": False}
    if raw in special:
        return special[raw]
    if len(raw) > 1000:
        return raw
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw
    if isinstance(value, (set, frozenset, bytes, complex)):
        return str(value)
    return value
