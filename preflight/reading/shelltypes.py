"""The pieces a launch script is split into (:mod:`.shellwords`): parts of words, statements."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from preflight.base.digits import ascii_int

MAX_PARTS = 200_000
"""Parts (literal pieces and references) split from one script: a real launch script has a few
thousand; each one costs time to expand and read."""


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, or a reference to a variable."""

    text: str                      # the literal text, or the variable's name
    offset: int                    # where it starts in the script
    var: bool = False              # ``$NAME`` / ``${NAME...}``
    default: str | None = None     # ``${NAME:-default}`` / ``${NAME-default}``
    default_parts: tuple[Part, ...] = ()   # the default's own parts (``${A:-${B}/x}``)
    array: bool = False            # ``${NAME[@]}`` / ``${NAME[*]}``: every element
    quoted: bool = False           # inside "...": no word splitting when expanded
    opaque: str | None = None      # a value decided at run time (``$(...)``, ``$1``): why
    param: str | None = None       # a positional parameter: ``@``, ``*``, ``#`` or its number
                                   # (``$1``, ``${12}``); ``opaque`` says why when no caller
                                   # gives the script its arguments (reading/shellargs.py)
    span: tuple[int, int | None] | None = None   # ``${@:2}`` / ``${@:2:3}``: offset, length
    unset_only: bool = False       # ``${1-default}``: only an unset parameter takes the default
    folder: tuple[str, tuple[Part, ...]] | None = None   # ``$(dirname W)``, ``$(cd W && pwd)``,
                                   # ``$0``: the script's own folder (reading/shelldir.py)
    op: tuple[str, str, str, str] | None = None   # ``${NAME%.sh}``, ``${NAME/a/b}``: name,
                                   # operator, pattern, replacement (reading/shellparam.py);
                                   # ``opaque`` says why where the value is not known


Word = tuple[Part, ...]


@dataclass(frozen=True)
class Arg:
    """One argument of the launch command."""

    text: str                       # quotes removed, variables substituted
    offset: int                     # where its first character is written in the script
    opaque: str | None = None       # why its value is not known here (then ``text`` is as written)
    conditional: int | None = None  # offset of the assignment, when made in another if/case branch


@dataclass(frozen=True)
class Seg:
    """A piece of an expanded word (:mod:`.shellexpand`): its text, where it is written, the
    if/case branches it was set in, and why its value is not known here (``opaque``)."""

    text: str
    offset: int
    branch: tuple[int, ...]
    opaque: str | None = None
    loose: bool = False     # an unquoted run-time value: bash splits it into any number of words


Field = list[Seg]


@dataclass(frozen=True)
class Statement:
    """One simple command, or one assignment (its value words in ``words``)."""

    words: tuple[Word, ...]
    offset: int
    branch: tuple[int, ...]        # the ``if``/``case`` branches it stands in, outermost first
    assign: str | None = None      # the variable assigned
    append: bool = False           # ``+=``
    array: bool = False            # ``NAME=( ... )``
    test: tuple[int, tuple[int, ...]] | None = None
    """An ``if`` / ``elif`` / ``else`` opening branch ``test[0]``: its condition words are
    ``words`` (none for ``else``); ``test[1]`` are the branches of the same ``if`` before it
    (a branch runs only if none of them did)."""
    chain: tuple[tuple[str, tuple[Word, ...]], ...] = ()
    """More of an ``if`` test: ``[ A ] && [ B ] || [ C ]`` is ``words`` A, then (operator,
    words) per command joined to it (:mod:`.shellchain`)."""
    patterns: tuple[Word, ...] | None = None
    """A ``case`` arm's test: its patterns (``a|b)``), matched against ``words[0]`` (the
    subject of ``case WORD in``) as bash matches them."""
    prefix: bool = False           # ``NAME=value cmd``: in that command's environment only
    exported: bool = False         # ``export NAME=value`` / ``export NAME`` (``words``: NAME)
    unexported: bool = False       # ``export -n NAME[=value]``, ``declare +x``: exported no more
    subshell: tuple[int, ...] = ()  # the ``( ... )`` it stands in: its ``cd``, ``exit`` stay there
    loop: bool = False             # in a ``while`` / ``until`` / ``for`` body: runs 0..n times
    loop_test: str | None = None
    """``while`` / ``until`` / ``for``: the test opens a loop's body, not an ``if`` branch
    (``for``: ``words`` is the list it goes over; :mod:`.shellloops`)."""
    background: bool = False       # ended by `&`: it runs alongside what follows
    element: int | None = None     # ``NAME[i]=v``: the index (-1: not known here)
    writes: tuple[tuple[Word, bool | None], ...] = ()
    """Files its standard output goes to (``> f``, ``>> f``: True, ``&> f``), in order
    (:mod:`.shellfiles`); None: another descriptor's (``2> f``, ``exec 3> f``), its content
    not known here."""


@dataclass
class Split:
    statements: list[Statement] = field(default_factory=list)
    truncated_at: int | None = None     # offset where splitting stopped (budget spent)
    functions: list[tuple[int, int]] = field(default_factory=list)
    """Extents of the function bodies (``f() { ... }``): their ``$1`` / ``"$@"`` / ``shift``
    are the function's own positional parameters, not the script's."""
    names: list[str] = field(default_factory=list)     # the name of each function
    text: str = ""                      # the text split (offsets are into it)
    unclosed: int | None = None
    """Offset of an ``if`` / ``case`` / ``while`` / ``until`` / ``for`` / ``select`` never
    closed (no ``fi`` / ``esac`` / ``done`` before the end), or of a ``fi`` / ``esac`` /
    ``done`` that closes nothing open of its kind: bash refuses the whole script."""


ASSIGN = re.compile(r"([A-Za-z_]\w*)(\+?)=")


def literal(word: Word) -> str | None:
    """The word's text when it is all literal and unquoted (a keyword candidate)."""
    if all(not p.var and not p.quoted for p in word):
        return "".join(p.text for p in word)
    return None


def assignment(word: Word) -> tuple[str, bool, Word] | None:
    """``NAME=value`` / ``NAME+=value``: (name, append, the value's parts)."""
    first = word[0]
    if first.var or first.quoted:
        return None
    m = ASSIGN.match(first.text)
    if not m:
        return None
    rest = first.text[m.end():]
    value = ((Part(rest, first.offset + m.end()),) if rest else ()) + word[1:]
    return m.group(1), bool(m.group(2)), value


ELEMENT = re.compile(r"([A-Za-z_]\w*)\[")


def element(word: Word) -> tuple[str, int, bool, Word] | None:
    """``NAME[i]=value`` / ``NAME[i]+=value``: (name, the index or -1 where it is not a
    literal number, append, the value's parts)."""
    first = word[0]
    m = None if first.var or first.quoted else ELEMENT.match(first.text)
    if m is None:
        return None
    index, parts, known = first.text[m.end():], 1, True
    while True:
        end = index.find("]")
        if end >= 0:
            break
        if parts >= len(word) or word[parts].quoted and not word[parts].var:
            return None
        known = known and not word[parts].var
        index += word[parts].text if not word[parts].var else "$"
        parts += 1
    tail = index[end + 1:]
    append = tail.startswith("+=")
    if not (append or tail.startswith("=")):
        return None
    rest = tail[2 if append else 1:]
    last = word[parts - 1]
    value = ((Part(rest, last.offset + len(last.text) - len(rest)),) if rest else ()) + \
        word[parts:]
    at = ascii_int(index[:end]) if known else None
    return m.group(1), -1 if at is None else at, append, value
