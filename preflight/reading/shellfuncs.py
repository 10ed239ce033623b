"""Whether a script's own function runs before its launch command, for what the function
exports (:mod:`.launchenv`): ``setup() { export NVTE_FP8=1; }`` then ``setup`` then
``torchrun train.py`` gives the command ``NVTE_FP8=1``; a function never called, or called only
after the command, gives it nothing.

Until session 38 every ``export`` inside a function was Unknown ("the script may call it
first", redteam7). The calls are read as bash runs them, with the shell kit's statements and
branch decisions (:mod:`.shellwords`, :mod:`.shellexpand`, as :func:`.shellbranch.exports`
reads an export's own branch):

- a call at the top level (or in the function that holds the command, before it) in no
  if/case branch or in one the kit decides runs: the body runs first;
- one in a branch that never runs (``if false``) is no call; one in a branch or loop the kit
  does not decide, or made from inside another function, may run first: Unknown, its line;
- a call in a ``( ... )`` subshell or a pipeline (``setup | tee log``: bash runs each part of
  a pipeline in a subshell, bash(1) "Pipelines") exports nothing to the script; with ``shopt -s
  lastpipe`` somewhere in the text the last part may run in the shell itself: Unknown;
- a function defined twice (bash calls the definition in force at the call) is not decided:
  Unknown. Calls in ``$(...)`` run in a subshell and are not statements here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

MAX_CALLS = 256
"""Calls of the script's own functions kept (a real script makes a handful)."""
_PIPE = re.compile(r"""'[^']*'|"(?:\\.|[^"\\])*"|\\.|\|\||&&|[<>]&|&>|(\|&?)|[;&\n]""", re.S)
"""A lone ``|`` (``|&`` too) outside quotes: a pipeline; ``||``, ``&&`` and redirections are
not; a lone ``&`` after the call runs it in the background, a subshell too (redteam12)."""


@dataclass(frozen=True)
class Call:
    """One call of a script's own function: its name, where, whether it runs (None: not
    decided here) and whether it runs in the script's own shell."""

    name: str
    offset: int
    line: int
    runs: bool | None
    shell: bool | None       # False: a subshell or pipeline part; None: `lastpipe` may apply


@dataclass(frozen=True)
class Functions:
    """The script's function bodies, their names, and its calls of them."""

    spans: tuple[tuple[int, int], ...] = ()
    names: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    decided: bool = True     # False: the script was too large to walk
    unset: frozenset[str] = frozenset()
    """Names an ``unset`` removes somewhere (``unset -f setup``: a later call is "command not
    found", so the function's exports may never run; redfix12)."""

    def holding(self, offset: int) -> int | None:
        """The innermost function body holding ``offset`` (its index), or None."""
        best: int | None = None
        for n, (a, b) in enumerate(self.spans):
            if a <= offset < b and (best is None or a >= self.spans[best][0]):
                best = n
        return best


@dataclass(frozen=True)
class Walked:
    """One walk of a script: its exports (by the offset of their ``NAME[=value]`` word: whether
    they run, their line; :func:`.shellbranch.exports`) and its functions and their calls."""

    exports: dict[int, tuple[bool | None, int]]
    functions: Functions
    offsets: tuple[int, ...] = ()
    """Each statement's offset, in text order."""
    subshells: tuple[tuple[int, ...], ...] = ()
    """The ``( ... )`` subshells each of :attr:`offsets` stands in."""
    inner: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """The statements in a subshell: offset -> its subshells."""

    def reaches(self, export: int, command: int) -> bool:
        """Whether the export at offset ``export`` is in the shell that runs the command at
        ``command``: an export inside a ``( ... )`` (a subshell, or a function whose body is
        one: ``f() ( export X=1 )``) is gone when it closes (bash(1) "Compound Commands";
        redteam12: one spread over lines reached the command)."""
        from bisect import bisect_right

        mine = self.inner.get(export, ())
        if not mine:
            return True
        at = bisect_right(self.offsets, command) - 1
        theirs = self.subshells[at] if at >= 0 else ()
        return theirs[:len(mine)] == mine


@lru_cache(maxsize=8)
def walk(text: str, known: tuple[tuple[str, str], ...]) -> Walked:
    """The exports and the function calls of ``text``, branches decided with ``known``: one walk
    with the shell kit's evaluator (a script the kit finds too large: no export decided, no
    call known, so every export in a function is Unknown)."""
    from bisect import bisect_left

    from preflight.reading.shellexpand import Eval, TooLarge
    from preflight.reading.shellwords import split

    words = split(text)
    names = tuple(words.names)
    starts = [st.offset for st in words.statements]
    ordered = sorted(starts)
    # the statement each `f() {` / `function f {` header is (the definition, not a call)
    headers = set()
    for a, _ in words.functions:
        k = bisect_left(ordered, a)
        if k < len(ordered) and text[a:ordered[k]].strip() in ("", "function"):
            headers.add(ordered[k])
    calls: list[Call] = []
    unset: set[str] = set()
    exports: dict[int, tuple[bool | None, int]] = {}
    ev = Eval(dict(known))
    lastpipe = "lastpipe" in text
    order = sorted((st.offset, st.subshell) for st in words.statements)
    where = (tuple(o for o, _ in order), tuple(sub for _, sub in order),
             {o: sub for o, sub in order if sub})
    try:
        ev.prepare(words)
        for st in words.statements:
            got = [ev.runs.get(b) for b in st.branch]
            runs = False if False in got else True if all(g is True for g in got) else None
            if st.exported:
                exports[st.offset] = (runs, text.count("\n", 0, st.offset) + 1)
            ev.step(st)
            if not names or st.assign is not None or st.test is not None or not st.words or \
                    len(calls) >= MAX_CALLS or st.offset in headers or \
                    any(p.var or p.quoted for p in st.words[0]):
                continue
            first = "".join(p.text for p in st.words[0])
            if first == "unset":
                unset.update("".join(p.text for p in w) for w in st.words[1:]
                             if not any(p.var for p in w))
            if first not in names:
                continue
            # ev.step may decide a branch only now (an `if` test): read them again
            got = [ev.runs.get(b) for b in st.branch]
            runs = False if False in got else True if all(g is True for g in got) else None
            shell: bool | None = False if st.subshell else True
            piped = _in_pipeline(text, st.offset) if shell else False
            if piped is False:
                piped = _group_piped(text, st.offset)
            if piped is None:
                shell = None                 # a line too long to read around the call
            elif piped:
                shell = None if lastpipe else False
            calls.append(Call(first, st.offset, text.count("\n", 0, st.offset) + 1, runs, shell))
    except TooLarge:
        return Walked({}, Functions(tuple(words.functions), names, (), decided=False),
                      *where)
    if words.unclosed is not None:
        # an `if` / `{` never closed: bash refuses the script from there (syntax error at the
        # end), so an export after it is not known to run (redteam12: an unclosed function
        # body's export reached the command); the job itself gets its finding (jobs/scripts)
        exports = {o: (None if o >= words.unclosed else r, line)
                   for o, (r, line) in exports.items()}
    return Walked(exports, Functions(tuple(words.functions), names, tuple(calls),
                                     unset=frozenset(unset)), *where)


def functions(text: str, known: tuple[tuple[str, str], ...]) -> Functions:
    """The functions of ``text`` and its calls of them (:func:`walk`)."""
    return walk(text, known).functions


MAX_LINE = 4096
"""Characters read around a call to tell whether it is part of a pipeline (past them: not
decided, so what the function exports is Unknown)."""


def _in_pipeline(text: str, offset: int) -> bool | None:
    """Whether the simple command at ``offset`` is a part of a pipeline (a lone ``|`` joins it
    to the command before or after it on its logical line); None: its line is too long."""
    start = max(text.rfind("\n", max(0, offset - MAX_LINE), offset), -1) + 1
    while start > 1 and text[start - 2] == "\\":            # a continued line
        start = max(text.rfind("\n", max(0, offset - MAX_LINE), start - 1), -1) + 1
    if offset - start >= MAX_LINE or start == 0 and offset >= MAX_LINE:
        return None
    before_pipe = False
    for m in _PIPE.finditer(text, start, min(len(text), offset + MAX_LINE)):
        if m.start() >= offset:
            if m.group(1) is not None or m.group(0) == "&":
                return True                                  # `f | tee log`, `f &`
            if m.group(0) in (";", "\n", "||") or m.group(0).startswith("&"):
                return before_pipe
            continue
        if m.group(1) is not None:
            before_pipe = True                               # `cat x | f`
        elif m.group(0) in (";", "&", "\n", "||", "&&"):
            before_pipe = False
    return before_pipe if len(text) <= offset + MAX_LINE else None


_COMPOUND = re.compile(
    r"""'[^']*'|"(?:\\.|[^"\\])*"|\\.|(?:^|(?<=[;&|(\n{}])|(?<=\bthen)|(?<=\bdo)|(?<=\belse))"""
    r"""[ \t]*(\{|\}|if|fi|case|esac|for|while|until|select|done)(?=[\s;&|)<>]|$)""", re.M)
"""A compound command's opening or closing word in command position (quotes skipped)."""
_OPEN = frozenset({"{", "if", "case", "for", "while", "until", "select"})
_AFTER = re.compile(r"[ \t]*(?:\d*[<>]{1,2}&?[ \t]*[^\s;&|<>]+[ \t]*)*(\|(?!\|)|&(?![&>]))")
_BEFORE = re.compile(r"(?<!\|)\|&?[ \t]*(?:\\\n[ \t]*)?$")
MAX_COMPOUND = 20000
"""Compound words read per script to place a call in ``{ ...; } | tee`` (past them: Unknown)."""


@lru_cache(maxsize=8)
def _compounds(text: str) -> tuple[tuple[int, int, bool], ...]:
    """(start, end, opens) of each compound word of ``text``, at most MAX_COMPOUND + 1."""
    out: list[tuple[int, int, bool]] = []
    for m in _COMPOUND.finditer(text):
        if m.group(1) is not None:
            out.append((m.start(1), m.end(1), m.group(1) in _OPEN))
            if len(out) > MAX_COMPOUND:
                break
    return tuple(out)


def _group_piped(text: str, offset: int) -> bool | None:
    """Whether a compound command holding the call at ``offset`` (``{ setup; } | tee log``,
    ``cat x | while read l; do setup; done``, ``if ..; fi &``) is a pipeline part or runs in
    the background: bash runs it in a subshell (bash(1) "Pipelines"; redteam12)."""
    from bisect import bisect_left

    words = _compounds(text)
    if len(words) > MAX_COMPOUND:
        return None
    k = bisect_left(words, (offset, 0, False))
    depth = 0
    for start, end, opens in words[k:]:          # the closers of the compounds around it
        if opens:
            depth += 1
        elif depth:
            depth -= 1
        elif _AFTER.match(text, end):
            return True
    depth = 0
    for start, _, opens in reversed(words[:k]):   # their openers
        if not opens:
            depth += 1
        elif depth:
            depth -= 1
        elif _BEFORE.search(text, max(0, start - 200), start):
            return True
    return False


def runs_before(funcs: Functions, body: int, command: int) -> tuple[bool | None, str, int]:
    """Whether function ``body`` (its index) runs before the command at offset ``command``:
    True, False (never called before it), None (may: the reason, with the call's line); and
    where it runs in the script's order (its first call that surely runs; -1: none, or the
    command is in the body itself, where the export's own place is its order)."""
    a, b = funcs.spans[body]
    if a <= command < b:
        return True, "", -1      # the command is in the body itself, after the export
    name = funcs.names[body]
    if not funcs.decided:
        return None, f"the function {name[:40]} may be called before the command", -1
    if funcs.names.count(name) > 1:
        return None, f"the function {name[:40]} is defined more than once", -1
    if name in funcs.unset:
        return None, f"the function {name[:40]} is removed by an `unset` in the script", -1
    host = funcs.holding(command)
    found: list[tuple[bool | None, str, int]] = []
    for call in (c for c in funcs.calls if c.name == name):
        caller = funcs.holding(call.offset)
        where = f"the function {name[:40]}, called at line {call.line}"
        if caller == body:
            continue             # a call of itself runs only once it runs
        if caller is None and call.offset < a:
            continue             # before its definition: bash says "command not found"
        if caller is not None and caller != host:
            found.append((None, f"{where} from inside another function", -1))
        elif call.offset >= command:
            if host is not None and caller is None:
                # the command is in a function the script may call after this call
                found.append((None, f"{where}, before the function that runs the command "
                                    "may be called", -1))
        elif call.runs is False or call.shell is False:
            continue             # a branch that never runs; a subshell or pipeline part
        elif call.runs is None:
            found.append((None, f"{where} in an if/case branch or loop that may not run", -1))
        elif call.shell is None:
            found.append((None, f"{where} in a pipeline (`shopt -s lastpipe` may keep it in "
                                "the shell)", -1))
        else:
            found.append((True, "", call.offset))
    sure = [at for r, _, at in found if r is True]
    if sure:
        return True, "", min(sure)
    if found:
        return None, found[0][1], -1
    return False, "", -1
