"""Test support, for real Transformer Engine only: emulate TE 1.6-1.11's recompute behaviour.

TE PR 1254 (commit a51815120c47, in 1.12) made the recompute phase of ``te.checkpoint`` get the
"first FP8 module" flag back (``activation_recompute_forward`` stashes it in the first forward and
restores it in the recompute), so the recomputed forward's context again owns the backward amax
reduction and scale update. Before it, the flag was already consumed and the recompute saw False:
no backward scale was ever updated (TE issue 1190). The one decision is what
``FP8GlobalStateManager.is_first_fp8_module()`` answers during the recompute phase; this patch
answers False there, as 1.6-1.11 did, inside a ``with`` block only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def pre_1254_recompute() -> Iterator[None]:
    from transformer_engine.pytorch import distributed as ted

    try:
        from transformer_engine.pytorch.quantization import FP8GlobalStateManager
    except ImportError:
        from transformer_engine.pytorch.fp8 import FP8GlobalStateManager

    original = FP8GlobalStateManager.__dict__["is_first_fp8_module"]

    def first_module(cls):  # noqa: ANN001, ANN202
        result = original.__func__(cls)
        return False if ted.in_fp8_activation_recompute_phase() else result

    FP8GlobalStateManager.is_first_fp8_module = classmethod(first_module)
    try:
        yield
    finally:
        FP8GlobalStateManager.is_first_fp8_module = original
