"""NeMo-RL's Dynamo generation backend (``policy.generation.backend: dynamo``): what its rollout
runs in.

The backend starts a managed ``dynamo.vllm`` worker and hands it ``vllm_cfg.precision`` as vLLM's
``--dtype`` and ``vllm_cfg.kv_cache_dtype`` as ``--kv-cache-dtype``
(nemo_rl/models/generation/dynamo/config.py ``DYNAMO_VLLM_FLAGS`` l.34-43 at 7ea279ab). Its config
validator (``_validate_parallelism_and_precision`` l.168-191 at 7ea279ab,
https://github.com/NVIDIA-NeMo/RL/blob/7ea279abfbeb698b092856d0dab61e7cf39bc909/nemo_rl/models/generation/dynamo/config.py#L168-L191)
accepts only ``precision`` bf16 / bfloat16 ("managed weight refit currently supports BF16
generation only") and ``kv_cache_dtype: auto``, and refuses ``is_mx``: a Dynamo rollout is BF16
by construction, and a config asking it for FP8 is refused before any rollout, so what its
rollout would run in is Unknown with that reason.
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, View

VLLM = "policy.generation.vllm_cfg"
BF16 = frozenset({"bf16", "bfloat16"})
_REFUSED = ("NeMo-RL's Dynamo generation backend refuses {what} (dynamo/config.py l.175-191 at "
            "7ea279ab: BF16 generation only), so the job stops before any rollout")


def _read(value: Any, ok: Any, what: str) -> Any:
    """False where ``ok(value)``; the value where Unknown; else Unknown: the validator's refusal."""
    if isinstance(value, Unknown):
        return value
    if value is None:
        return Unknown(f"vllm_cfg.{what} not set: the Dynamo backend's config requires it")
    if ok(str(value).strip().lower()):
        return False
    return Unknown(_REFUSED.format(what=f"vllm_cfg.{what}={str(value)[:40]!r}"))


def rollout(v: View, out: IntentOut, src: str) -> None:
    """``intent.rollout.fp8`` / ``rollout.kv_cache_fp8`` of a Dynamo rollout (module docstring)."""
    prefix = f"{v.prefix}{VLLM}"
    precision = _read(v.facts.get(f"{prefix}.precision"), BF16.__contains__, "precision")
    if v.truthy(f"{VLLM}.is_mx") and precision is False:
        precision = Unknown(_REFUSED.format(what="vllm_cfg.is_mx"))
    out["rollout.fp8"] = (precision, v.src(f"{VLLM}.precision", src))
    kv = v.facts.get(f"{prefix}.kv_cache_dtype")
    if kv is not None:
        out["rollout.kv_cache_fp8"] = (_read(kv, "auto".__eq__, "kv_cache_dtype"),
                                       v.src(f"{VLLM}.kv_cache_dtype", src))
