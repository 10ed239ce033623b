"""``--format json``: the report document as JSON (contract: ``Report.to_dict`` keys, in order).

Key order is the contract's, not sorted, so the top-level keys read as documented; fact names
inside ``facts`` are already sorted by ``facts_to_json`` for stable diffs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight.render import Options


def render_json(doc: dict[str, Any]) -> str:
    """Pretty JSON (2-space indent, UTF-8 kept), ending with a newline."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render(doc: dict[str, Any], options: Options) -> str:
    """``--format json``: the document itself (the data API; no view)."""
    return render_json(doc)
