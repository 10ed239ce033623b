"""The last step of every command's output that has no report document: escapes and redaction.

``check`` / ``report`` / ``smoke`` render from a document that :func:`preflight.render.
render_document` cleans and redacts. ``plan`` and ``speedup`` build their text from their own
results (package names, versions, a model's name, paths from the job's configs), and printed it
raw: a control character in a config value reached the terminal, and nothing was redacted
(issue 21 item 5, issue 24 item 9: one set of output flags, ``--no-redact`` included). Their
output passes through :func:`finish_output` instead.
"""

from __future__ import annotations

import json


def finish_output(text: str, fmt: str, *, redact: bool = True) -> str:
    """``text`` in ``fmt`` with control characters escaped and, unless ``redact`` is False,
    secrets, the home directory and host names masked.

    JSON is handled as a document (re-serialised the way ``json.dumps(..., indent=2)`` wrote it:
    an escape or a mask written into JSON text could break a string); any other format as text.
    """
    from preflight.render.sanitize import clean_document, clean_text

    if fmt == "json":
        try:
            doc = json.loads(text)
        except ValueError:
            return clean_text(text)   # not JSON after all: at least no escapes reach a terminal
        doc = clean_document(doc)
        if redact and isinstance(doc, dict):
            from preflight.redact import redact_document

            doc = redact_document(doc)
        end = "\n" if text.endswith("\n") else ""
        return json.dumps(doc, indent=2) + end
    text = clean_text(text)
    if not redact:
        return text
    from preflight.redact import redact_text

    return redact_text(text, hex_runs=False)
