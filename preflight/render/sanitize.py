"""Control characters out of every output: the one pass all renderers share (issue 13, item 6).

Text that came from outside (a config value or key, a file name, a GPU name, a package's version
string, a smoke child's error) can hold ESC / CSI / OSC / CR / BEL ... sequences: printed raw they
rewrite the lines above them, retitle the terminal or hide a finding, in the text report and in
a Markdown report viewed with ``cat``. :func:`clean_document` rewrites every string (keys too) of
the report document before any renderer sees it, so every format gets the same, visible
escapes; renderers need no care of their own.

What is escaped, shown as ``\\xNN`` / ``\\uNNNN`` (a visible, unambiguous stand-in, which is also
how Python would print it):

- C0 controls except ``\\n`` and ``\\t`` (so ESC, CR, BEL, BS, NUL, VT, FF), and DEL;
- C1 controls U+0080-U+009F (U+009B is a one-character CSI on many terminals; JSON with
  ``ensure_ascii=False`` leaves them raw);
- Unicode bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) and U+2028 /
  U+2029 line and paragraph separators: they reorder or break what a reviewer sees ("Trojan
  Source", CVE-2021-42574);
- lone surrogates U+D800-U+DFFF (a JSON config's ``"\\ud800"``, a file name that is not UTF-8):
  no UTF-8 writer takes them (red team: ``-o`` of a JSON or Markdown report was an internal error,
  stdout showed ``?``).

Non-finite numbers (a config's ``.nan``, a snapshot's ``NaN`` or a 400-digit float read as
``inf``) become the strings ``"nan"`` / ``"inf"`` / ``"-inf"``: Python's json writes them as bare
``NaN`` / ``Infinity``, which no strict JSON reader (jq, JavaScript, SARIF viewers) accepts.

Rich markup needs no escaping here: the text renderer builds ``rich.text.Text`` objects with
``markup=False``, so ``[bold red]`` in a value is printed as written (a test holds it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                      "\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def clean_text(value: str) -> str:
    """``value`` with every control character but ``\\n`` and ``\\t`` shown as an escape."""
    return _CONTROL.sub(_escape, value) if _CONTROL.search(value) else value


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)   # "nan", "inf", "-inf"
    return value


def _finite(value: Any) -> Any:
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def clean_document(doc: Any) -> Any:
    """A copy of a JSON-like document with :func:`clean_text` applied to every string, keys
    included, and non-finite floats as strings."""
    return _rebuild(doc, _scalar)


def finite_document(doc: Any) -> Any:
    """A copy of a JSON-like document with non-finite floats as strings (snapshots: their
    strings are data for replay and stay as they were)."""
    return _rebuild(doc, _finite)


def _rebuild(doc: Any, leaf: Callable[[Any], Any]) -> Any:
    """``doc`` rebuilt with ``leaf`` applied to every scalar and string key. Iterative, so a
    document nested as deep as the readers allow cannot overflow the stack here."""
    root: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(doc, root, 0)]   # (value, container, slot)
    while todo:
        value, parent, slot = todo.pop()
        if isinstance(value, dict):
            new: dict[Any, Any] = {}
            for k, v in value.items():
                key = leaf(k) if isinstance(k, str) else k
                new[key] = None
                todo.append((v, new, key))
            parent[slot] = new
        elif isinstance(value, (list, tuple)):
            items: list[Any] = [None] * len(value)
            todo.extend((v, items, i) for i, v in enumerate(value))
            parent[slot] = items
        else:
            parent[slot] = leaf(value)
    return root[0]
