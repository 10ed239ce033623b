"""The FP8 format of a rollout engine's KV cache (``intent.rollout.kv_cache_format``: e4m3 or
e5m2) from the ``kv_cache_dtype`` string an RL framework hands vLLM or SGLang.

vLLM (``CacheDType`` in vllm/config/cache.py): ``fp8`` is the platform's FP8 type, on CUDA
``torch.float8_e4m3fn`` (``current_platform.fp8_dtype()``, read at vllm-project/vllm 001ceb3e
vllm/v1/attention/backends/triton_attn.py, ``self.fp8_dtype`` viewing every ``fp8*`` cache);
``fp8_e4m3`` and ``fp8_ds_mla`` (DeepSeek MLA's) are e4m3, ``fp8_e5m2`` is e5m2. SGLang's
``--kv-cache-dtype`` takes ``fp8_e4m3`` / ``fp8_e5m2`` (server_args.py). Any other string is
Unknown naming it: the vocabulary is closed (preflight/registry/intent.py).
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut

FORMATS = ("e4m3", "e5m2")
_E4M3 = frozenset({"fp8", "fp8_e4m3", "fp8_e4m3fn", "fp8_ds_mla"})
_E5M2 = frozenset({"fp8_e5m2"})


def of(kv: Any) -> Any:
    """``e4m3`` / ``e5m2`` for an FP8 ``kv_cache_dtype``, Unknown with the reason otherwise."""
    if isinstance(kv, Unknown):
        return kv
    word = str(kv).strip().lower()
    if word in _E4M3:
        return "e4m3"
    if word in _E5M2:
        return "e5m2"
    return Unknown(f"kv_cache_dtype {str(kv)[:40]!r} names no FP8 format vLLM or SGLang has "
                   "(fp8, fp8_e4m3, fp8_e5m2)")


def put(out: IntentOut, kv: Any, source: str) -> None:
    """State the format beside ``rollout.kv_cache_fp8`` where that is true or not known (a
    BF16 KV cache has no FP8 format: nothing is stated)."""
    fp8 = out.get("rollout.kv_cache_fp8", (None,))[0]
    if fp8 is True or (isinstance(fp8, Unknown) and kv is not None):
        out["rollout.kv_cache_format"] = (of(kv), source)
