"""Digits that ``int()`` takes: the one test for "is this text a number" before converting it.

``str.isdigit()`` is true for characters ``int()`` refuses: superscripts and other digits of
Unicode's "No" category (``"²".isdigit()`` is true, ``int("²")`` raises ValueError), so a check
that tested ``isdigit()`` and then called ``int()`` ended with an internal error on a hostile
value (``COLUMNS=²`` stopped every command, a job's ``${²}`` or a dataclass default read from the
environment as ``"²"``). ``int()`` also refuses more than 4,300 digits (CPython's
``sys.get_int_max_str_digits``). :func:`ascii_int` asks for ASCII digits and a bounded length;
``tests/test_lint.py`` keeps ``.isdigit()`` out of the package except here.
"""

from __future__ import annotations

MAX_DIGITS = 18
"""More digits than any count, size or index a job or a host can mean (2**63 has 19)."""


def ascii_digits(text: str) -> bool:
    """True when ``text`` is one or more ASCII digits and nothing else (no sign, no space)."""
    return text.isascii() and text.isdigit()


def ascii_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """``int(text)`` when ``text`` is ASCII digits only, at most ``max_digits`` of them
    (leading zeros not counted); None otherwise."""
    if not ascii_digits(text) or len(text.lstrip("0")) > max_digits:
        return None
    # int() counts leading zeros against its 4,300-digit limit: COLUMNS=000...080 (5,000
    # zeros) ended every command with an internal error (redteam11)
    return int(text.lstrip("0") or "0")


ARGPARSE_INT_CHARS = 40
"""Longest text :func:`argparse_int` converts (no count or size a launcher takes is longer)."""


def argparse_int(text: str) -> int | None:
    """What argparse's ``type=int`` makes of ``text``: ``int(text)`` (a sign, ``_`` between
    digits, spaces around and other scripts' decimal digits included), or None where ``int()``
    refuses it (``"²"``, ``"8x"``) or the text is longer than :data:`ARGPARSE_INT_CHARS`."""
    if len(text) > ARGPARSE_INT_CHARS:
        return None
    try:
        return int(text)
    except ValueError:
        return None
