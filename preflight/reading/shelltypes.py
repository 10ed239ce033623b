"""The pieces a launch script is split into (:mod:`.shellwords`): parts of words, statements."""

from __future__ import annotations

from dataclasses import dataclass, field

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


Word = tuple[Part, ...]


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
    patterns: tuple[Word, ...] | None = None
    """A ``case`` arm's test: its patterns (``a|b)``), matched against ``words[0]`` (the
    subject of ``case WORD in``) as bash matches them."""
    prefix: bool = False           # ``NAME=value cmd``: in that command's environment only
    exported: bool = False         # ``export NAME=value`` / ``export NAME`` (``words``: NAME)
    subshell: tuple[int, ...] = ()  # the ``( ... )`` it stands in: its ``cd``, ``exit`` stay there


@dataclass
class Split:
    statements: list[Statement] = field(default_factory=list)
    truncated_at: int | None = None     # offset where splitting stopped (budget spent)
