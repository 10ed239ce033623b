"""Redaction of a unified diff: what ``fp8-doctor check --diff`` prints.

Why (issue 21 item 5): the diff's context lines are lines of the user's files, printed whole,
so a token on the line next to an edited key (``hub_token: hf_...`` above ``mixed_precision``)
reached stdout, CI logs and pasted patches. :func:`redact_diff` is the one function the diff
writer calls on its output (unless ``--no-redact``).

Each line keeps its diff marker (``' '``, ``'+'``, ``'-'``, ``@@``, ``---`` / ``+++``, ``#``
comments) and has its content redacted like every report: by key where the line is a setting
(``key: value``, ``"key": value``, ``key = value``, ``KEY=value``, ``--flag value``: a value
under a credential's name is masked whole, a commit under a ``commit`` / ``sha`` key kept), by
content everywhere (token shapes, URL credentials, the home directory, host names).

A masked context or removed line no longer matches the file, so ``git apply`` refuses that hunk
instead of applying it: a secret is never printed to make a patch apply. ``--no-redact`` gives
the exact diff.
"""

from __future__ import annotations

import re

from preflight.redact import Redactor, default_redactor

_MARKED = re.compile(r"^(\+\+\+ |--- |@@|[ +\-#])")
# A setting on one line: YAML / JSON / TOML / shell assignment, with its indentation and quotes.
_SETTING = re.compile(r"""^(?P<head>\s*(?:-\s+)?(?:export\s+)?["']?(?P<key>[A-Za-z_][\w.\-]*)["']?"""
                      r"""\s*[:=]\s*)(?P<value>\S.*)$""")


def _content(text: str, redactor: Redactor) -> str:
    setting = _SETTING.match(text)
    if setting and "://" not in setting.group("key"):
        value = redactor.text(setting.group("value"), key=setting.group("key"))
        return setting.group("head") + value
    # Not a setting: by content; long hex runs stay (a --revision commit is no secret, and only
    # a key can tell a hex key from a commit).
    return redactor.text(text, hex_runs=False)


def redact_diff(text: str, *, redactor: Redactor | None = None) -> str:
    """``text``, a unified diff (with ``#`` comment lines), with every line's secrets masked
    and its diff marker kept; see the module doc."""
    redactor = redactor or default_redactor()
    out = []
    for line in text.split("\n"):
        m = _MARKED.match(line)
        if m is None or m.group(1) in ("@@", "#", "--- ", "+++ "):
            out.append(redactor.text(line, hex_runs=False))   # headers and comments: prose
            continue
        marker = m.group(1)
        out.append(marker + _content(line[len(marker):], redactor))
    return "\n".join(out)
