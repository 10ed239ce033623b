"""Markdown escaping for the renderers: :mod:`preflight.base.mdescape`, where the engine's rule
catalogue (``rules list --format markdown``) uses it too (the engine imports no renderer)."""

from __future__ import annotations

from preflight.base.mdescape import md_cell, md_code, md_fence, md_inline, md_link, md_text

__all__ = ["md_cell", "md_code", "md_fence", "md_inline", "md_link", "md_text"]
