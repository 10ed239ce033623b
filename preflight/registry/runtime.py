"""``runtime.*``: facts read from live objects by ``preflight.inspect`` (producer: preflight/live/__init__.py).

Absent means "not part of this inspection" (no optimizer / accelerator / engine / FSDP given);
Unknown means the object was there but could not tell (e.g. optimizer state before the first step).
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("runtime.inspected", "bool", "Facts come from live objects (preflight.inspect)"),
    F("runtime.expect_fp8", "bool", "The caller expects this run to train in FP8 (inspect(expect_fp8=...))"),
    F("runtime.expect_fp8_from", "str", "What set runtime.expect_fp8, in the caller's terms: 'inspect(expect_fp8=True)', \"the Lightning Trainer's precision 'transformer-engine'\", ..."),
    F("runtime.expect_fp8_off", "str", "How to tell this check the run is not meant to be FP8, in the caller's terms"),
    F("runtime.fp8_replaced_by", "str", "A setting of the run that replaces the FP8 it asked for, in the caller's terms (the HF callback: 'TrainingArguments(bf16=True)' over the launcher's fp8)"),
    F("runtime.inspect_point", "str", "What was inspected, in the caller's terms (e.g. the model returned by accelerator.prepare())"),
    F("runtime.model.device_types", "list", "Device types of the model's parameters, e.g. ['cuda'] or ['cpu']"),
    F("runtime.model.class", "str", "Qualified class name of the inspected model (or its wrapper)"),
    # FP8 coverage
    F("runtime.fp8.converted", "int", "Number of FP8 GEMM modules (TE Linear/LayerNormLinear/LayerNormMLP/GroupedLinear, torchao Float8Linear/MXLinear, MS-AMP FP8Linear)"),
    F("runtime.fp8.module_types", "list", "Qualified class names of the FP8 modules found, sorted"),
    F("runtime.fp8.backends", "list", "FP8 backends whose modules were found: te | torchao | msamp"),
    F("runtime.fp8.linear_total", "int", "FP8 modules plus torch.nn.Linear layers left in high precision"),
    F("runtime.fp8.unconverted", "list", "Linear layers left in high precision: [{name, in, out, reason}] (first 64)"),
    F("runtime.fp8.unconverted_count", "int", "How many torch.nn.Linear layers are not FP8 modules"),
    F("runtime.fp8.unconverted_reasons", "list", "Distinct reasons: dims_not_multiple_of_16 | after_unaligned_sibling | first_or_last_linear | filtered | model_not_converted (no FP8 module at all)"),
    F("runtime.fp8.linear_params_share", "float", "Share (0-1) of the GEMM modules' weight elements held by FP8 modules (logical sizes: DTensor global shape, ZeRO-3 ds_numel)"),
    F("runtime.fp8.gemm_flops_share", "float", "Share (0-1) of the GEMM FLOPs of one training step that run in FP8, from shapes: every GEMM sees every token except MoE experts (top_k/experts of them)"),
    F("runtime.fp8.gemm_flops_basis", "str", "What runtime.fp8.gemm_flops_share assumes (dense, or MoE with top_k/experts), or why it is unknown"),
    F("runtime.fp8.high_precision_top", "list", "The high-precision GEMM modules doing the most work: [{name, share}] (first 8, largest first)"),
    # parameters and optimizer
    F("runtime.params.dtypes", "list", "Dtypes of the model's parameters, e.g. ['bfloat16', 'float32']"),
    F("runtime.params.numel_by_dtype", "dict", "Parameter elements per dtype (ZeRO-3: full sizes, ds_numel)"),
    F("runtime.params.low_precision", "bool", "Some parameters are stored in bf16 / fp16 / fp8"),
    F("runtime.optimizer.given", "bool", "An optimizer was passed or found on the DeepSpeed engine"),
    F("runtime.optimizer.class", "str", "Qualified class name of the optimizer"),
    F("runtime.optimizer.param_dtypes", "list", "Dtypes of the tensors the optimizer updates (its master copy)"),
    F("runtime.optimizer.master_fp32", "bool", "The optimizer updates fp32 tensors (an fp32 master copy exists)"),
    F("runtime.optimizer.state_dtypes", "list", "Dtypes of the optimizer state tensors (exp_avg, ...); Unknown before the first step"),
    F("runtime.optimizer.state_fp32", "bool", "Every optimizer state tensor is fp32"),
    # DeepSpeed
    F("runtime.deepspeed.engine", "bool", "A DeepSpeed engine was inspected (false: only its optimizer, e.g. from an HF Trainer callback)"),
    F("runtime.deepspeed.optimizer_class", "str", "Qualified class of engine.optimizer (the ZeRO / BF16 wrapper)"),
    F("runtime.deepspeed.zero_stage", "int", "ZeRO stage the engine effectively runs, read from its optimizer and parameters"),
    F("runtime.deepspeed.zero_stage_configured", "int", "ZeRO stage the config asked for (ds_config argument, else engine.config)"),
    F("runtime.deepspeed.zero_stage_configured_from", "str", "Where zero_stage_configured was read"),
    F("runtime.deepspeed.zero_stage_engine_config", "int", "engine.zero_optimization_stage(): the stage DeepSpeed parsed"),
    F("runtime.deepspeed.zero_stage_downgraded", "bool", "The effective ZeRO stage is lower than the configured one"),
    F("runtime.deepspeed.bf16", "bool", "engine.bfloat16_enabled()"),
    F("runtime.deepspeed.fp16", "bool", "engine.fp16_enabled()"),
    # Accelerate
    F("runtime.accelerate.mixed_precision", "str", "Accelerator.mixed_precision: no | fp16 | bf16 | fp8"),
    F("runtime.accelerate.fp8_backend", "str", "Accelerator.fp8_backend: te | torchao | msamp | none"),
    F("runtime.accelerate.fp8_recipe", "str", "Class of the FP8 recipe handler (TERecipeKwargs, AORecipeKwargs, ...) or none"),
    F("runtime.accelerate.fp8_recipe_details", "dict", "Public fields of the FP8 recipe handler, as strings"),
    F("runtime.accelerate.distributed_type", "str", "Accelerator.distributed_type, lower case (no, multi_gpu, deepspeed, fsdp, ...)"),
    F("runtime.accelerate.deepspeed_zero_stage", "int", "AcceleratorState().deepspeed_plugin.zero_stage"),
    # Lightning
    F("runtime.lightning.precision", "str", "Lightning Trainer precision setting (transformer-engine, bf16-mixed, ...)"),
    # FSDP
    F("runtime.fsdp.version", "int", "1 (FullyShardedDataParallel) or 2 (fully_shard) when the model is FSDP-wrapped"),
    F("runtime.fsdp.param_dtype", "str", "Mixed-precision policy param_dtype, or none"),
    F("runtime.fsdp.reduce_dtype", "str", "Mixed-precision policy reduce_dtype, or none"),
    F("runtime.fsdp.mixed_precision", "bool", "An FSDP mixed-precision policy with a param_dtype is set"),
    # FP8 scaling state after a resume (producer: preflight/live/resume.py)
    F("runtime.resumed", "bool", "The caller says this run resumed from a checkpoint (inspect(extra_facts={'runtime.resumed': True}); the HF and Lightning callbacks set it)"),
    F("runtime.optimizer.steps", "int", "Largest 'step' in the optimizer state (Adam-style); Unknown before the first step"),
    F("runtime.fp8.te_state_modules", "int", "Transformer Engine modules holding DelayedScaling state (fp8_meta scaling_fwd with a scale)"),
    F("runtime.fp8.te_stateless_modules", "int", "Transformer Engine modules with no FP8 scaling state (no forward in FP8 yet, or a stateless recipe)"),
    F("runtime.fp8.te_state_initial", "list", "Names of TE modules whose FP8 scales are all 1.0 and amax history all zero (first 16)"),
    F("runtime.fp8.te_state_initial_count", "int", "How many TE modules hold initial (never trained, or not restored) FP8 state"),
    F("runtime.fp8.te_state_unreadable", "list", "TE modules whose fp8_meta could not be read (first 16)"),
    F("runtime.fp8.te_history_rows_min", "int", "Fewest filled rows of a forward amax history over the TE modules"),
    F("runtime.fp8.te_history_rows_max", "int", "Most filled rows of a forward amax history over the TE modules (from TE 1.7 a module that did not run in a step does not roll its history)"),
    F("runtime.fp8.te_history_len", "int", "Length of the forward amax history (DelayedScaling amax_history_len)"),
    F("runtime.fp8.te_history_short", "bool", "Even the fullest TE amax history holds fewer filled rows than the optimizer steps taken (capped at its length - 1): the state restarted after a resume"),
)
