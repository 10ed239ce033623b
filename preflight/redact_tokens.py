"""Whether a value reads like a generated credential: the token heuristics of
:mod:`preflight.redact` (mixed-case-and-digit words, random-looking base64 runs)."""

from __future__ import annotations

import re

# Keys whose values are commit hashes or versions: long hex there is an identifier, not a secret.
HEX_OK_KEY = re.compile(r"(?i)(?:version|commit|git|sha|hash|digest|build)")


def looks_random(run: str) -> bool:
    """A 32+ character run with upper, lower and digits that is not a path: likely a key."""
    if run.startswith("/") or run.count("/") > 2:
        return False
    return (any(c.isupper() for c in run) and any(c.islower() for c in run)
            and any(c.isdigit() for c in run))


# Words of a single value judged by token_like: runs of token characters. "." ":" "/" "," "="
# "@" and spaces split them, so versions (2.4.0a0+3bcc3cd.nv24.07), paths, lists and
# KEY=VALUE parts are judged piece by piece.
_WORD = re.compile(r"[A-Za-z0-9_+\-]+")
_HEX_WORD = re.compile(r"[0-9a-fA-F]+")


def _char_class(c: str) -> str:
    return "u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else ""


def token_like(word: str) -> bool:
    """True for a 16+ character word that mixes letters and digits like a generated token.

    The decision, and why: a generated credential (base62 / base64 / hex) switches between
    upper case, lower case and digits every two or three characters; names, versions and
    temporary folders do not ("TransformerEngine2": 4 switches in 18 characters,
    "torchelastic_8ulkm2dz": 4 in 20; "Xk9pQ2mZ7rT4vW8yB1nC5q": 20 in 22). So: at least 16
    letters-or-digits (16 base62 characters are ~95 bits), at least two letters and two digits,
    and a class switch for at least every third character. "_" "-" "+" are skipped when
    counting, so "Xk9p_Q2mZ-7rT4..." is judged like "Xk9pQ2mZ7rT4...". Shorter or more regular
    secrets are caught by name (HF_TOKEN ...) or by a known shape (hf_, glpat-, ...), not here.
    """
    classes = [k for k in map(_char_class, word) if k]
    if len(classes) < 16 or classes.count("d") < 2 or len(classes) - classes.count("d") < 2:
        return False
    switches = sum(a != b for a, b in zip(classes, classes[1:]))
    return switches * 3 >= len(classes)


def value_has_token(name: str, value: str) -> bool:
    """Some word of ``value`` is :func:`token_like`.

    Hex words are exempt under a commit / version name, and at 32+ characters everywhere: those
    are the long-hex rule's (masked in place by :meth:`Redactor.text` unless the key says commit
    or version), because a commit hash inside a cache path must not hide the whole path.
    """
    hex_ok = bool(HEX_OK_KEY.search(name))
    return any(token_like(w) and not (_HEX_WORD.fullmatch(w) and (hex_ok or len(w) >= 32))
               for w in _WORD.findall(value))
