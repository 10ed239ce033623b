"""Markdown that shows text from outside as text: no links, images or HTML it did not intend.

Why (issue 21 item 5): a rule pack's title or reference URL (``](javascript:alert(1))``,
``<img src=x onerror=...>``) and a config value reached the Markdown support report as live
Markdown: a clickable ``javascript:`` link, HTML with an event handler. Renderers of GitHub,
GitLab and IDE previews differ in what they sanitise; the report must not depend on it.

- Prose (:func:`md_text`): outside code spans, ``\\ [ ] < &`` are escaped, so no link,
  image, autolink, HTML tag or entity can form (``>`` alone opens none and stays readable);
  code spans (text between matching backtick runs, which rules use for commands) are kept,
  since CommonMark shows their content literally.
- One-line contexts (:func:`md_inline`: headings, list items) flatten newlines first, so a
  value cannot start a heading, a quote or an HTML block of its own; table cells
  (:func:`md_cell`) also escape ``|``.
- Links (:func:`md_link`): only ``http`` and ``https`` URLs become links, their ``(`` ``)``
  and blanks percent-encoded; anything else is shown as code.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"[\\\[\]<&]")
_TICKS = re.compile(r"`+")
_HTTP = re.compile(r"^https?://[^\s<>\"'`\\]+$", re.IGNORECASE)


def _escape_plain(text: str) -> str:
    return _SPECIAL.sub(lambda m: "&amp;" if m.group(0) == "&" else "\\" + m.group(0), text)


def md_text(text: str) -> str:
    """Prose for a Markdown paragraph: literal outside code spans, code spans kept."""
    out: list[str] = []
    pos = 0
    while True:
        opening = _TICKS.search(text, pos)
        if opening is None:
            break
        # A code span ends at the next backtick run of the same length (CommonMark 6.1).
        closing = next((m for m in _TICKS.finditer(text, opening.end())
                        if len(m.group(0)) == len(opening.group(0))), None)
        if closing is None:
            break   # an unmatched run is literal text: escaped like the rest
        out += [_escape_plain(text[pos:opening.start()]), text[opening.start():closing.end()]]
        pos = closing.end()
    out.append(_escape_plain(text[pos:]).replace("`", "\\`"))
    return "".join(out)


def md_inline(text: str) -> str:
    """:func:`md_text` on one line (headings, list items, emphasis)."""
    return md_text(" ".join(text.split("\n")))


def md_cell(text: str) -> str:
    """A table cell: one line, ``|`` escaped (also inside code spans, as GFM tables require)."""
    return md_inline(text).replace("|", "\\|")


def md_code(text: str, *, table: bool = False) -> str:
    """Inline code that survives backticks inside the value; ``table``: ``|`` escaped too."""
    text = " ".join(text.split("\n"))
    longest = max((len(m.group(0)) for m in _TICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    code = f"{fence}{pad}{text}{pad}{fence}"
    return code.replace("|", "\\|") if table else code


def md_link(label: str, url: str) -> str:
    """``[label](url)`` for an http(s) URL; ``label: `url``` (no link) for anything else."""
    if _HTTP.match(url):
        dest = url.replace("(", "%28").replace(")", "%29")
        return f"[{md_inline(label)}]({dest})"
    return f"{md_inline(label)}: {md_code(url)}"


def md_fence(lines: list[str], info: str = "text") -> list[str]:
    """A fenced code block that no line of ``lines`` can close (a longer fence than any run of
    backticks or tildes in them)."""
    longest = max((len(m.group(0)) for line in lines for m in re.finditer(r"`+|~+", line)),
                  default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *lines, fence]
