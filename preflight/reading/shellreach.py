"""Commands of a launch script that never run: after an ``exit`` of the script itself, or in a
function the script never calls. For the readers of inline Python programs
(:mod:`.launchinline`), which find them by their text.

redteam14 (session 41, open): ``exit 0`` then ``python - <<'EOF' ... EOF`` (or ``python -c``),
or the same inside ``f() { ...; }`` with no call of ``f``, was read as the job's program: a
confident FP8 "yes" from code bash never runs (bash(1): ``exit`` ends the shell; a function body
runs only when called). Decided conservatively, so a program that may run is never dropped:

- an ``exit`` (or ``exec`` with a command: the shell becomes it; redteam16), neither the name of
  a function of the script, at the script's top level only -- not in an ``if`` / ``case``
  branch, a loop, a ``( ... )`` subshell, a pipeline part or background job, or a function body;
- a function whose name the script's text names nowhere but in its own definition, and no
  command run through a variable or positional parameter (``"$@"``, ``$1``: a name given at
  run time), no ``trap`` / ``eval`` / ``bash -c`` that could name it;
- a command named like a function defined above it at the script's top whose body never names
  it (``python() { :; }`` then ``python - <<EOF``: bash runs the function; redteam16).

Bounded: the statements of :mod:`.shellwords` (bounded there) and one regular-expression count
per function (:data:`MAX_FUNCTIONS`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from functools import lru_cache

from preflight.reading import shellfuncs
from preflight.reading.shelltypes import Part, literal
from preflight.reading.shellwords import split

MAX_FUNCTIONS = 256
"""Function bodies looked at (past them: every function may be called)."""

_HEADER = re.compile(r"[ \t]*(?:function[ \t]+[\w.:-]+[ \t]*(?:\(\))?|[\w.:-]+[ \t]*\(\))[ \t]*\{?\s*")
"""A function's header alone, up to the first statement of its body."""
_DYNAMIC = re.compile(r"(?<![\w.-])(?:trap|eval|xargs|parallel|(?:declare|typeset|export)[ \t]+-f|"
                      r"(?:ba|z|k|da)?sh[ \t]+(?:-[A-Za-z]+[ \t]+)*-[A-Za-z]*c)(?![\w.-])")
"""A command that may run a function named in a string (``trap f EXIT``, ``bash -c f`` after
``export -f f``)."""


@lru_cache(maxsize=8)
def unreached(text: str) -> Callable[[int], str | None]:
    """Why the command at an offset of ``text`` never runs (None: it may run); kept for the
    last few texts (every launch collection of a script asks: :mod:`.shellexpand`)."""
    words = split(text)
    if words.truncated_at is not None or words.unclosed is not None:
        return lambda offset: None
    # (the spans are rough, by the text: one whose header is no statement of the script, as
    # `out.sum().backward()` inside a quoted program, is no function)
    starts = sorted(st.offset for st in words.statements)
    real = [n for n, (a, _) in enumerate(words.functions[:MAX_FUNCTIONS + 1])
            if (k := bisect_left(starts, a)) < len(starts) and
            (text[a:starts[k]].strip() in ("", "function") or _HEADER.fullmatch(text, a, starts[k]))]
    spans = [words.functions[n] for n in real]
    names = [words.names[n] for n in real]
    inside = _holder(spans)
    stop: tuple[int, int, str] | None = None
    dynamic = False
    for st in words.statements:
        if not st.words or st.assign is not None or st.test is not None:
            continue
        first = st.words[0]
        if any(p.var for p in first) and inside(st.offset) is None or \
                any(p.param for p in first):
            dynamic = True          # a command named at run time may be a function
        if stop is None and _ends(st.words, names) and not st.branch and not st.loop and \
                not st.subshell and inside(st.offset) is None and \
                shellfuncs._in_pipeline(text, st.offset) is False and \
                shellfuncs._group_piped(text, st.offset) is False and \
                not _grouped(text, st.offset):
            stop = (st.offset, text.count("\n", 0, st.offset) + 1, literal(first) or "exit")
    never = set() if dynamic or len(spans) > MAX_FUNCTIONS or _DYNAMIC.search(text) else {
        n for n, (name, span) in enumerate(zip(names, spans))
        if not _named_elsewhere(text, name, span, stop[0] if stop else len(text))}

    # a function at the top of the script named like the command, whose body never runs that
    # name (`python() { command python "$@"; }` wraps it: the program may still run)
    shadows = {name: a for name, (a, e) in zip(names, spans)
               if not any(b < a < f for b, f in spans) and (a == 0 or text[a - 1] == "\n")
               and not re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])",
                                 text[text.find(name, a) + len(name):e])}
    heads = sorted((st.offset, literal(st.words[0]) or "") for st in words.statements if st.words)

    def why(offset: int) -> str | None:
        if stop is not None and offset > stop[0]:
            return f"it comes after the `{stop[2]}` at line {stop[1]}: bash never runs it"
        k = bisect_left(heads, (offset, "\U0010ffff")) - 1    # the command the offset is in
        head = heads[k][1] if k >= 0 else None
        if head in shadows and shadows[head] < offset:
            return (f"`{head[:40]}` there is the script's function of that name (line "
                    f"{text.count(chr(10), 0, shadows[head]) + 1}): bash runs it, not the program")
        body = inside(offset)
        if body is not None and body in never:
            return (f"it is in the function {names[body][:60]}, which the script never "
                    "calls")
        return None
    return why


def _ends(words: Sequence[tuple[Part, ...]], names: list[str]) -> bool:
    """``exit`` (bash(1): ends the shell), or ``exec`` with a command (the shell becomes
    that command; ``exec > log`` alone only redirects), neither a function of the script."""
    name = literal(words[0])
    if name in names or name not in ("exit", "exec"):
        return False
    rest = [literal(w) for w in words[1:]]
    while rest and rest[0] in ("-c", "-l", "-cl", "-lc", "-a"):
        rest = rest[2:] if rest[0] == "-a" else rest[1:]
    return name == "exit" or bool(rest)


def _grouped(text: str, offset: int) -> bool:
    """Whether the command at ``offset`` is inside a ``{ ... }`` group run after ``||`` / ``&&``
    (or another compound the statements do not mark): ``mkdir d || {\n  echo e\n  exit 1\n}``
    runs its ``exit`` only when ``mkdir`` fails (Megatron-MoE-ModelZoo sbatch_benchmarking.sh @
    1ed4179: the launch after it was read as never run, shell18); ``{ echo; exit 3; }`` alone
    does end the script. Past the compound words read: True."""
    words = shellfuncs._compounds(text)
    if len(words) > shellfuncs.MAX_COMPOUND:
        return True
    depth = 0
    for start, _, opens in reversed(words[:bisect_left(words, (offset, 0, False))]):
        if not opens:
            depth += 1
        elif depth:
            depth -= 1
        elif text[start] != "{" or _LIST.search(text, max(0, start - 200), start):
            return True
    return False


_LIST = re.compile(r"(?:\|\||&&)[ \t]*(?:\\?\n[ \t]*)*$")
"""``||`` / ``&&`` right before a group's ``{`` (a line break or continuation between)."""


def _holder(spans: list[tuple[int, int]]) -> Callable[[int], int | None]:
    def inside(offset: int) -> int | None:
        best = None
        for n, (a, b) in enumerate(spans):
            if a <= offset < b and (best is None or a >= spans[best][0]):
                best = n
        return best
    return inside


def _named_elsewhere(text: str, name: str, span: tuple[int, int], stop: int) -> bool:
    """Whether ``name`` occurs in ``text`` before ``stop`` (the script's ``exit``) outside its
    own definition (a call, or anything that may be one)."""
    header = text.rfind("\n", 0, span[0]) + 1
    for m in re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])").finditer(text, 0, stop):
        if header <= m.start() < span[1]:
            continue            # its own header line and body (a call of itself)
        return True
    return False
