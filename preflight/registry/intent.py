"""``intent.*``: what the job asks for, whichever framework said it (producer: preflight/intent.py).

Names with a closed vocabulary carry ``choices``: :mod:`preflight.intent` turns any other value
into ``Unknown`` (the raw value stays in the ``config.*`` fact), and ``rules lint`` refuses a rule
that compares the fact with a value outside them (it could never match).
"""

from preflight.registry import FactSpec as F

BACKENDS = ("te", "torchao", "msamp", "scaled_mm", "none")
"""``scaled_mm``: FP8 the job implements itself on ``torch._scaled_mm`` (nanochat's Float8Linear)."""
RECIPES = ("delayed", "current", "tensorwise", "rowwise", "rowwise_with_gw_hp", "mxfp8",
           "blockwise", "nvfp4")
FORMATS = ("hybrid", "e4m3", "e5m2")
PRECISIONS = ("bf16", "fp16", "fp32")
SHARDS = ("even", "uneven", "likely_uneven")
DISTRIBUTED = ("none", "ddp", "fsdp1", "fsdp2", "deepspeed", "megatron")
GRANULARITIES = ("full", "selective", "none")
ROLLOUT_ENGINES = ("vllm", "sglang", "trtllm", "hf", "megatron")
TE_MODULES = ("yes", "none")
SCOPES = ("all", "partial")


def _one_of(values: tuple[str, ...]) -> str:
    return " | ".join(values)


SPECS = (
    F("intent.fp8", "bool", "The job asks for FP8 training"),
    F("intent.fp8_source", "str", "file:line of the setting that asked for FP8"),
    F("intent.fp8_overridden_by", "str",
      "file:line of a setting that silently turns the requested FP8 off (HF bf16/fp16, NeMo "
      "transformer_engine: false); intent.fp8 is then false"),
    F("intent.frameworks", "list", "Frameworks the job uses, from its config files"),
    F("intent.backend", "str", f"FP8 backend: {_one_of(BACKENDS)}", BACKENDS),
    F("intent.recipe", "str", f"FP8 recipe: {_one_of(RECIPES)}", RECIPES),
    F("intent.format", "str", f"FP8 format: {_one_of(FORMATS)}", FORMATS),
    F("intent.precision", "str", f"Non-FP8 compute precision asked for: {_one_of(PRECISIONS)}",
      PRECISIONS),
    F("intent.distributed", "str", f"Distribution: {_one_of(DISTRIBUTED)}", DISTRIBUTED),
    F("intent.zero_stage", "int", "DeepSpeed ZeRO stage asked for (0-3)"),
    F("intent.activation_checkpointing", "bool", "Activation checkpointing / recompute is on"),
    F("intent.recompute_granularity", "str",
      "Megatron / NeMo activation recompute: full (whole layers, through te.checkpoint when FP8 "
      "is on) | selective (core attention only) | none; absent for other frameworks",
      GRANULARITIES),
    F("intent.compile", "bool", "torch.compile is on"),
    F("intent.te_modules", "str", "Where a script opens a Transformer Engine autocast itself: "
      "whether the files read build any TE module (yes), or none and no model comes from "
      "elsewhere (none: the autocast changes nothing, it affects TE modules only)", TE_MODULES),
    F("intent.num_gpus", "int", "GPUs the job asks for in total, when a config says"),
    F("intent.shapes.hidden", "int", "Model hidden size"),
    F("intent.shapes.ffn", "int", "FFN intermediate size"),
    F("intent.shapes.tokens", "int", "Tokens per micro-batch per rank (micro-batch x sequence / cp)"),
    F("intent.shapes.gemms", "list", "Per-rank GEMM shapes [M, K, N] the job will run"),
    F("intent.shapes.dims_align", "int", "Largest power of two (capped at 128) dividing both hidden and ffn; FP8 GEMMs need 16 (per-tensor) or 32 (MXFP8)"),
    F("intent.shapes.tokens_align", "int", "Largest power of two (capped at 128) dividing tokens per micro-batch per rank (after TP sequence parallel / CP split)"),
    # FSDP2 float8 all-gather with uneven shards (pytorch/ao issue 3982: FP8D-TAO-0013)
    F("intent.fsdp_shard_size", "int", "Ranks FSDP2 shards each parameter over (fully_shard "
      "without a mesh: the world size; torchtitan data_parallel_shard_degree; XTuner V1 world // "
      "ep_size or hsdp_sharding_size)"),
    F("intent.fsdp_shards", "str", "Whether every FSDP2 shard of the hidden / FFN weights is "
      f"the same size: {_one_of(SHARDS)} (likely_uneven: dims not known, a shard size that is not "
      "a power of two)", SHARDS),
    # Parallelism and FP8 features (issue 16): read from every framework that has the setting;
    # Unknown with the reason where the configs read cannot say.
    F("intent.tp", "int", "Tensor-parallel size (Megatron --tensor-model-parallel-size, NeMo "
      "model.tensor_model_parallel_size, torchtitan parallelism.tensor_parallel_degree, accelerate "
      "parallelism_config_tp_size)"),
    F("intent.cp", "int", "Context-parallel size (Megatron --context-parallel-size, NeMo "
      "model.context_parallel_size, torchtitan parallelism.context_parallel_degree, accelerate "
      "parallelism_config_cp_size)"),
    F("intent.sequence_parallel", "bool",
      "Megatron / NeMo sequence parallelism is on (Megatron turns it off when TP is 1)"),
    F("intent.fp8_attention", "bool",
      "FP8 attention (TE fp8_dpa / fp8_mha: Megatron TransformerConfig "
      "fp8_dot_product_attention / fp8_multi_head_attention, NeMo model.fp8_dot_product_attention"
      " / fp8_multi_head_attention) is asked for"),
    F("intent.cuda_graphs", "bool",
      "CUDA graphs are on (Megatron --enable-cuda-graph / --external-cuda-graph / "
      "--cuda-graph-impl local|transformer_engine|full_iteration, NeMo model.enable_cuda_graph)"),
    F("intent.fp8_params", "bool",
      "Parameters kept in FP8 (Megatron --fp8-param-gather, NeMo model.fp8_params)"),
    F("intent.fp8_scope", "str",
      "Which of the model's training GEMMs the job's FP8 reaches: all (every linear its FP8 "
      "converts) | partial (only layers / modules the job selects, the others BF16: slime "
      "--megatron-deepgemm-forward-layers); absent where no reader says", SCOPES),
    F("intent.fp8_weight_storage", "bool",
      "Weights kept in a float8 dtype between uses and upcast layer by layer for BF16/FP16 "
      "compute (finetrainers --layerwise_upcasting_modules, diffusers enable_layerwise_casting): "
      "FP8 storage, no FP8 GEMM; absent where no reader says"),
    F("intent.tp_comm_overlap", "bool",
      "Tensor-parallel communication overlap (Userbuffers) is on (Megatron --tp-comm-overlap, "
      "NeMo model.ub_tp_comm_overlap)"),
    # The whole stack and dynamic shapes (issues 22, 23): wrappers state what they run on, and
    # the settings that decide which FP8 divisibility a packed or MoE run needs at run time.
    F("intent.stack", "list",
      "Every framework the job runs on: the ones whose configs were read and what they run on "
      "(LLaMA-Factory -> hf_trainer -> accelerate)"),
    F("intent.seq_len", "int", "Sequence length (tokens per sample, or per packed row)"),
    F("intent.micro_batch", "int", "Micro-batch size per rank"),
    F("intent.packing", "bool", "Samples are packed into rows (variable sequence boundaries)"),
    F("intent.pad_multiple", "int",
      "Sequences (or packed rows) are padded to a multiple of this many tokens"),
    F("intent.moe.experts", "int", "Number of MoE experts (absent for a dense model)"),
    F("intent.moe.top_k", "int", "Experts each token is routed to"),
    F("intent.ep", "int", "Expert-parallel size"),
    F("intent.recipe_by_backend", "bool",
      "The job names no FP8 recipe and its framework passes none (te.autocast() / "
      "fp8_autocast() without fp8_recipe): the backend's default runs, which for Transformer "
      "Engine depends on its version and the GPU (effective.recipe)"),
    F("intent.block_scales_fp32", "bool",
      "Transformer Engine's FP8 block scaling runs with FP32 scales, not powers of 2: "
      "NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1 as the job sets it for its trainer processes "
      "(verl's launch script, NeMo-RL policy.megatron_cfg.env_vars, slime's Ray actors, which "
      "default to 1); absent where the job does not say (then env.* of the machine decides)"),
    F("intent.rollout.engine", "str",
      f"RL rollout / generation engine: {_one_of(ROLLOUT_ENGINES)}", ROLLOUT_ENGINES),
    F("intent.rollout.fp8", "bool", "RL rollout (generation) runs with FP8 weights"),
    F("intent.rollout.recipe", "str", f"FP8 recipe of the rollout engine: {_one_of(RECIPES)}",
      RECIPES),
    F("intent.rollout.kv_cache_fp8", "bool", "The rollout engine keeps its KV cache in FP8"),
    F("intent.rollout.kv_cache_format", "str",
      "FP8 format of the rollout engine's KV cache, where intent.rollout.kv_cache_fp8 is true: "
      "e4m3 (vLLM fp8 / fp8_e4m3 on CUDA, SGLang fp8_e4m3) or e5m2 (fp8_e5m2); Unknown naming "
      "any other kv_cache_dtype (preflight/frameworks/kvformat.py)", ("e4m3", "e5m2")),
    F("intent.rollout.is_correction", "bool",
      "The RL loss corrects for the rollout/trainer mismatch with importance sampling (verl "
      "rollout_correction / TIS, NeMo-RL loss_fn.use_importance_sampling_correction, slime "
      "--use-tis)"),
)
