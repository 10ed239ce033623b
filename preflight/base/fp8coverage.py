"""How much of a live model's GEMM work runs in FP8 (issue 23, item 4).

Counting modules says little: "1 of 9 Linear layers in high precision" is harmless when that
layer is a small router and ruinous when it is the MLP. What decides the speed-up (and what the
user asked for) is the share of the GEMM work per training step that runs in FP8. It is computed
from shapes alone, with no profiler and no forward pass:

- a GEMM module's work per token is the number of elements of its weight matrices (its own
  parameters of two or more dimensions: ``weight``, TE's ``fc1_weight`` / ``fc2_weight``,
  ``GroupedLinear``'s ``weight0..N``); forward, data-gradient and weight-gradient GEMMs all scale
  with it, so the factor 3 cancels in a share;
- every GEMM module sees every token of the step, except MoE experts, which see ``top_k /
  experts`` of them on average (routing balance is assumed; the basis fact says so). Experts are
  the modules under a path segment named ``experts`` and TE ``GroupedLinear`` modules; the counts
  come from the model's config (``num_experts_per_tok`` and ``num_local_experts`` /
  ``num_experts`` / ``n_routed_experts``, as HF Mixtral / Qwen-MoE / DeepSeek name them). When a
  model has experts but its config does not give both numbers, the FLOPs share is ``Unknown``;
- sizes are the logical ones: a DTensor (FSDP2, tensor parallel) reports its global shape, and a
  ZeRO-3 placeholder its ``ds_numel``, so every rank computes the same shares.

A module called several times per step (weights shared across layers) is counted once: rare in
LLMs, and said in the basis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from preflight.facts import Unknown

# HF config attribute names, most common first (transformers' Mixtral, Qwen2/3-MoE, DeepSeek-V2/3,
# OLMoE, GPT-OSS). See e.g. transformers v4.57.0 models/mixtral/configuration_mixtral.py.
_EXPERTS_ATTRS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_TOP_K_ATTRS = ("num_experts_per_tok", "moe_top_k", "top_k", "num_experts_per_token")
_GROUPED = ("GroupedLinear",)
_LISTED = 8


def weight_elements(module: Any) -> int:
    """Elements of the module's own weight matrices (not its children's; biases and norm
    weights, being 1-D, are not GEMM operands)."""
    total = 0
    for param in module.parameters(recurse=False):
        if getattr(param, "dim", lambda: 0)() >= 2:
            total += int(getattr(param, "ds_numel", 0) or param.numel())
    return total


def _config_int(model: Any, names: Sequence[str]) -> int | None:
    config = getattr(model, "config", None)
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _is_expert(name: str, module: Any) -> bool:
    return "experts" in name.split(".") or type(module).__name__ in _GROUPED


def coverage_facts(model: Any, gemms: Sequence[tuple[str, Any, bool]]) -> dict[str, Any]:
    """``runtime.fp8.linear_params_share`` / ``gemm_flops_share`` / ``gemm_flops_basis`` /
    ``high_precision_top`` for the GEMM modules ``(name, module, is_fp8)`` of ``model``."""
    sized = [(name, module, fp8, weight_elements(module)) for name, module, fp8 in gemms]
    total = sum(size for *_, size in sized)
    if total == 0:
        why = "the model has no GEMM module with a weight matrix"
        return {"runtime.fp8.linear_params_share": Unknown(why),
                "runtime.fp8.gemm_flops_share": Unknown(why),
                "runtime.fp8.gemm_flops_basis": why}
    facts: dict[str, Any] = {"runtime.fp8.linear_params_share": _share(
        sum(size for _, _, fp8, size in sized if fp8), total)}
    experts = [s for s in sized if _is_expert(s[0], s[1])]
    fraction = 1.0
    if experts:
        n_experts = _config_int(model, _EXPERTS_ATTRS)
        top_k = _config_int(model, _TOP_K_ATTRS)
        if n_experts is None or top_k is None or top_k > n_experts:
            why = (f"{len(experts)} MoE expert GEMM modules found, but the model's config does "
                   "not give the number of experts and the router's top-k, so their share of "
                   "the tokens is not known")
            facts["runtime.fp8.gemm_flops_share"] = Unknown(why)
            facts["runtime.fp8.gemm_flops_basis"] = why
            return facts
        fraction = top_k / n_experts
        basis = (f"MoE: expert GEMMs see top_k/experts = {top_k}/{n_experts} of the tokens, every "
                 "other GEMM all of them (balanced routing assumed); shared weights counted once")
    else:
        basis = "dense: every GEMM module sees every token; shared weights counted once"
    expert_ids = {id(s[1]) for s in experts}

    def work(s: tuple[str, Any, bool, int]) -> float:
        return s[3] * (fraction if id(s[1]) in expert_ids else 1.0)

    flops = sum(work(s) for s in sized)
    facts["runtime.fp8.gemm_flops_share"] = _share(sum(work(s) for s in sized if s[2]), flops)
    facts["runtime.fp8.gemm_flops_basis"] = basis
    facts["runtime.fp8.high_precision_top"] = _top(sized, work, flops)
    return facts


def _share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole else 0.0


def _top(sized: Sequence[tuple[str, Any, bool, int]], work: Any,
         whole: float) -> list[dict[str, Any]]:
    """The high-precision GEMM modules doing the most work, largest first."""
    high = sorted((s for s in sized if not s[2]), key=lambda s: -work(s))[:_LISTED]
    return [{"name": s[0] or "<root>", "share": _share(work(s), whole)} for s in high]
