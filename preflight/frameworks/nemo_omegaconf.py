"""OmegaConf's ``${oc.env:NAME,default}`` / ``${oc.decode:...}`` in a NeMo 1.x Hydra config, resolved
from the environment the job's launch lines give the app (issue 22, holdout24 mlperf51: AMD's Llama 2
70B LoRA YAML reads ``fp8: ${oc.decode:${oc.env:FP8,False}}`` with ``FP8=True`` exported by the
sourced system config).

As omegaconf v2.3.0 does it (omry/omegaconf@v2.3.0 omegaconf/resolvers/oc/__init__.py,
omegaconf/grammar/OmegaConfGrammarParser.g4):

- ``oc.env:NAME``: the variable's text (always a string); unset: the default, ``str(default)``
  (``False`` -> ``"False"``) or None for ``null``; unset with no default: OmegaConf raises, so
  Unknown. A variable the launch sets only at run time, one a sourced file may export (the
  ``*`` entry of :mod:`preflight.reading.launchenv`), or no launch line read: Unknown.
- ``oc.decode:TEXT``: TEXT read as one grammar element: ``true``/``false`` any case -> bool,
  ``null`` -> None, ints and floats typed, a quoted string unquoted, else the text.
- ``${a.b}`` / ``${.x}``: the node's value; a key not there, a cycle: Unknown (OmegaConf raises).
- Any other resolver (``floor_div``, ``multiply``, ``if``: NeMo registers them in code) and any
  grammar this reader does not take: Unknown.

A value that is a whole ``${...}`` keeps the type its resolver gives; text around it makes a
string. Bounded: :data:`MAX_STEPS` evaluations per config, :data:`MAX_DEPTH` nesting,
:data:`MAX_TEXT` characters of one value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.reading.shellvars import runtime_reason

MAX_STEPS = 20_000
MAX_DEPTH = 32
MAX_TEXT = 65_536
Environ = Mapping[str, tuple[str, str]] | None
Where = tuple[str, ...]

_INT = re.compile(r"[+-]?(?:0|[1-9][0-9_]*)\Z")
_FLOAT = re.compile(r"[+-]?(?:(?:[0-9][0-9_]*)?\.[0-9_]+(?:[eE][+-]?[0-9]+)?|[0-9][0-9_]*"
                    r"(?:\.[0-9_]*)?[eE][+-]?[0-9]+|[0-9][0-9_]*\.|inf|nan)\Z", re.I)
_REF = re.compile(r"\s*(\.*[A-Za-z_][\w-]*(?:\.[A-Za-z_0-9][\w-]*)*)\s*\Z")
_CALL = re.compile(r"\s*([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*:(.*)\Z", re.S)
_PENDING = object()


class _Stop(Exception):
    """Past a bound: the value is Unknown."""


def primitive(text: str) -> Any:
    """One unquoted grammar element (OmegaConf's ``decode_primitive`` for what this reads)."""
    word = text.strip()
    low = word.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if _INT.match(word):
        return int(word.replace("_", ""))
    if _FLOAT.match(word):
        return float(word.replace("_", ""))
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def _close(text: str, start: int) -> int:
    """The index of the ``}`` closing the ``${`` at ``start``, -1 when none."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote and text[i - 1] != "\\" else quote
        elif c in "'\"" and depth == 1:
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_args(text: str) -> list[str]:
    """Resolver arguments: commas outside ``${...}``, brackets and quotes split them."""
    out: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for i, c in enumerate(text):
        if quote:
            quote = "" if c == quote and text[i - 1] != "\\" else quote
        elif c in "'\"":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        elif c == "," and depth == 0 and (i == 0 or text[i - 1] != "\\"):
            out.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    out.append("".join(cur))
    return out


class Resolver:
    """Evaluates the interpolations of one composed config (``root``) with ``environ``."""

    def __init__(self, root: dict[str, Any], environ: Environ) -> None:
        self.root, self.environ = root, environ
        self.memo: dict[Where, Any] = {}
        self.steps = 0

    def node(self, value: Any, base: Where, full: Where | None = None, depth: int = 0) -> Any:
        """The value of one config leaf at ``base`` (the path of its mapping); ``depth``: the
        interpolations open around it (redteam18: a chain of 3,000 ``${next}`` references each
        started at depth 0, and Python's recursion limit ended the whole app's read)."""
        if not isinstance(value, str) or "${" not in value:
            return value
        if full is not None:
            done = self.memo.get(full)
            if done is _PENDING:
                return Unknown(f"{'.'.join(full)} refers to itself (OmegaConf raises on the "
                               "cycle)")
            if full in self.memo:
                return done
            self.memo[full] = _PENDING
        try:
            out = self.text(value, base, depth)
        except _Stop as exc:
            out = Unknown(str(exc) or f"{value[:60]!r}: past this reader's bounds")
        if full is not None:
            self.memo[full] = out
        return out

    def text(self, value: str, base: Where, depth: int) -> Any:
        """A string with ``${...}`` in it: typed when it is one interpolation, else text."""
        self.steps += 1
        if self.steps > MAX_STEPS or depth > MAX_DEPTH:
            raise _Stop(f"{value[:60]!r}: interpolations nested or repeated past this reader's "
                        "bounds")
        parts: list[Any] = []
        i = 0
        while i < len(value):
            j = value.find("${", i)
            if j < 0:
                parts.append(value[i:])
                break
            if j > 0 and value[j - 1] == "\\":       # `\${` is the text `${`
                parts.append(value[i:j - 1] + "${")
                i = j + 2
                continue
            end = _close(value, j + 1)
            if end < 0:
                return Unknown(f"{value[:60]!r}: an unclosed `${{` (OmegaConf's grammar "
                               "refuses it)")
            if j > i:
                parts.append(value[i:j])
            got = self.one(value[j + 2:end], base, depth + 1)
            if isinstance(got, Unknown):
                return got
            parts.append(_Typed(got))
            i = end + 1
        if len(parts) == 1 and isinstance(parts[0], _Typed):
            return parts[0].value
        out = "".join(p if isinstance(p, str) else _text(p.value) for p in parts)
        if len(out) > MAX_TEXT:
            raise _Stop(f"{value[:60]!r}: expands past {MAX_TEXT:,} characters")
        return out

    def one(self, body: str, base: Where, depth: int) -> Any:
        """The value of one ``${body}``."""
        if "${" in body and not _CALL.match(body):
            return Unknown(f"${{{body[:60]}}}: an interpolated key name (not read here)")
        ref = _REF.match(body)
        if ref:
            return self.select(ref.group(1), base, depth)
        call = _CALL.match(body)
        if call is None:
            return Unknown(f"${{{body[:60]}}}: not an interpolation this reader takes")
        name, raw = call.group(1), call.group(2)
        args = [self.arg(a, base, depth) for a in _split_args(raw)] if raw.strip() else []
        bad = next((a for a in args if isinstance(a, Unknown)), None)
        if bad is not None:
            return bad
        if name == "oc.env":
            return self.env(args)
        if name == "oc.decode":
            if len(args) != 1:
                return Unknown("oc.decode takes one argument")
            if args[0] is None:
                return None
            if not isinstance(args[0], str):
                return Unknown(f"oc.decode of {args[0]!r}, not a string (OmegaConf raises "
                               "TypeError)")
            return self.text(args[0], base, depth + 1) if "${" in args[0] else \
                primitive(args[0])
        if name == "oc.select" and args and isinstance(args[0], str):
            got = self.select(args[0], base, depth)
            if isinstance(got, Unknown) and len(args) > 1 and "not a key" in got.reason:
                return args[1]
            return got
        return Unknown(f"${{{name}:...}}: resolver {name!r} runs when the app starts (it "
                       "registers it in code), not read here")

    def arg(self, raw: str, base: Where, depth: int) -> Any:
        word = raw.strip().replace("\\,", ",").replace("\\ ", " ")
        if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
            inner = word[1:-1]
            if "${" not in inner:
                return inner
            got = self.text(inner, base, depth + 1)
            return got if isinstance(got, Unknown) else _text(got)
        if "${" in word:
            return self.text(word, base, depth + 1)
        return primitive(word)

    def env(self, args: list[Any]) -> Any:
        if not args or len(args) > 2 or not isinstance(args[0], str):
            return Unknown("oc.env takes a variable name and an optional default")
        name = args[0]
        default = (_text(args[1]) if args[1] is not None else None) if len(args) == 2 else \
            _NONE
        if self.environ is None:
            return Unknown(f"${{oc.env:{name}}}: no launch line that runs the app was read, so "
                           "its environment is not known")
        given = self.environ.get(name)
        if given is not None:
            why = runtime_reason(given[0])
            return Unknown(f"{name}: {why}") if why is not None else EnvText(given[0])
        anyvar = self.environ.get("*")
        if anyvar is not None:
            why = runtime_reason(anyvar[0]) or "set by what the launch does not show"
            return Unknown(f"{name} may be set at run time: {why}")
        if default is _NONE:
            return Unknown(f"${{oc.env:{name}}}: {name} is not set by the launch and has no "
                           "default (OmegaConf raises)")
        return EnvText(default) if isinstance(default, str) else default

    def select(self, ref: str, base: Where, depth: int = 0) -> Any:
        dots = len(ref) - len(ref.lstrip("."))
        if dots and dots - 1 > len(base):
            return Unknown(f"${{{ref}}}: not a key of the config (OmegaConf raises)")
        start = base[:len(base) - (dots - 1)] if dots else ()
        full = (*start, *(p for p in ref[dots:].split(".") if p))
        node: Any = self.root
        for part in full:
            if not isinstance(node, dict) or part not in node:
                return Unknown(f"${{{ref}}}: not a key of the config (OmegaConf raises)")
            node = node[part]
        if isinstance(node, (dict, list)):
            return Unknown(f"${{{ref}}}: a whole mapping or list, not read here")
        return self.node(node, full[:-1], full, depth + 1)


class EnvText(str):
    """What ``oc.env`` gives: always text (``"False"`` is a non-empty, true string)."""


class _Typed:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_NONE = object()


def _text(value: Any) -> str:
    return str(value)


def resolve_env(data: Any, environ: Environ) -> Any:
    """A copy of ``data`` (a composed config) with every ``${...}`` evaluated; Unknown leaves
    where it cannot be."""
    if not isinstance(data, dict):
        return data
    res = Resolver(data, environ)

    def walk(node: Any, path: Where) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*path, str(k))) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, path) if isinstance(v, (dict, list)) else res.node(v, path)
                    for v in node]
        return res.node(node, path[:-1], path)
    return walk(data, ())


__all__ = ["EnvText", "MAX_DEPTH", "MAX_STEPS", "MAX_TEXT", "Resolver", "primitive", "resolve_env"]
