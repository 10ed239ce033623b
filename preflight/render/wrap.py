"""Word wrapping for the text report that never breaks a word: URLs, paths and "(SOURCE ...)"
stay whole, and prose is capped at a readable width.

Why (issue 24 item 5): rich folds a word longer than the space left (at 80 columns a
site-packages path or a URL came out split mid-word, and could not be copied or clicked), and
prose ran the full width of a 200-column terminal. Here a line breaks only at whitespace; a word
longer than the line gets a line of its own and runs past the width (the terminal may wrap it
visually, but no newline is put inside it). Lines are printed with ``soft_wrap=True`` so rich
adds no break of its own. Styles survive: a ``rich.text.Text`` is cut at the chosen offsets.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

PROSE_WIDTH = 100
"""The widest prose line, whatever the terminal (about what a reader takes in at once)."""
_WORD = re.compile(r"\S+")


def prose_width(width: int) -> int:
    """The wrapping width for a terminal of ``width`` columns: at most :data:`PROSE_WIDTH`."""
    return min(int(width), PROSE_WIDTH)


def wrap(text: Text | str, width: int) -> list[Text]:
    """``text`` cut into lines of at most ``width`` cells at whitespace (a longer word alone on
    its line); newlines in ``text`` are kept; each line's edge blanks dropped."""
    text = Text(text) if isinstance(text, str) else text
    plain = text.plain
    width = max(1, width)
    lines: list[Text] = []
    offset = 0
    for para in plain.split("\n"):
        start = end = None
        for m in _WORD.finditer(para):
            if start is not None and end is not None and m.end() - start > width:
                lines.append(text[offset + start:offset + end])
                start = None
            if start is None:
                start = m.start()
            end = m.end()
        lines.append(text[offset + start:offset + end] if start is not None and end is not None
                     else Text(""))
        offset += len(para) + 1
    return lines


def print_wrapped(console: Console, text: Text | str, indent: int = 0, *,
                  first: Text | str | None = None, hang: int | None = None,
                  width: int | None = None) -> None:
    """Print ``text`` wrapped to the prose width, ``indent`` columns in.

    ``first``: a prefix on the first line only (a mark, "fix: "), padded to ``hang``;
    continuation lines are indented by ``hang`` more columns (default: the prefix's length), a
    hanging indent.
    """
    prefix = Text(first) if isinstance(first, str) else first
    lead = len(prefix.plain) if prefix is not None else 0
    hang = lead if hang is None else hang
    room = prose_width(width or console.width) - indent - hang
    for i, line in enumerate(wrap(text, room)):
        if i == 0:
            head = Text.assemble(" " * indent, prefix, " " * (hang - lead)) \
                if prefix is not None else Text(" " * indent)
        else:
            head = Text(" " * (indent + hang))
        console.print(Text.assemble(head, line), soft_wrap=True)
