"""Variables a script sets from its own arguments: ``bash train.sh TE_FP8=1 TP=8`` where the
script's loop over ``"$@"`` exports each ``KEY=value`` word before its ``${TE_FP8:-0}`` lines.

holdout22 (ROCm/Megatron-LM examples/llama/train_llama3.sh @ 32d5d428, lines 9-17,
https://github.com/ROCm/Megatron-LM/blob/32d5d428a90abab0583999bdbc85bd653332ce26/examples/llama/train_llama3.sh)::

    for ARGUMENT in "$@"; do
       KEY=$(echo $ARGUMENT | cut -f1 -d=)
       KEY_LENGTH=${#KEY}
       VALUE="${ARGUMENT:$KEY_LENGTH+1}"
       export "$KEY"="$VALUE"
    done

was read with the defaults (``TE_FP8=0``): a confident FP8 "no" for a tensorwise FP8 run. The
forms read here (:func:`writers`): ``export "$A"`` / ``declare "$A"`` / ``eval "$A"`` of the
loop word itself (bash assigns a ``NAME=value`` word), ``KEY`` and ``VALUE`` cut from the word
(``cut -f1 -d=``, ``${A%%=*}``, ``awk -F=``, ``IFS='=' read -r K V <<< "$A"``; ``${A:$LEN+1}``,
``${A#*=}``, ``cut -f2``) then written by ``export "$K"="$V"``, ``declare``, ``printf -v``,
``eval``; ``export "$@"``; a ``while [ $# -gt 0 ]`` loop over ``$1`` with ``shift``. Each word
is applied as bash applies it (a word that is no ``NAME=value`` sets nothing), the values
written in after the loop's ``done`` (:mod:`.shellbind`). A write this module cannot decide (a
name computed otherwise, a test in the loop other than ``*=*``, words not known here, no
caller in the job) makes what it may write a run-time value (Unknown), never the default; so
does a loop whose words are not the caller's where it runs (redteam16: one in a subshell -- ``( for
...)``, ``$(for ...)``, ``done | tee log``, ``done &`` -- or after a ``shift`` / ``set -- ...`` of
the script's arguments; a ``while [ $# -gt 0 ]`` loop that moves otherwise than by one ``shift``).
Bounded: one pass of regular expressions without nested repetition over at most 1 MiB.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from preflight.reading.shellargs import Given
from preflight.reading.shellvars import strip_comments

if TYPE_CHECKING:
    from preflight.reading.shellbind import Bound

MAX_CHARS = 1 << 20
"""Characters of a script scanned (the read limit of a file is 1 MiB)."""

MAX_LOOPS = 16
"""Argument loops read in one script (a real one has one)."""

MAX_NAMES = 2048
"""Names made Unknown after a loop this module cannot decide (past it: a cut)."""

_NAME = re.compile(r"[A-Za-z_]\w*")
_V = r'"?\$\{?(\w+)\}?"?'                      # "$X", $X, "${X}", ${X}
_HEAD = re.compile(
    r'(?:^|[;&(]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:'
    r'for[ \t]+(\w+)[ \t]+in[ \t]+"?\$(?:@|\*|\{@\}|\{\*\})"?[ \t]*(?:;|\n|(?=do\b))|'
    r'for[ \t]+(\w+)[ \t]*(?:;|\n|(?=do\b))|'
    r'(?:while|until)[ \t]+([^\n;]*\$\{?#[^\n;]*)(?:;|\n))', re.M)
_KEYWORD = re.compile(r"(?<![\w$.\-/])(for|while|until|select|done)(?![\w.\-/=])")
_DECL = r"(?:export|declare|typeset|local|readonly)(?:[ \t]+[-+][A-Za-z]+)*[ \t]+"
_WRITE = re.compile(
    rf"(?:^|[;&|(){{]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:{_DECL}|eval[ \t]+(?:{_DECL})?|"
    r"printf[ \t]+-v[ \t]*)([^\n;&|]*)", re.M)
_WHOLE = re.compile(rf"{_V}[ \t]*$")
_SPLIT = re.compile(r'"?\$\{?(\w+)\}?"?=\\?"?\$\{?(\w+)\}?(?:\\?")?"?[ \t]*$')
_PRINTF = re.compile(rf"""{_V}[ \t]+(?:'%s'|"%s"|%s)[ \t]+{_V}[ \t]*$""")
_READ = re.compile(r"""IFS=['"]?=['"]?[ \t]+read(?:[ \t]+-r)?[ \t]+(\w+)[ \t]+(\w+)[ \t]*<<<[ \t]*"""
                   + _V)
_TESTS = re.compile(r"\b(?:if|case|elif|break|continue|exit|return|test)\b|&&|\|\||\[")
_EQ_GUARD = re.compile(r'\*=\*\)|==?[ \t]*"?\*=\*"?[ \t]*\]\]')
_PLAIN = re.compile(r"[\w./:,+@%=-]*")
_USES = re.compile(r"\$\{?([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Written:
    """What one argument loop (or ``export "$@"``) writes, to go in after its ``done`` line."""

    line: int                               # the script's line of the loop (or write)
    end: int                                # the script's line after which it takes effect
    form: str                               # the write as written, for the note
    values: tuple[tuple[str, str, str], ...] = ()   # (name, value, where the word is written)
    unknown: tuple[str, ...] = ()           # names whose value is not known here
    why: str = ""                           # why those are not known
    export: bool = True                     # export / declare -x, else a shell variable
    cut: bool = False                       # more names than MAX_NAMES may be written

    def lines(self) -> list[tuple[str, int | str]]:
        """The lines to write in after :attr:`end`, each with where it comes from."""
        word = "export " if self.export else ""
        got: list[tuple[str, int | str]] = [
            (f"{word}{name}={shlex.quote(value)}\n", where) for name, value, where in self.values]
        got += [(f'{word}{name}="$(the-argument-loop-at-line-{self.line})"\n', self.line)
                for name in self.unknown]
        return got


def writers(text: str, words: list[Given] | str | None) -> list[Written]:
    """What ``text``'s loops over its own arguments write, given the caller's ``words`` (a
    reason: not known; None: no caller in the job)."""
    text = strip_comments(text[:MAX_CHARS])
    if "$" not in text or not _WRITE.search(text):
        return []
    out: list[Written] = []
    for head in _HEAD.finditer(text):
        if len(out) >= MAX_LOOPS:
            break
        var = head.group(1) or head.group(2) or "1"
        done = _done(text, head.end())
        body = text[head.end():done]
        writes = [w for w in _WRITE.finditer(body) if "$" in w.group(1)]
        if not writes:
            continue
        line = text.count("\n", 0, head.start()) + 1 + (text[head.start()] == "\n")
        end = text.count("\n", 0, done) + 1
        why = _FUNCTION if _in_function(text, head.start()) else _elsewhere(
            text, head.start(), head.group(0), done, head.end() + writes[0].start())
        if head.group(3) is not None and not _shifts(body):
            why = "it moves through its words in a way not read here"
        out.append(_loop(text, body, var, writes, words, line, end) if why is None else
                   _everything(text, end, _form_text(writes), why, line))
    for m in re.finditer(rf'(?m)^[ \t]*({_DECL})"?\$(?:@|\{{@\}})"?[ \t]*$', text):
        if len(out) < MAX_LOOPS:        # `export "$@"`: every word, as the loop's `export "$A"`
            line = text.count("\n", 0, m.start()) + 1
            why = _FUNCTION if _in_function(text, m.start()) else _elsewhere(
                text, m.start(), m.group(0), None, m.start(1))
            out.append(_apply(text, m.group(0).strip(), "whole", words, line, line,
                              "export" in m.group(1) or "-x" in m.group(1)) if why is None else
                       _everything(text, line, m.group(0).strip(), why, line))
    return out


_FUNCTION = "it is in a function, whose \"$@\" are the words of the call that runs it"


def _in_function(text: str, at: int) -> bool:
    """Whether offset ``at`` is inside one of the script's function bodies."""
    from preflight.reading.shellwords import split

    return any(a <= at < b for a, b in split(text).functions)


def _elsewhere(text: str, start: int, opener: str, done: int | None, write: int) -> str | None:
    """Why the caller's words are not what the loop at ``start`` (its text ``opener``, the
    ``done`` closing it) writes in the script: it runs
    in a subshell (``( for ...)``, ``$(for ...)``, ``done | tee log``, ``done &``: bash(1)
    "Pipelines", "Command Execution Environment" -- nothing it sets reaches the script), or the
    script's arguments are changed before it (``shift``, ``set -- ...``); None: neither."""
    from preflight.reading.shellfuncs import _group_piped
    from preflight.reading.shellwords import split

    closing = [st for st in split(text).statements if st.offset in (done, write)]
    if opener.lstrip(" \t\n").startswith("(") or _group_piped(text, write) is not False \
            or any(st.subshell for st in closing):
        return "it runs in a subshell (parentheses, a pipeline or the background), whose " \
               "variables never reach the script"
    for m in _MOVES.finditer(text, 0, start):
        if m.group(1) == "shift" or _sets_args(m.group(2) or ""):
            if not _in_function(text, m.start(1)):
                return (f"the script's arguments are changed before it (`{m.group(0).strip()[:40]}`"
                        f", line {text.count(chr(10), 0, m.start(1)) + 1})")
    return None


_MOVES = re.compile(r"(?:^|[;&|(){}]|\bthen\b|\bdo\b|\belse\b)[ \t]*(shift|set)\b([^\n;&|)]*)",
                    re.M)


def _sets_args(rest: str) -> bool:
    """Whether ``set`` with the words ``rest`` sets the positional parameters (``set -- a``,
    ``set a b``, ``set -e x``), not options alone (``set -euo pipefail``, ``set -x``)."""
    words = rest.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--", "-"):
            return True
        if not w.startswith(("-", "+")):
            return True
        i += 2 if w[1:].endswith("o") else 1        # `-o pipefail` / `-eo pipefail`
    return False


def _form_text(writes: list[re.Match[str]]) -> str:
    return " ".join(w.group(0).strip(" \t\n;") for w in writes)[:200]


def _done(text: str, start: int) -> int:
    """Where the ``done`` closing the loop whose body starts at ``start`` is (the text's end
    when none)."""
    depth = 1
    for m in _KEYWORD.finditer(text, start):
        depth += -1 if m.group(1) == "done" else 1
        if depth == 0:
            return m.start()
    return len(text)


def _shifts(body: str) -> bool:
    """A ``while [ $# -gt 0 ]`` body that moves to the next word once per round."""
    return len(re.findall(r"\bshift\b", body)) == 1 and re.search(r"\bshift[ \t]*[;\n]", body) \
        is not None


def _loop(text: str, body: str, var: str, writes: list[re.Match[str]],
          words: list[Given] | str | None, line: int, end: int) -> Written:
    form = _form_text(writes)
    if len(writes) != 1:
        return _everything(text, end, form, "it writes names in several ways", line)
    write = writes[0]
    how = _form(body, write, var)
    if how is None:
        return _everything(text, end, form, "the names it writes are computed in a way not "
                           "read here", line)
    guarded = bool(_TESTS.search(body.replace(write.group(0), "")))
    if guarded and not _EQ_GUARD.search(body):
        how = "guarded:" + how
    exported = not write.group(0).lstrip(" \t;&|(){}").startswith(("eval", "printf", "local")) \
        or "export" in write.group(0) or "-x" in write.group(0)
    return _apply(text, form, how, words, line, end, exported)


def _offset(text: str, end: int) -> int:
    at = 0
    for _ in range(end):
        nxt = text.find("\n", at)
        if nxt < 0:
            return len(text)
        at = nxt + 1
    return at


def _form(body: str, write: re.Match[str], var: str) -> str | None:
    """How a write turns a word into (name, value): ``whole`` / ``eval`` (the word itself),
    ``split:K:V`` with the derivations of K and V from the word; None: not read here."""
    arg = write.group(1).strip()
    is_eval = write.group(0).lstrip(" \t;&|(){}").startswith("eval")
    if (m := _WHOLE.fullmatch(arg)) and m.group(1) == var:
        return "eval" if is_eval else "whole"
    m = _SPLIT.fullmatch(arg) or _PRINTF.fullmatch(arg)
    if m is None:
        return None
    key, value = m.group(1), m.group(2)
    if (r := _READ.search(body)) and (r.group(1), r.group(2), r.group(3)) == (key, value, var):
        return "split:first:slice"
    k, v = _derived(body, key, var, key), _derived(body, value, var, key)
    if k not in ("first", "last") or v is None:
        return None
    return ("eval+" if is_eval else "") + f"split:{k}:{v}"


_CUT = r"\$\((?:echo|printf[ \t]+['\"]?%s(?:\\n)?['\"]?)[ \t]+{v}[ \t]*\|[ \t]*"
_DELIM = r"""-d[ \t]*['"]?=['"]?"""


def _derived(body: str, name: str, var: str, key: str) -> str | None:
    """How ``name`` is computed from the loop word ``var`` in ``body`` (its one assignment):
    first / last / whole (the key), rest / after_last / field2 (the value); None: otherwise."""
    got = re.findall(rf"(?m)(?:^|[;&]|\bdo\b)[ \t]*(?:local[ \t]+)?{name}=([^\n;]*)", body)
    if len(got) != 1:
        return None
    rhs = got[0].strip()
    if rhs[:1] == '"' and rhs[-1:] == '"':
        rhs = rhs[1:-1]
    v = rf'"?\$\{{?{var}\}}?"?'
    cut = _CUT.format(v=v)
    table = [
        (rf"{cut}cut[ \t]+(?:-f[ \t]*1[ \t]+{_DELIM}|{_DELIM}[ \t]+-f[ \t]*1)[ \t]*\)", "first"),
        (rf"{cut}awk[ \t]+-F[ \t]*['\"]?=['\"]?[ \t]+'\{{print \$1\}}'[ \t]*\)", "first"),
        (rf"\$\{{{var}%%=\*\}}", "first"),
        (rf"\$\{{{var}%=\*\}}", "last"),
        (rf"{cut}cut[ \t]+(?:-f[ \t]*2-[ \t]+{_DELIM}|{_DELIM}[ \t]+-f[ \t]*2-)[ \t]*\)", "cutrest"),
        (rf"{cut}cut[ \t]+(?:-f[ \t]*2[ \t]+{_DELIM}|{_DELIM}[ \t]+-f[ \t]*2)[ \t]*\)", "cut2"),
        (rf"{cut}awk[ \t]+-F[ \t]*['\"]?=['\"]?[ \t]+'\{{print \$2\}}'[ \t]*\)", "awk2"),
        (rf"\$\{{{var}#\*=\}}", "hash"),
        (rf"\$\{{{var}##\*=\}}", "after_last"),
        (rf"\$\{{{var}#\$\{{?{key}\}}?=\}}", "hash"),
        (rf"\$\{{{var}:\$?\{{?#?{key}\}}?[ \t]*\+[ \t]*1\}}", "slice"),
    ]
    for pattern, how in table:
        if re.fullmatch(pattern, rhs):
            return how
    m = re.fullmatch(rf"\$\{{{var}:\$?\{{?(\w+)\}}?[ \t]*\+[ \t]*1\}}", rhs)
    if m and _derived_len(body, m.group(1), key):
        return "slice"
    return None


def _derived_len(body: str, name: str, key: str) -> bool:
    """``name`` is ``${#KEY}`` (the ROCm loop's ``KEY_LENGTH=${#KEY}``)."""
    got = re.findall(rf"(?m)(?:^|[;&]|\bdo\b)[ \t]*(?:local[ \t]+)?{name}=([^\n;]*)", body)
    return len(got) == 1 and got[0].strip().strip('"') in (f"${{#{key}}}",)


def _split(word: str, how: str) -> tuple[str, str]:
    """(name, value) a ``split:K:V`` derivation gives for ``word`` (as ``cut`` / bash do)."""
    _, k, v = how.split(":")
    first, eq, rest = word.partition("=")
    name = word if not eq else first if k == "first" else word.rpartition("=")[0]
    field2 = rest.partition("=")[0]
    # (a word without "=": `cut` prints it whole, `${A#*=}` / `${A##*=}` match nothing)
    values = {"slice": rest, "hash": rest if eq else word, "cutrest": rest if eq else word,
              "cut2": field2 if eq else word, "awk2": field2, "after_last": word.rpartition("=")[2]}
    return name, values[v]


def _apply(text: str, form: str, how: str, words: list[Given] | str | None,
           line: int, end: int, exported: bool) -> Written:
    """The names and values the loop writes for ``words``."""
    if words is None or isinstance(words, str):
        why = ("no script read here runs it with arguments" if words is None else
               f"the arguments it is run with are not known here ({words[:200]})")
        return _everything(text, end, form, why, line, exported)
    values: list[tuple[str, str, str]] = []
    unknown: list[str] = []
    guarded = how.startswith("guarded:")
    how = how.removeprefix("guarded:")
    plain_only = how.startswith(("eval+", "eval"))      # eval re-reads the value as shell
    how = how.removeprefix("eval+")
    for w in words:
        if w.loose:
            return _everything(text, end, form, f"a word it is given ({w.where}) is a run-time "
                               "value bash may split into any number of words", line, exported)
        name, value = _split(w.text, how) if how.startswith("split") else (
            w.text.partition("=")[0], w.text.partition("=")[2])
        if how in ("whole", "eval") and "=" not in w.text:
            if how == "eval" and not _PLAIN.fullmatch(w.text):
                return _everything(text, end, form, f"eval runs the word {w.text[:60]!r} "
                                   f"({w.where})", line, exported)
            continue        # `export NAME` / `eval cmd`: no value set here
        if not _NAME.fullmatch(name):
            if w.opaque and "$" in name:
                return _everything(text, end, form, f"a word it is given ({w.where}) is known "
                                   "only at run time", line, exported)
            continue        # bash: "not a valid identifier", nothing set
        if w.opaque or guarded or "\n" in value or "\x00" in value or (
                plain_only and not _PLAIN.fullmatch(value)):     # (one line per value)
            unknown.append(name)
        else:
            values.append((name, value, w.where))
    why = "a test in the loop decides which words it applies" if guarded else \
        "the value is known only at run time"
    return Written(line, end, form, tuple(values), tuple(dict.fromkeys(unknown)), why, exported)


def _everything(text: str, end: int, form: str, why: str, line: int,
                exported: bool = True) -> Written:
    """A loop whose writes are not decided here: every name the script reads after it."""
    after = _offset(text, end)
    names = list(dict.fromkeys(m.group(1) for m in _USES.finditer(text, after)))
    return Written(line, end, form, (), tuple(names[:MAX_NAMES]), why, exported,
                   cut=len(names) > MAX_NAMES)


@dataclass(frozen=True)
class Note:
    """What a loop set, for the reader's note at its line: ``cut`` where it is not known."""

    line: int
    message: str
    cut: bool


def written_in(bound: Bound, text: str, words: list[Given] | str | None) -> Bound:
    """``bound`` (a :class:`.shellbind.Bound` of ``text``) with what ``text``'s argument loops
    write put in after each loop's ``done`` line, every new line coming from the caller's word
    (a value) or the loop (a run-time value), and a note per loop."""
    written = [w for w in writers(text, words) if w.values or w.unknown]
    if not written:
        return bound
    parts = bound.text.split("\n")
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    origin: list[int | str] = list(bound.origin) or list(range(1, len(lines) + 1))
    notes = []
    for w in sorted(written, key=lambda w: w.end, reverse=True):
        at = next((i for i in range(len(origin) - 1, -1, -1) if origin[i] == w.end), None)
        if at is None:
            continue
        new = w.lines()
        lines[at + 1:at + 1] = [t for t, _ in new]
        origin[at + 1:at + 1] = [o for _, o in new]
        notes.append(_note(w))
    return replace(bound, text="".join(lines), origin=tuple(origin),
                   notes=(*bound.notes, *reversed(notes)))


def _note(w: Written) -> Note:
    form = f"`{w.form[:120]}` (line {w.line})"
    if w.unknown:
        names = ", ".join(w.unknown[:8]) + (" ..." if len(w.unknown) > 8 else "")
        return Note(w.line, (f"the script sets variables from its own arguments with {form}, "
                             f"and {w.why}: {names} may be set there and are read as not known"),
                    True)
    names = ", ".join(f"{n}={v[:40]}" for n, v, _ in w.values[:8]) + (
        " ..." if len(w.values) > 8 else "")
    return Note(w.line, f"the script sets variables from its own arguments with {form}: "
                f"{names} (from the words {w.values[0][2]} passes), before its own defaults",
                False)
