"""``smoke.*``: results of the FP8 smoke step (producer: preflight/smoke/).

Every name is registered exactly (no template), so a misspelled smoke fact in a rule is caught
at load time. JSON details keys that carry a signal-to-noise ratio contain ``sqnr`` (dB); speed
ratios contain ``speedup``. Thresholds behind the booleans and the verdict per check: registry/smoke_verdict.py.
"""

from preflight.registry import FactSpec as F

_COMMON = (
    F("smoke.ran", "bool", "The smoke step ran (false when skipped; see smoke.skip_reason)"),
    F("smoke.skip_reason", "str", "Why the smoke step did not run"),
    F("smoke.status", "str", "ok | failed (a check failed, a backend named in --backend cannot be imported, or the speed stage raised) | timeout (child killed) | crash (child died or hit a CUDA error)"),
    F("smoke.error", "str", "Error text when the smoke child crashed, hit a CUDA error or hung"),
    F("smoke.stage", "str", "The stage the child was in when it crashed or hung (e.g. 'torchao')"),
    F("smoke.device", "str", "Device the smoke step ran on, e.g. 'NVIDIA H100 80GB HBM3' or 'cpu'"),
    F("smoke.device_type", "str", "cuda | cpu"),
    F("smoke.cc", "cc", "Compute capability of the smoke device as torch reports it"),
    F("smoke.torch_version", "version", "torch version inside the smoke child"),
    F("smoke.duration_s", "float", "Wall time of the smoke child, seconds (torch import included)"),
    F("smoke.backends", "list", "Backends the smoke step exercised: scaled_mm, torchao, te"),
)

_SCALED_MM = (
    F("smoke.scaled_mm.api", "str", "torch._scaled_mm return convention: tuple (torch < 2.5) | tensor"),
    F("smoke.scaled_mm.identity_ok", "bool", "x8 @ I == x8 exactly (layout and unit-scale check)"),
    F("smoke.scaled_mm.scale_ok", "bool", "Power-of-two scales act as multiplicative dequantization factors, exactly"),
    F("smoke.scaled_mm.e5m2_refused", "bool", "e5m2 x e5m2 raised, as cuBLASLt must (CUDA only; absent on CPU)"),
    F("smoke.scaled_mm.sqnr_db", "float", "FP8 GEMM vs fp32 reference of the same inputs, dB"),
    F("smoke.scaled_mm.kernel_sqnr_db", "float", "FP8 GEMM vs fp32 GEMM of the dequantized FP8 inputs, dB"),
    F("smoke.scaled_mm.engaged", "bool", "SQNR at or below the bypass ceiling: FP8 really ran"),
    F("smoke.scaled_mm.accurate", "bool", "SQNR at or above the FP8 floor: FP8 is not broken"),
    F("smoke.scaled_mm.finite", "bool", "No NaN/Inf in the FP8 GEMM output"),
    F("smoke.scaled_mm.error", "str", "Exception raised by the raw _scaled_mm checks"),
)

_TORCHAO = (
    F("smoke.torchao.api", "str", "Config API used: from_recipe_name | recipe_name_to_linear_config | default_config"),
    F("smoke.torchao.emulate", "bool", "torchao ran with emulate=True (CPU or no FP8 hardware)"),
    F("smoke.torchao.converted", "list", "Linear layers of the tiny model converted to Float8Linear"),
    F("smoke.torchao.unconverted", "list", "Linear layers left in high precision, 'name: reason'"),
    F("smoke.torchao.converted_count", "int", "Number of converted Linear layers"),
    F("smoke.torchao.unconverted_count", "int", "Number of Linear layers left in high precision"),
    F("smoke.torchao.gemm_flops_share", "float", "Tiny model: share (0-1) of its GEMM work per step that runs in FP8, from weight shapes as runtime.fp8.gemm_flops_share (its 64x10 head stays in high precision on purpose: 0.96)"),
    F("smoke.torchao.sqnr_db", "float", "Float8Linear output vs fp32 reference, dB"),
    F("smoke.torchao.xgrad_sqnr_db", "float", "Float8Linear input gradient vs fp32 reference, dB"),
    F("smoke.torchao.wgrad_sqnr_db", "float", "Float8Linear weight gradient vs fp32 reference, dB"),
    F("smoke.torchao.engaged", "bool", "Layers converted and forward SQNR at or below the bypass ceiling"),
    F("smoke.torchao.accurate", "bool", "Forward and gradient SQNR at or above the FP8 floors"),
    F("smoke.torchao.finite", "bool", "No NaN/Inf in outputs, gradients or training losses"),
    F("smoke.torchao.train_ok", "bool", "Tiny model: loss finite and falling, gradients within band"),
    F("smoke.torchao.loss_decreased", "bool", "Tiny model: last loss below the first"),
    F("smoke.torchao.train_grad_sqnr_db", "float", "Tiny model: lowest FP8-layer weight-grad SQNR vs fp32, dB"),
    F("smoke.torchao.error", "str", "Exception raised by the torchao checks (or 'not importable: ...')"),
)

_TE = (
    F("smoke.te.version", "version", "transformer_engine.__version__ inside the smoke child"),
    F("smoke.te.available", "bool", "FP8GlobalStateManager.is_fp8_available() said yes"),
    F("smoke.te.reason", "str", "TE's own reason string when FP8 is not available"),
    F("smoke.te.api", "str", "Autocast API used: autocast (TE >= 2.9) | fp8_autocast"),
    F("smoke.te.recipe", "str", "Recipe of the numerics and drift checks (delayed)"),
    F("smoke.te.sqnr_db", "float", "te.Linear output vs fp32 reference (DelayedScaling, iteration 2), dB"),
    F("smoke.te.xgrad_sqnr_db", "float", "te.Linear input gradient vs fp32 reference, dB"),
    F("smoke.te.engaged", "bool", "Forward SQNR at or below the bypass ceiling"),
    F("smoke.te.accurate", "bool", "Forward and gradient SQNR at or above the FP8 floors"),
    F("smoke.te.finite", "bool", "No NaN/Inf in outputs, gradients or training losses"),
    F("smoke.te.fwd_scales_updated", "bool", "fp8_meta['scaling_fwd'].scale moved off 1.0 after iteration 1"),
    F("smoke.te.ckpt_bwd_scales_updated", "bool", "Under te.checkpoint, fp8_meta['scaling_bwd'].scale moved off 1.0"),
    F("smoke.te.ckpt_scale_drift", "bool", "Checkpointed and plain runs disagree (backward scales or x.grad): TE issue 1190"),
    F("smoke.te.ckpt_agree_sqnr_db", "float", "x.grad of the checkpointed run vs the plain run, dB"),
    F("smoke.te.ckpt_xgrad_sqnr_db", "float", "x.grad of the checkpointed run (1e-6 gradients) vs fp32, dB"),
    F("smoke.te.train_ok", "bool", "Tiny model with te.Linear: loss finite and falling, gradients within band"),
    F("smoke.te.loss_decreased", "bool", "Tiny TE model: last loss below the first"),
    F("smoke.te.train_grad_sqnr_db", "float", "Tiny TE model: lowest FP8-layer weight-grad SQNR vs fp32, dB"),
    F("smoke.te.converted", "list", "Linear layers of the tiny model built as te.Linear"),
    F("smoke.te.unconverted", "list", "Linear layers left as torch.nn.Linear, 'name: reason'"),
    F("smoke.te.converted_count", "int", "Number of te.Linear layers"),
    F("smoke.te.unconverted_count", "int", "Number of layers left as torch.nn.Linear"),
    F("smoke.te.gemm_flops_share", "float", "Tiny TE model: share (0-1) of its GEMM work per step in te.Linear, from weight shapes as runtime.fp8.gemm_flops_share (its 64x10 head stays torch.nn.Linear on purpose: 0.96)"),
    F("smoke.te.error", "str", "Exception raised by the TE checks (or 'not importable: ...')"),
)

_VERDICT = "restored | refused | drifted | not_applicable (the recipe keeps no FP8 state) | error"
_RESUME = (
    F("smoke.te.resume_status", "str", "DelayedScaling te.Linear trained, torch.save(state_dict()), torch.load, load_state_dict into a fresh module in the job's environment: " + _VERDICT),
    F("smoke.te.resume_error", "str", "Why loading the TE checkpoint failed (e.g. TE's pickle refusal (2.16.1, 2.17.1, >= 2.18))"),
    F("smoke.te.resume_fix", "str", "What to do about a refused or drifted TE resume"),
    F("smoke.te.resume_max_abs_diff", "float", "Next step after the TE resume vs the uninterrupted run: largest absolute difference (output, x.grad, w.grad)"),
    F("smoke.te.resume_unsafe_env_status", "str", "The same resume with NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1: " + _VERDICT),
    F("smoke.te.resume_unsafe_env_error", "str", "Why loading failed even with NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1"),
    F("smoke.te.resume_unsafe_env_max_abs_diff", "float", "Next-step difference after the resume with the variable set"),
    F("smoke.te.resume_dropped_status", "str", "The resume with _extra_state dropped and strict=False (the usual workaround): " + _VERDICT),
    F("smoke.te.resume_dropped_max_abs_diff", "float", "Next-step difference when _extra_state was dropped (the scales restarted at 1.0)"),
    F("smoke.te.resume_dcp_status", "str", "torch.distributed.checkpoint save and load on one rank: " + _VERDICT),
    F("smoke.te.resume_dcp_error", "str", "Why the DCP round trip of the TE module failed"),
    F("smoke.te.resume_dcp_max_abs_diff", "float", "Next-step difference after the DCP round trip"),
    F("smoke.te.resume_stateless_recipes", "list", "TE recipes whose resume check found no FP8 state to carry (current, mxfp8)"),
    F("smoke.torchao.resume_status", "str", "Float8Linear (tensorwise) trained, torch.save, torch.load (default weights_only), load_state_dict: " + _VERDICT),
    F("smoke.torchao.resume_error", "str", "Why loading the torchao checkpoint failed"),
    F("smoke.torchao.resume_fix", "str", "What to do about a refused or drifted torchao resume"),
    F("smoke.torchao.resume_rowwise_status", "str", "The same for the rowwise recipe: " + _VERDICT),
    F("smoke.torchao.resume_rowwise_error", "str", "Why the rowwise resume check failed"),
    F("smoke.torchao.resume_tensorwise_fsdp_all_gather_status", "str", "The same with enable_fsdp_float8_all_gather (float8 weight subclasses in the checkpoint): " + _VERDICT),
    F("smoke.torchao.resume_tensorwise_fsdp_all_gather_error", "str", "Why loading the checkpoint with float8 weight subclasses failed (torchtitan issue 651)"),
    F("smoke.torchao.resume_tensorwise_fsdp_all_gather_fix", "str", "What to do about it"),
    F("smoke.torchao.resume_dcp_status", "str", "torch.distributed.checkpoint round trip of the tensorwise model on one rank: " + _VERDICT),
    F("smoke.torchao.resume_dcp_error", "str", "Why the DCP round trip of the torchao model failed"),
)

_SPEED_GPUS = (
    F("smoke.speed.job_speedup_min", "float", "Lowest FP8/BF16 GEMM speedup over the job's shapes (t_bf16 / t_fp8)"),
    F("smoke.speed.job_shapes", "list", "[M, K, N] job shapes measured (padded to multiples of 16)"),
    F("smoke.speed.ref_speedup", "float", "FP8/BF16 GEMM speedup at 8192^3"),
    F("smoke.speed.skipped", "str", "Why no speed was measured"),
    F("smoke.speed.error", "str", "Exception raised by the speed measurement"),
    F("smoke.gpus.checked", "int", "GPUs the GEMM checks ran on (--all-gpus)"),
    F("smoke.gpus.bad", "list", "GPUs that failed the GEMM checks, 'cuda:i (name): reason'"),
    F("smoke.gpus.bad_count", "int", "Number of GPUs that failed the GEMM checks"),
)

SPECS = _COMMON + _SCALED_MM + _TORCHAO + _TE + _RESUME + _SPEED_GPUS
