"""``intent.*``: what the job asks for, whichever framework said it (producer: preflight/intent.py)."""

from preflight.facts import FactSpec as F

SPECS = (
    F("intent.fp8", "bool", "The job asks for FP8 training"),
    F("intent.fp8_source", "str", "file:line of the setting that asked for FP8"),
    F("intent.fp8_overridden_by", "str",
      "file:line of a setting that silently turns the requested FP8 off (HF bf16/fp16, NeMo "
      "transformer_engine: false); intent.fp8 is then false"),
    F("intent.frameworks", "list", "Frameworks the job uses, from its config files"),
    F("intent.backend", "str", "FP8 backend: te | torchao | msamp | none"),
    F("intent.recipe", "str", "FP8 recipe: delayed | current | tensorwise | rowwise | rowwise_with_gw_hp | mxfp8 | blockwise | nvfp4"),
    F("intent.format", "str", "FP8 format: hybrid | e4m3 | e5m2"),
    F("intent.precision", "str", "Non-FP8 compute precision asked for: bf16 | fp16 | fp32"),
    F("intent.distributed", "str", "Distribution: none | ddp | fsdp1 | fsdp2 | deepspeed | megatron"),
    F("intent.zero_stage", "int", "DeepSpeed ZeRO stage asked for (0-3)"),
    F("intent.activation_checkpointing", "bool", "Activation checkpointing / recompute is on"),
    F("intent.recompute_granularity", "str",
      "Megatron / NeMo activation recompute: full (whole layers, through te.checkpoint when FP8 "
      "is on) | selective (core attention only) | none; absent for other frameworks"),
    F("intent.compile", "bool", "torch.compile is on"),
    F("intent.num_gpus", "int", "GPUs the job asks for in total, when a config says"),
    F("intent.shapes.hidden", "int", "Model hidden size"),
    F("intent.shapes.ffn", "int", "FFN intermediate size"),
    F("intent.shapes.tokens", "int", "Tokens per micro-batch per rank (micro-batch x sequence / cp)"),
    F("intent.shapes.gemms", "list", "Per-rank GEMM shapes [M, K, N] the job will run"),
    F("intent.shapes.dims_align", "int", "Largest power of two (capped at 128) dividing both hidden and ffn; FP8 GEMMs need 16 (per-tensor) or 32 (MXFP8)"),
    F("intent.shapes.tokens_align", "int", "Largest power of two (capped at 128) dividing tokens per micro-batch per rank (after TP sequence parallel / CP split)"),
)
