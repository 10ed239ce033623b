"""axolotl's RL rollout: ``rl: grpo`` (``gdpo``, ``ebft``) generates with TRL, through vLLM when
``trl.use_vllm`` is on; this says which engine generates, whether it serves FP8 weights, keeps
an FP8 KV cache, and whether TRL corrects the rollout/trainer mismatch (``intent.rollout.*``).

How axolotl runs it (axolotl-ai-cloud/axolotl @ v0.18.0, and e4032fc9 of holdout11):
  * ``rl:`` is an ``RLType`` (utils/schemas/enums.py l.28-38): dpo, gdpo, grpo, ipo, orpo, kto,
    simpo, ebft. Only grpo / gdpo (core/builders/rl.py l.54, l.161) and ebft (l.81, its
    structured mode samples with vLLM: core/trainers/ebft/__init__.py l.131) generate; the
    others train on a fixed preference set and state no rollout.
  * ``trl.use_vllm`` false: TRL generates with the policy being trained (transformers
    ``generate``), in the trainer's own precision: no second engine, nothing to correct.
  * ``trl.vllm_mode: colocate``: TRL builds ``LLM(model=model.name_or_path, ...,
    quantization=None unless bitsandbytes)`` in the trainer (trl v1.1.0
    trl/generation/vllm_generation.py l.342-358) and passes no ``kv_cache_dtype``.
  * ``trl.vllm_mode: server``: TRL connects to ``vllm_server_host:port``. ``axolotl vllm-serve
    CONFIG`` starts it from the same YAML: ``model = cfg.base_model`` (cli/vllm_serve.py
    l.38-39), ``dtype`` from ``vllm.dtype`` (default ``auto``), no quantization, and TRL's
    ``ScriptArguments.kv_cache_dtype`` default ``auto`` (scripts/vllm_serve_lora.py l.104-111;
    axolotl's ``VllmConfig`` has no quantization or kv_cache_dtype field,
    utils/schemas/vllm.py: ``vllm.quantization: fp8`` / ``vllm.kv_cache_dtype: fp8`` are dropped
    at validation, and so are ``trl.vllm_quantization`` / ``trl.vllm_kv_cache_dtype``:
    :data:`DROPPED`). A server started by anything else has flags not in the job.
  * ``trl.vllm_mode`` unset: axolotl passes none (core/trainers/grpo/__init__.py l.70-71) and
    TRL's default decides: ``server`` up to trl 0.29 (axolotl 0.13-0.16), ``colocate`` from trl
    1.0 (axolotl 0.17+, pinned trl 1.5.1 / 1.8.0).
  * vLLM serves a checkpoint in the precision its ``quantization_config`` names: ``base_model``
    decides (its config.json when inside the job, else its name: :mod:`.ckptconfig`).
  * ``trl.vllm_importance_sampling_correction``: TRL's GRPOConfig default is True from trl
    v0.23 (trl/trainer/grpo_config.py), applied only with ``use_vllm``; axolotl passes the
    key only when set (core/trainers/grpo/__init__.py l.167-169) and pins trl >= 0.25 since
    v0.13.0.
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, Stated, View
from preflight.frameworks.axolotl_launch import SERVED
from preflight.frameworks.ckptconfig import weights
from preflight.frameworks.ckptname import says_fp8

KIND = "axolotl"
AT = "axolotl v0.18.0"
GENERATES = frozenset({"grpo", "gdpo", "ebft"})
WEIGHTS = f"config.{KIND}.base_model_weights"
"""What ``base_model``'s config.json says (FP8 or not), where the folder is inside the job."""


def read_weights(path: str, facts: dict[str, Any], prov: dict[str, str]) -> None:
    """``base_model``'s config.json, read at read time when it is a folder inside the job."""
    model = facts.get(f"config.{KIND}.base_model")
    if not isinstance(model, str) or not isinstance(facts.get(f"config.{KIND}.rl"), str):
        return
    held = weights(model, path)
    if held.source is not None:
        facts[WEIGHTS], prov[WEIGHTS] = held.fp8, str(held.source)


def rollout(a: View, out: IntentOut) -> None:
    """``intent.rollout.*`` of an axolotl RL job that generates; nothing for one that does
    not (DPO, KTO, ORPO, ... or no ``rl:``)."""
    rl = a.get("rl")
    if isinstance(a.unknown("rl"), Unknown):
        out["rollout.engine"] = (Unknown(f"rl: {a.unknown('rl')}"), a.src("rl"))
        return
    if not isinstance(rl, str) or rl.strip().lower() not in GENERATES:
        return
    use = a.unknown("trl.use_vllm")
    if use is not None:
        why = Unknown(f"trl.use_vllm: {use.reason}")
        out["rollout.engine"] = (why, a.src("trl.use_vllm"))
        out["rollout.fp8"] = (why, a.src("trl.use_vllm"))
        out["rollout.kv_cache_fp8"] = (why, a.src("trl.use_vllm"))
        return
    if not a.truthy("trl.use_vllm"):
        src = a.src("trl.use_vllm", a.src("rl"))
        same = (f"rl: {rl} without trl.use_vllm: TRL generates with the policy being trained "
                f"(transformers generate, the trainer's own precision; {AT})")
        out["rollout.engine"] = ("hf", src)
        out["rollout.fp8"] = (False, src)
        out["rollout.kv_cache_fp8"] = (False, src)
        out["rollout.is_correction"] = (False, same)
        return
    out["rollout.engine"] = ("vllm", a.src("trl.use_vllm"))
    _correction(a, out)
    gone = _not_served(a)
    if gone is not None:
        out["rollout.fp8"] = (gone, a.src("trl.vllm_mode", a.src("trl.use_vllm")))
        out["rollout.kv_cache_fp8"] = (gone, a.src("trl.vllm_mode", a.src("trl.use_vllm")))
        return
    out["rollout.fp8"] = _fp8(a)
    out["rollout.kv_cache_fp8"] = (False, f"neither axolotl nor TRL passes kv_cache_dtype to "
                                          f"vLLM (default auto; {AT} scripts/vllm_serve_lora.py "
                                          "l.111, trl v1.1.0 vllm_generation.py l.342-358)")
    _dropped(a, out)


DROPPED: tuple[tuple[Stated, tuple[str, ...]], ...] = (
    ("rollout.fp8", ("vllm.quantization", "trl.vllm_quantization")),
           ("rollout.kv_cache_fp8", ("vllm.kv_cache_dtype", "trl.vllm_kv_cache_dtype")))
"""Keys a user writes to ask vLLM for FP8 that axolotl drops: ``VllmConfig`` and ``TRLConfig``
have no such field (utils/schemas/vllm.py, trl.py at v0.18.0; pydantic's default ignores
unknown keys and ``validate_config`` keeps ``model_dump()``, utils/config/__init__.py
l.439-499), and ``axolotl vllm-serve`` passes only ``vllm.{tensor,data}_parallel_size, host,
port, gpu_memory_utilization, dtype, max_model_len, enable_prefix_caching, reasoning``
(cli/vllm_serve.py l.39-95): vLLM never sees them."""


def _dropped(a: View, out: IntentOut) -> None:
    """Where the job asks vLLM for FP8 through a key axolotl drops: the value stands (from what
    reaches vLLM: ``base_model``, TRL's default), its reason names the dropped key."""
    for name, keys in DROPPED:
        key = next((k for k in keys if a.has(k)), None)
        value = out.get(name, (None,))[0]
        if key is None or value is True or isinstance(value, Unknown) or \
                not str(a.get(key)).lower().startswith("fp8"):
            continue
        out[name] = (value, f"{key}: {str(a.get(key))[:40]} ({a.src(key)}) is dropped: {AT} "
                            f"has no such field (utils/schemas/vllm.py, trl.py), so vLLM "
                            f"never gets it; {out[name][1]}")


def _not_served(a: View) -> Unknown | None:
    """None when the engine's model is ``base_model`` as this YAML says (colocate, or ``axolotl
    vllm-serve`` of this config in the job); else why the served model and flags are not known."""
    mode = a.get("trl.vllm_mode")
    served = a.facts.get(SERVED)
    if mode == "colocate" or served is True:
        return None
    if isinstance(served, Unknown):
        return served
    host = a.get("trl.vllm_server_host") or a.get("vllm.host") or "0.0.0.0"
    port = a.get("trl.vllm_server_port") or a.get("vllm.port") or 8000
    outside = (f"the vLLM server at {str(host)[:80]}:{str(port)[:8]} is started outside the "
               "job (no `axolotl vllm-serve` of this config in the scripts read): its model "
               "and flags (--quantization, --kv-cache-dtype) are not in the job")
    if mode == "server":
        return Unknown(f"trl.vllm_mode: server; {outside}")
    if mode is None and not a.has("trl.vllm_mode"):
        return Unknown("trl.vllm_mode is not set: TRL 1.x (axolotl 0.17+) generates in the "
                       f"trainer from base_model, TRL 0.2x (axolotl 0.13-0.16) connects to a "
                       f"server; {outside}")
    return Unknown(f"trl.vllm_mode {str(mode)[:40]!r} is neither server nor colocate")


def _fp8(a: View) -> tuple[Any, str]:
    """FP8 weights in vLLM: ``base_model``'s config.json (inside the job), else its name."""
    held = a.facts.get(WEIGHTS)
    if held is not None:
        return held, a.prov.get(WEIGHTS, a.src("base_model"))
    model = a.get("base_model")
    gone = a.unknown("base_model")
    if gone is not None:
        return Unknown(f"base_model: {gone.reason}"), a.src("base_model")
    if not isinstance(model, str):
        return Unknown("no base_model: the model vLLM serves is not named"), a.src("rl")
    said = says_fp8(model)
    if said is None:
        return (Unknown(f"whether base_model {model[:80]!r} holds FP8 weights is in its "
                        "config.json (quantization_config), which is not read here; vLLM "
                        "serves it in that precision (no quantization argument)"),
                a.src("base_model"))
    return said, a.src("base_model")


def _correction(a: View, out: IntentOut) -> None:
    key = "trl.vllm_importance_sampling_correction"
    gone = a.unknown(key)
    if gone is not None:
        out["rollout.is_correction"] = (Unknown(f"{key}: {gone.reason}"), a.src(key))
    elif a.get(key) is not None:
        out["rollout.is_correction"] = (a.truthy(key), a.src(key))
    else:
        out["rollout.is_correction"] = (True, "TRL GRPOConfig default "
                                              "vllm_importance_sampling_correction=True (trl "
                                              "v0.23+; axolotl 0.13+ pins trl >= 0.25)")
