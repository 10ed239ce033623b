"""Which launch-line flags take no value, and which of slime's flags are Megatron-LM's own.

Generated from upstream argparse declarations (the ``add_argument`` calls, read with ``ast``):

- :data:`MEGATRON_BARE`: ``action="store_true"`` / ``"store_false"`` /
  ``argparse.BooleanOptionalAction`` flags of Megatron-LM megatron/training/arguments.py at
  core_r0.12.0, core_v0.14.0 and core_v0.16.0 (the union: a flag kept its action when it moved
  into a config dataclass). Such a flag never takes the next word as its value (argparse leaves
  it to the next option, or refuses it as a stray positional): ``--colocate \\`` then
  ``${PRECISION_ARGS[@]}`` on the next line is two things (holdout8 meg-2582).
- :data:`SLIME_FLAGS` / :data:`SLIME_BARE`: every flag slime adds to Megatron's parser
  (``get_slime_extra_args_provider``, slime/utils/arguments.py at v0.3.1, commit a6272da0), and
  those of them that take no value. slime parses ``--sglang-*`` (SGLang's ServerArgs) and
  ``--router-*`` (sglang-router's RouterArgs) apart (slime/backends/sglang_utils/arguments.py):
  :data:`SLIME_PREFIXES`. Every other flag of ``train.py`` goes to Megatron-LM's own parser
  (``megatron_parse_args(extra_args_provider=...)``), so it is a Megatron flag
  (:func:`preflight.frameworks.megatron_args.megatron_flags`).
"""

from __future__ import annotations

MEGATRON_BARE: frozenset[str] = frozenset({
    "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split",
    "accumulate-allreduce-grads-in-fp32", "add-qkv-bias", "adlr-autoresume",
    "allow-ambiguous-pad-tokens", "apply-layernorm-1p", "apply-query-key-layer-scaling",
    "apply-residual-connection-post-layernorm", "apply-wd-to-qk-layernorm", "async-save",
    "attention-softmax-in-fp32", "auto-detect-ckpt-format", "bert-no-binary-head", "bf16",
    "biencoder-shared-query-context-model", "cache-mla-latents", "calc-ft-timeouts",
    "calculate-per-token-loss", "check-for-large-grads", "check-for-spiky-loss",
    "checkpoint-activations", "ckpt-assume-constant-structure",
    "ckpt-convert-update-legacy-dist-opt-format", "ckpt-fully-parallel-load",
    "ckpt-fully-parallel-save", "create-all-gather-group", "cross-entropy-loss-fusion",
    "data-parallel-random-init", "dataloader-defer-npy-index-mmap",
    "dataloader-fast-cache-load", "ddp-average-in-collective",
    "ddp-pad-buckets-for-high-nccl-busbw", "ddp-reduce-scatter-with-fp32-accumulation",
    "decode-only-cuda-graphs", "decrease-batch-size-if-needed",
    "defer-embedding-wgrad-compute", "delay-wgrad-compute", "deterministic-mode",
    "dino-norm-last-layer", "disable-bf16-reduced-precision-matmul", "disable-bias-linear",
    "disable-chunked-prefill", "disable-gloo-process-groups", "disable-jit-fuser",
    "disable-mamba-mem-eff-path", "disable-msc", "disable-straggler-on-startup",
    "disable-symmetric-registration", "disable-tp-comm-bulk-dgrad",
    "disable-tp-comm-bulk-wgrad", "disable-tp-comm-overlap-ag", "disable-tp-comm-overlap-rs",
    "disable-tp-comm-split-ag", "disable-tp-comm-split-rs", "distribute-saved-activations",
    "enable-chunked-prefill", "enable-cuda-graph", "enable-experimental", "enable-ft-package",
    "enable-full-sharding-in-hsdp", "eod-mask-loss", "exit-on-missing-checkpoint",
    "exit-signal-handler", "external-cuda-graph", "fake-process-group", "fim-data", "finetune",
    "first-last-layers-bf16", "flash-decode", "fp16", "fp16-lm-cross-entropy",
    "fp32-residual-connection", "fp8-param-gather", "fsdp-double-buffer",
    "fsdp-manual-registration", "full-validation", "grad-reduce-in-bf16",
    "group-query-attention", "grpo-filter-groups-with-same-reward",
    "inference-dynamic-batching", "inference-dynamic-batching-track-paused-request-events",
    "inference-rng-tracker", "inference-wandb-logging", "init-method-xavier-uniform",
    "init-model-with-meta-device", "inprocess-empty-cuda-cache", "inprocess-restart",
    "is-hybrid-model", "keep-fp8-transpose-cache",
    "keep-fp8-transpose-cache-when-using-custom-fsdp", "langrl-external-server",
    "legacy-tokenizer", "load-main-params-from-ckpt", "load-model-opt-format", "log-energy",
    "log-memory-to-tensorboard", "log-num-zeros-in-grad", "log-params-norm", "log-progress",
    "log-straggler", "log-throughput", "log-timers-to-tensorboard",
    "log-validation-ppl-to-tensorboard", "log-world-size-to-tensorboard", "manual-gc",
    "mock-data", "moe-apply-probs-on-input", "moe-enable-deepep", "moe-extended-tp",
    "moe-grouped-gemm", "moe-layer-recompute", "moe-pad-expert-input-to-capacity",
    "moe-pad-experts-for-cuda-graph-inference", "moe-per-layer-logging", "moe-permute-fusion",
    "moe-router-enable-expert-bias", "moe-router-force-load-balancing", "moe-router-fusion",
    "moe-router-padding-for-fp8", "moe-router-pre-softmax", "moe-shared-expert-overlap",
    "moe-use-legacy-grouped-gemm", "moe-use-upcycling", "multi-latent-attention",
    "multiple-validation-sets", "muon-no-split-qkv", "muon-use-nesterov",
    "nccl-all-reduce-for-prefill", "no-align-grad-reduce", "no-align-param-gather",
    "no-async-tensor-model-parallel-allreduce", "no-barrier-with-level-1-timing",
    "no-bias-dropout-fusion", "no-bias-gelu-fusion", "no-bias-swiglu-fusion",
    "no-check-for-nan-in-loss-and-grad", "no-ckpt-fully-parallel-save",
    "no-clone-scatter-output-in-embedding", "no-create-attention-mask-in-dataloader",
    "no-data-sharding", "no-fp8-wgrad", "no-gradient-accumulation-fusion",
    "no-gradient-reduce-div-fusion", "no-initialization", "no-load-optim", "no-load-rng",
    "no-log-loss-scale-to-tensorboard", "no-manual-gc-eval", "no-masked-softmax-fusion",
    "no-mmap-bin-files", "no-one-logger", "no-overlap-p2p-communication",
    "no-persist-layer-norm", "no-pin-cpu-grads", "no-pin-cpu-params", "no-position-embedding",
    "no-rope-fusion", "no-save-optim", "no-save-rng", "no-scatter-gather-tensors-in-pipeline",
    "no-strict-fsdp-dtensor-load", "no-use-tokenizer-model-from-checkpoint-args",
    "one-logger-async", "openai-gelu", "optimizer-cpu-offload", "output-bert-embeddings",
    "overlap-cpu-optimizer-d2h-h2d", "overlap-grad-reduce", "overlap-moe-expert-parallel-comm",
    "overlap-p2p-communication-warmup-flush", "overlap-param-gather",
    "overlap-param-gather-with-optimizer-step", "override-opt_param-scheduler",
    "perform-rl-step", "profile", "qk-l2-norm", "qk-layernorm", "quick-geglu",
    "recompute-activations", "record-memory-history", "replication", "reset-attention-mask",
    "reset-position-ids", "retriever-score-scaling", "retro-add-retriever",
    "retro-no-verify-neighbor-count", "reuse-grad-buf-for-mxfp8-param-ag",
    "rl-inference-logprobs-is-correction", "rl-offload-inference-model-weights-when-idle",
    "rl-offload-kv-cache-during-training", "rl-offload-optimizer-during-inference",
    "rl-partial-rollouts", "rl-remove-kv-cache-during-training", "rl-reset-cuda-graphs",
    "rl-skip-bos-token", "rl-training-cuda-graphs", "rl-use-sequence-packing",
    "rl-verify-model-weights-swap", "rotary-interleaved", "run-workload-inspector-server",
    "sequence-parallel", "sft", "skip-train", "squared-relu", "swiglu", "te-rng-tracker",
    "test-mode", "tokenizer-hf-include-special-tokens", "tokenizer-hf-use-fast",
    "tokenizer-sentencepiece-legacy", "torch-fsdp2-no-reshard-after-forward",
    "tp-comm-overlap", "tp-comm-overlap-rs-dgrad", "trust-remote-code",
    "untie-embeddings-and-output-weights", "use-checkpoint-args",
    "use-checkpoint-opt_param-scheduler", "use-cpu-initialization", "use-custom-fsdp",
    "use-dist-ckpt", "use-distributed-optimizer", "use-flash-attn",
    "use-fused-weighted-squared-relu", "use-legacy-models", "use-legacy-static-engine",
    "use-mcore-models", "use-megatron-fsdp", "use-mp-args-from-checkpoint-args", "use-nccl-ub",
    "use-one-sent-docs", "use-persistent-ckpt-worker", "use-precision-aware-optimizer",
    "use-pytorch-profiler", "use-ring-exchange-p2p", "use-rope-scaling",
    "use-rotary-position-embeddings", "use-sharp", "use-torch-fsdp2",
    "use-torch-optimizer-for-cpu-offload", "use-tp-pp-dp-mapping", "vision-pretraining"})
"""Megatron-LM flags that take no value (core_r0.12.0 to core_v0.16.0)."""

SLIME_FLAGS: frozenset[str] = frozenset({
    "actor-num-gpus-per-node", "actor-num-nodes", "advantage-estimator", "allgather-cp",
    "apply-chat-template", "apply-chat-template-kwargs", "balance-by-flops", "balance-data",
    "buffer-filter-path", "check-weight-update-equal", "ci-disable-kl-checker",
    "ci-load-grad-norm", "ci-save-grad-norm", "ci-test", "colocate",
    "custom-advantage-function-path", "custom-convert-samples-to-train-data-path",
    "custom-eval-rollout-log-function-path", "custom-generate-function-path",
    "custom-loss-function-path", "custom-megatron-before-log-prob-hook-path",
    "custom-megatron-before-train-step-hook-path", "custom-megatron-init-path",
    "custom-model-provider-path", "custom-pg-loss-reducer-function-path",
    "custom-reward-post-process-path", "custom-rm-path", "custom-rollout-log-function-path",
    "custom-tis-function-path", "custom-update-weight-post-write-path",
    "data-pad-size-multiplier", "data-source-path", "debug-rollout-only", "debug-train-only",
    "disable-compute-advantages-and-returns", "disable-grpo-std-normalization",
    "disable-rewards-normalization", "disable-rollout-global-dataset",
    "disable-wandb-random-suffix", "dump-details", "dynamic-sampling-filter-path",
    "enable-mtp-training", "entropy-coef", "eps-clip", "eps-clip-c", "eps-clip-high",
    "eval-config", "eval-function-path", "eval-input-key", "eval-label-key",
    "eval-max-context-len", "eval-max-prompt-len", "eval-max-response-len",
    "eval-min-new-tokens", "eval-prompt-data", "eval-reward-key", "eval-temperature",
    "eval-tool-key", "eval-top-k", "eval-top-p", "fetch-trajectory-retry-times",
    "freeze-params-name-list", "gamma", "get-mismatch-metrics", "group-rm", "hf-checkpoint",
    "http-proxy", "input-key", "keep-old-actor", "kl-coef", "kl-loss-coef", "kl-loss-type",
    "label-key", "lambd", "load-debug-rollout-data", "load-debug-rollout-data-subsample",
    "load-forge-rollout-data", "log-correct-samples", "log-multi-turn", "log-passrate",
    "log-probs-chunk-size", "log-probs-max-tokens-per-gpu", "log-reward-category",
    "loss-mask-type", "loss-type", "mask-offpolicy-in-partial-rollout", "max-tokens-per-gpu",
    "megatron-config-path", "memory-recorder", "memory-snapshot-dir",
    "memory-snapshot-num-steps", "metadata-key", "min-batch-collection-ratio", "model-name",
    "multimodal-keys", "n-samples-per-eval-prompt", "n-samples-per-prompt",
    "normalize-advantages", "num-critic-only-steps", "num-epoch", "num-gpus-per-node",
    "num-rollout", "num-steps-per-rollout", "offload", "offload-rollout", "offload-train",
    "only-train-params-name-list", "opd-kl-coef", "opd-teacher-ckpt-step", "opd-teacher-load",
    "opd-type", "opsm-delta", "over-sampling-batch-size", "partial-rollout", "profile-target",
    "prompt-data", "qwen-gdn-backend", "recompute-loss-function", "ref-ckpt-step", "ref-load",
    "ref-update-interval", "release-train", "reset-optimizer-states", "reward-key", "rm-type",
    "rm-url", "rollout-all-samples-process-path", "rollout-batch-size", "rollout-buffer-url",
    "rollout-data-postprocess-path", "rollout-data-transport", "rollout-external-engine-addrs",
    "rollout-function-path", "rollout-health-check-first-wait",
    "rollout-health-check-interval", "rollout-health-check-timeout", "rollout-max-context-len",
    "rollout-max-prompt-len", "rollout-max-response-len", "rollout-num-gpus",
    "rollout-num-gpus-per-engine", "rollout-sample-filter-path", "rollout-sample-hook-path",
    "rollout-seed", "rollout-shuffle", "rollout-skip-special-tokens", "rollout-stop",
    "rollout-stop-token-ids", "rollout-task-type", "rollout-temperature", "rollout-top-k",
    "rollout-top-p", "save-debug-rollout-data", "save-debug-train-data", "save-hf",
    "skip-eval-before-train", "start-rollout-id", "tb-experiment-name", "tb-project-name",
    "tis-clip", "tis-clip-low", "tool-key", "train-backend", "train-env-vars",
    "update-weight-buffer-size", "update-weight-delta-checksum",
    "update-weight-delta-encoding", "update-weight-disk-dir", "update-weight-disk-keep-files",
    "update-weight-local-checkpoint-dir", "update-weight-mode", "update-weight-transport",
    "update-weights-interval", "use-distributed-post", "use-dynamic-batch-size",
    "use-fault-tolerance", "use-kl-loss", "use-opd", "use-opsm", "use-rollout-entropy",
    "use-rollout-logprobs", "use-rollout-routing-replay", "use-routing-replay",
    "use-stateless-adam", "use-tensorboard", "use-tis", "use-unbiased-kl", "use-wandb",
    "value-clip", "wandb-always-use-train-step", "wandb-dir", "wandb-group", "wandb-host",
    "wandb-key", "wandb-mode", "wandb-run-id", "wandb-team",
    # later: slime a74ae3a0 (2026-08-11) slime/utils/arguments.py l.1471-1500, its
    # DeepGEMM alignment hooks (frameworks/slime_deepgemm.py)
    "megatron-deepgemm-forward-layers", "megatron-deepgemm-forward-modules",
    "megatron-deepgemm-moe-forward-layers", "megatron-deepgemm-moe-forward-modules"})
"""The flags slime v0.3.1 adds to Megatron-LM's parser (not Megatron's own)."""

SLIME_BARE: frozenset[str] = frozenset({
    "allgather-cp", "apply-chat-template", "balance-by-flops", "balance-data",
    "check-weight-update-equal", "ci-disable-kl-checker", "ci-test", "colocate",
    "debug-rollout-only", "debug-train-only", "disable-compute-advantages-and-returns",
    "disable-grpo-std-normalization", "disable-rewards-normalization",
    "disable-rollout-global-dataset", "disable-wandb-random-suffix", "enable-mtp-training",
    "get-mismatch-metrics", "group-rm", "keep-old-actor", "log-correct-samples",
    "log-multi-turn", "log-passrate", "mask-offpolicy-in-partial-rollout",
    "normalize-advantages", "offload", "offload-rollout", "offload-train", "partial-rollout",
    "recompute-loss-function", "release-train", "reset-optimizer-states", "rollout-shuffle",
    "rollout-skip-special-tokens", "skip-eval-before-train", "update-weight-disk-keep-files",
    "use-distributed-post", "use-dynamic-batch-size", "use-fault-tolerance", "use-kl-loss",
    "use-opd", "use-opsm", "use-rollout-entropy", "use-rollout-logprobs",
    "use-rollout-routing-replay", "use-routing-replay", "use-stateless-adam",
    "use-tensorboard", "use-tis", "use-unbiased-kl", "use-wandb", "wandb-always-use-train-step"})
"""Those of :data:`SLIME_FLAGS` that take no value (slime v0.3.1)."""

SLIME_PREFIXES: tuple[str, ...] = ("sglang-", "router-")
"""Flags slime parses apart from Megatron-LM (SGLang server and router arguments)."""
