"""The rollout of a TRL GRPO / RLOO run read as TrainingArguments (its ``GRPOConfig`` flags on a
launch line whose script the job may not hold: holdout21's TRL fork): which engine generates and
whether it runs FP8.

Read at huggingface/trl v0.24.0 (trl/trainer/grpo_config.py l.399 ``use_vllm`` default False:
the policy generates with ``model.generate``, in the dtype it was loaded in; l.406 ``vllm_mode``
default "server"). Neither vLLM path quantizes to FP8: ``trl vllm-serve`` has no quantization
option (trl/scripts/vllm_serve.py l.301-351 passes ``kv_cache_dtype``, default "auto", and no
``quantization``), and the colocated engine is built without one (v1.9.0
trl/generation/vllm_generation.py l.341-366: bitsandbytes for a 4-bit model, else None).
"""

from __future__ import annotations

from preflight.facts import Unknown
from preflight.frameworks import ckptname
from preflight.frameworks._view import IntentOut, View

SOURCE = "trl v0.24.0 trl/trainer/grpo_config.py"
# GRPOConfig / RLOOConfig fields that no plain TrainingArguments has: the run generates
_GENERATION = ("num_generations", "steps_per_generation", "generation_batch_size", "use_vllm",
               "vllm_mode", "epsilon_high", "importance_sampling_level")


def apply(h: View, out: IntentOut) -> None:
    """``rollout.engine`` / ``rollout.fp8`` where ``h`` holds a TRL generation config's keys, as
    defaults: a framework that states them (Unsloth's ``load_in_fp8`` vLLM) wins."""
    if not any(h.has(k) for k in _GENERATION):
        return
    put = out.default
    model = h.get("model_name_or_path")
    if isinstance(model, str) and ckptname.says_fp8(model[:4096]):
        # a pre-quantized checkpoint: vLLM and transformers load it as its quantization_config
        # says, whatever the generation engine
        put("rollout.fp8", (Unknown(f"model_name_or_path {model[:80]!r} looks like an FP8 "
                                    "checkpoint, whose quantization_config is not read"),
                            h.src("model_name_or_path")))
        return
    use = h.facts.get(h.prefix + "use_vllm")
    fp8_training = h.get("fp8") is True
    if isinstance(use, Unknown) or (isinstance(use, str) and "$" in use):
        # neither engine quantizes to FP8: only which one generates is not known
        why = use if isinstance(use, Unknown) else \
            Unknown(f"use_vllm {use[:40]!r} is set at run time")
        put("rollout.engine", (why, h.src("use_vllm")))
        put("rollout.fp8", (Unknown(why.reason) if fp8_training else False,
                            f"{h.src('use_vllm')}: neither TRL's model.generate nor its vLLM "
                            f"paths quantize to FP8 ({SOURCE}:399-406)"))
        return
    if not h.truthy("use_vllm"):
        where = h.src("use_vllm", f"{SOURCE}:399 (use_vllm: False)")
        put("rollout.engine", ("hf", where))
        put("rollout.fp8", (Unknown("the policy generates with model.generate while the configs "
                                    "ask FP8 training: whether generation runs under it is not "
                                    "read"), where) if fp8_training else
            (False, f"{where}: the policy generates with model.generate, in the dtype it was "
                    "loaded in"))
        return
    server = str(h.get("vllm_mode", "server")).lower() == "server"
    put("rollout.engine", ("vllm", h.src("use_vllm")))
    put("rollout.fp8", (False, f"{h.src('vllm_mode', f'{SOURCE}:406 (vllm_mode: server)')}: " + (
        "trl vllm-serve has no quantization option (v0.24.0 trl/scripts/vllm_serve.py "
        "l.301-351)" if server else "the colocated vLLM is built without FP8 quantization "
        "(v1.9.0 trl/generation/vllm_generation.py l.341-366)")))
