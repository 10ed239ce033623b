"""Shell values in launch scripts: comments blanked, ``NAME=value`` assignments, and a flag's
value typed with ``$VAR`` / ``${VAR:-default}`` substituted. Nothing is executed.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.base.digits import ascii_digits, ascii_int
from preflight.reading import shelldecl, shellside

# `NAME=value`, after a declaration builtin and its options (`readonly`, `declare -rx`,
# `typeset -l`, `export -n`, `local`: reading/shelldecl.py)
_ASSIGN = re.compile(r"""^\s*(?:(export|local|declare|typeset|readonly)((?:\s+[-+][A-Za-z-]*)*)\s+)?"""
                     r"""([A-Za-z_]\w*)=("[^"\n]*"|'[^'\n]*'|[^\s;#()]*)\s*(?:#.*)?$""")


# `$NAME`, `${NAME:-default}`, `$1`..`$9`, and `${10}` and above, which bash reads only braced
# (`$10` is `$1` then "0"): holdout12's Pai-Megatron-Patch run_mcore_qwen3.sh:40 `TP=${10}`
# `${NAME:?message}` / `${NAME?message}` is NAME's value where set (else the script stops: no
# default); `${NAME-d}`, `${NAME:=d}` take d as `:-` does (shell17, redteam16's open note: a
# python launch's `--fp8 ${FP8:?set FP8}` stayed a run-time word with FP8 set by the caller)
_VAR = re.compile(r"^\$(?:\{([A-Za-z_]\w*|[1-9]\d{0,5})(?::?[-=]([^}]*)|:?\?[^}]*)?\}?|"
                  r"([A-Za-z_]\w*|[1-9])(?::-([^}]*))?\}?)$")

COUNT = "@#"
"""Key of the variables that holds how many arguments the caller gives (:func:`.shellbind.
positional`): a ``${12:-d}`` past them takes its default, as bash gives it."""


def reference(raw: str) -> tuple[str, str | None] | None:
    """``raw`` as one variable reference: (name, the ``:-`` default or None)."""
    m = _VAR.match(raw)
    if m is None:
        return None
    return (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))

RUNTIME = "\x00"
"""Marks a value another script gives this one that cannot be known here (set from a
``$(...)``, a file read or that script's own environment: ``VAR=$(date) bash x.sh``): the
variable is set, so ``${VAR:-default}`` does not take its default, but its value is unknown.
What follows the marker is the reason."""


def runtime(reason: str) -> str:
    """A variable's value that is set but cannot be known here (:data:`RUNTIME`)."""
    return RUNTIME + reason


def runtime_reason(value: str) -> str | None:
    """Why ``value`` cannot be known, if it is a :func:`runtime` marker."""
    return value[1:] if value.startswith(RUNTIME) else None


def typed(raw: str, variables: dict[str, str]) -> Any:
    """A flag value: quotes removed, ``$VAR`` / ``${VAR:-default}`` substituted, numbers typed."""
    if raw[:1] in "\"'" and raw[-1:] == raw[:1]:
        raw = raw[1:-1]
    for _ in range(8):       # NNODES=${SLURM_NNODES:-4}; --nnodes $NNODES: follow the chain
        ref = reference(raw)
        if ref is None:
            break
        # the ${X:-default} default when X is not set in the script (or set from itself)
        value = lookup(ref[0], ref[1], variables)
        if value is None or value == raw:
            break
        raw = value
    if re.fullmatch(r"-?\d+", raw):
        # int() refuses more than 4,300 digits; such a "number" is no real setting: keep the text
        # (intent calls it implausible).
        return int(raw) if len(raw) <= 1000 else raw
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE]-?\d+)", raw):
        return float(raw)
    return raw


def strip_comments(text: str) -> str:
    """Blank out ``# ...`` comments (not ``$#`` or ``${#x}``), keeping offsets and lines."""
    # (a comment at a line's start has no blank before it: the old "- 1" made the text one
    # character shorter per such line, so offsets read here fell on the line above: redteam2)
    return re.sub(r"(^|[ \t])#[^\n]*",
                  lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), text,
                  flags=re.M)


def collect_variables(text: str, outer: dict[str, str] | None = None,
                      here: dict[str, str] | None = None, script: str | None = None,
                      runs: str | None = None) -> dict[str, str]:
    """``NAME=value`` shell assignments (first one wins), for ``$NAME`` in flag values, and
    the here-documents a variable takes whose bodies ``text`` holds.

    ``outer``: what sourced scripts set; the script's own assignments override them, except
    ``X=${X:-default}``, which keeps the sourced value. ``here``:
    :func:`.shellheredoc.values` of ``text`` when already known. ``script``: the file ``text``
    is (``runs``: the script bash runs, when ``text`` is sourced by it): values computed from
    the script's own folder (``DIR=$(cd "$(dirname "$0")" && pwd)``, ``${1:-${DIR}/x}``:
    :mod:`.shelldir`) are read with it; without it they are left out, as any ``$(...)``."""
    variables = _Vars(outer or {})
    own: set[str] = set()
    if "<<" in text:     # `read -r -d '' CMD <<EOF`: the body (kept, see shellheredoc.kept_text)
        if here is None:
            from preflight.reading.shellheredoc import values

            here = values(text)
        for name, value in here.items():
            own.add(name)
            variables[name] = value
    spans: list[tuple[int, int]] | None = None
    first: dict[str, int] = {}
    at = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        at += len(line)
        m = _ASSIGN.match(line)
        computed = _computed(line, m, variables, script, runs) if "$" in line else None
        if computed is not None:
            m, value = computed
        elif m:
            value = m.group(4)
            if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
                value = value[1:-1]
        if m:
            name = m.group(3)
            local = False
            if m.group(1) in ("local", "declare", "typeset") and "g" not in m.group(2):
                spans = shelldecl.function_spans(text) if spans is None else spans
                local = shelldecl.in_function(spans, at - len(line))
                if m.group(1) == "local" and not local:
                    continue     # bash: "local: can only be used in a function"
            if name in own and computed is not None and _operated(name, m.group(4)):
                variables[name] = value      # `X=${X%.sh}`: from X's value (shellparam)
                continue
            if name in own:
                if not local and name in first and variables.get(name) != value and not (
                        _own_default(name, value) or value.startswith(RUNTIME)):
                    # set again to another value (a decoy first, a branch, a function): which
                    # one the launch line sees is the script's flow (redteam5: `P=bf16` then
                    # `P=fp8` was read as bf16, FP8 "no")
                    variables[name] = runtime(
                        f"{name} is set to {variables[name][:30]!r} at line {first[name]} and "
                        f"to {value[:30]!r} at line {number}")
                    first.pop(name)
                continue
            if m.group(1):
                decl = shelldecl.parse(m.group(1), m.group(2).split())
                if not decl.assigns:
                    continue
                if decl.nameref:
                    value = "${" + value + "}" if re.fullmatch(r"[A-Za-z_]\w*", value) else \
                        runtime(f"declare -n {name}={value[:40]}: a reference bash resolves")
                elif not decl.plain:
                    got = decl.value(value) if "$" not in value and "`" not in value else None
                    value = got if got is not None else runtime(
                        f"{m.group(1)}{m.group(2)} {name}={value[:40]}: bash computes the value")
            own.add(name)
            ref = reference(value)
            if not (ref and ref[0] == name and name in variables):
                variables[name] = value
                first[name] = number
    result = dict(variables)
    _side_set(text, result, here or {})
    _inline(text, result, own, first)
    return result


def _plain(value: str) -> bool:
    """No ``$`` or backquote: a value the evaluator of a computed line may take as it is."""
    return "$" not in value and "`" not in value


class _Vars(dict[str, str]):
    """The variables, with the plain ones (:func:`_plain`, and ``@`` keys) kept beside them as
    they are set: :func:`_computed` hands those to the evaluator on every computed line, and
    filtering every variable there made a script of chained assignments (``export
    V2=${V1}x``) quadratic (redteam15: 5,000 lines, 16 s)."""

    def __init__(self, items: dict[str, str]) -> None:
        super().__init__()
        self.plain: dict[str, str] = {}
        for key, value in items.items():
            self[key] = value

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        if _plain(value) or key.startswith("@"):
            self.plain[key] = value
        else:
            self.plain.pop(key, None)


def _inline(text: str, variables: dict[str, str], own: set[str], first: dict[str, int]) -> None:
    """A name set again to another value where it does not start its line (``case`` arm, an
    ``if`` on one line: :func:`.shellside.inline_set`): a run-time value (shell15)."""
    for name, value, number in shellside.inline_set(text):
        if name in own and name in first and variables.get(name) != value.strip("\"'") and \
                not _own_default(name, value.strip("\"'")):
            variables[name] = runtime(f"{name} is set to {variables[name][:30]!r} at line "
                                      f"{first.pop(name)} and to {value[:30]!r} at line {number}")


def _side_set(text: str, variables: dict[str, str], here: dict[str, str]) -> None:
    """Names set by ``(( F++ ))``, ``read F``, ``F+=1`` ... (:mod:`.shellside`, redteam14): a
    run-time value, not their ``NAME=value``'s; ``read -d '' CMD <<EOF`` keeps the body."""
    for name, number in shellside.side_set(text).items():
        if name not in here:
            variables[name] = runtime(f"{name} is also set at line {number} by a command whose "
                                      "value is not followed here")


# `NAME=$(...)` / `NAME="${1:-${ROOT}/x}"`: a value the shell kit evaluates (reading/shelldir)
_COMPUTED = re.compile(r"^\s*(?:(export)()\s+)?([A-Za-z_]\w*)=(.*(?:\$\(|\$\{[^}]*\$|\$0|"
                       r"BASH_SOURCE|\$\{[A-Za-z_]\w*[%#/]|\$\{?[A-Za-z_]).*)$")


def _computed(line: str, m: re.Match[str] | None, variables: dict[str, str],
              script: str | None, runs: str | None) -> tuple[re.Match[str], str] | None:
    """(the assignment, its value) where the shell kit knows a value the line pattern does not:
    the script's own folder and what is built on it (``DIR=$(cd "$(dirname "$0")" && pwd)``,
    ``ROOT=$(cd "$DIR/.." && pwd)``, ``CFG="${1:-${ROOT}/x.py}"``); None: the line as before."""
    c = _COMPUTED.match(line)
    if c is None or script is None or (m is not None and "${" not in m.group(4) and re.search(
            rf"\${c.group(3)}\b", c.group(4))):      # `X="$X more"`: as before
        return None
    from preflight.reading import shelldir
    from preflight.reading.shellexpand import Eval, TooLarge
    from preflight.reading.shellwords import split

    statements = split(line.strip()).statements
    if len(statements) != 1 or statements[0].assign is None or statements[0].array:
        return None
    from preflight.reading.shellnames import SELF

    plain = variables.plain if isinstance(variables, _Vars) else \
        {k: v for k, v in variables.items() if _plain(v) or k.startswith("@")}
    ev = Eval({**plain, SELF: script, shelldir.RUNS: runs or
               variables.get(shelldir.RUNS) or script})    # `$(basename $0 .sh)`: shellnames
    try:
        ev.assign(statements[0])
    except TooLarge:
        return None
    held = ev.env.get(statements[0].assign, [])
    if len(held) != 1 or any(seg.opaque for seg in held[0]):
        return None
    text = "".join(seg.text for seg in held[0])
    path, why = shelldir.resolve(text, script, runs)
    return c, path if path is not None else runtime(why or "")


def _own_default(name: str, value: str) -> bool:
    """``X=${X:-d}``, ``X="$X more"``: the value refers to the variable itself other than
    through a pattern operator (``${X%.sh}``, :func:`_operated`)."""
    return bool(re.search(rf"\$\{{?{name}\b", value)) and not _operated(name, value)


def _operated(name: str, value: str) -> bool:
    """``X=${X%.sh}`` / ``X=${X/a/b}``: a pattern operator on the variable itself."""
    return bool(re.search(rf"\$\{{{name}(?:%|#|/|,|\^)", value))


_FLAG_REF = re.compile(r"(?<![\w-])(--[A-Za-z0-9_-]*)\$(?:\{([A-Za-z_]\w*)(?::-([\w.-]*))?\}|"
                       r"([A-Za-z_]\w*))")


def lookup(name: str, default: str | None, variables: dict[str, str]) -> str | None:
    """The value of ``$name`` as bash would see it from the script's own assignments, following
    ``X=$Y`` chains (bounded); ``PRECISION=${PRECISION:-bf16}`` falls back to its default."""
    if ascii_digits(name) and name not in variables:
        index, count = ascii_int(name), ascii_int(variables.get(COUNT, ""))
        if index is not None and count is not None and index > count:
            return default    # `${12:-d}` past the arguments the caller gives: d
        return None           # `$1` of a script nobody in the job runs: not known (shellargs)
    seen: set[str] = set()
    while name in variables and name not in seen:
        seen.add(name)
        if variables[name].startswith(RUNTIME):
            return None       # set by the caller, value unknown: the default does not apply
        ref = reference(variables[name])
        if ref is None:
            # `${X:-d}` with X set empty is d (bash), `${1:-d}` with an empty first argument too
            return variables[name] if variables[name] or default is None else default
        name, default = ref[0], ref[1] if ref[1] is not None else default
    return default


def expand_flag_names(text: str, variables: dict[str, str]) -> str:
    """``--${PRECISION:-bf16}`` -> ``--bf16`` where the value is known: a flag whose name comes
    from a variable (Megatron-LM's example scripts). Only names of letters, digits, ``_`` and
    ``-`` are put in, so lines and the other flags stay where they are."""
    def put(m: re.Match[str]) -> str:
        value = lookup(m.group(2) or m.group(4), m.group(3), variables)
        if value is None or not re.fullmatch(r"[\w-]+", value):
            return m.group(0)
        return m.group(1) + value
    return _FLAG_REF.sub(put, text) if "--" in text and "$" in text else text
