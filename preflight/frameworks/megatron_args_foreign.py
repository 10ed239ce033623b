"""Flags on a Megatron launch line that Megatron-LM does not have but that speak of precision.

A launch line is read as Megatron-LM's argv by its flags (``--seq-length``, ``--micro-batch-size``),
but the program it runs may be another trainer that takes Megatron-like flags and picks its
precision with its own (holdout25, Megatron-Bridge issue 1707: BioNeMo's ``train_evo2 ...
--mixed-precision-recipe bf16-with-fp8-current-scaling-mixed``, an FP8 current-scaling preset,
read as a Megatron-LM line without ``--fp8-format``: FP8 a confident "no"). Megatron-LM's own
parser refuses an unknown flag, so such a flag on the line means either another program reads
it or the line never runs as written: in both cases what Megatron-LM's flags say about FP8 is not
the whole answer. :func:`foreign` finds the first such flag; :mod:`.megatron` then leaves a
"no FP8" Unknown naming it (an FP8 the line does ask for stands).

A flag is about precision when a dash / underscore separated part of its name is one of
:data:`_WORDS` (or names an FP8 / FP4 format), or when an unknown flag's value names an FP8 / FP4
format (``--linear-impl te_fp8``) and the flag does not name a file, folder, or a label
(:data:`_LABELS`: ``--load /ckpt/x-fp8``, ``--wandb-exp-name fp8-run`` are Megatron's and say
nothing about the run's precision).

:data:`OWN` is every Megatron-LM flag whose name matches, read from
megatron/training/arguments.py at core_r0.12.0, core_v0.14.0, core_v0.16.0 and core_v0.19.0
(``git show TAG:megatron/training/arguments.py``, the ``'--x'`` strings), with the flags
core_v0.19.0 generates from TransformerConfig's FP8 / FP4 fields
(megatron/core/transformer/transformer_config.py l.566-669) and the 23.x ``--fp8-hybrid`` /
``--fp8-e4m3`` / ``--fp8-e5m2``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

OWN: frozenset[str] = frozenset({
    "accumulate-allreduce-grads-in-fp32", "attention-softmax-in-fp32", "bf16",
    "ddp-reduce-scatter-with-fp32-accumulation", "disable-bf16-reduced-precision-matmul",
    "exp-avg-dtype", "exp-avg-sq-dtype", "first-last-layers-bf16", "fp16",
    "fp16-lm-cross-entropy", "fp32-residual-connection", "fp4-format", "fp4-param",
    "fp4-param-gather", "fp4-quantizer-factory", "fp4-recipe", "fp8-amax-compute-algo",
    "fp8-amax-history-len", "fp8-dot-product-attention", "fp8-e4m3", "fp8-e5m2", "fp8-format",
    "fp8-hybrid", "fp8-interval", "fp8-margin", "fp8-multi-head-attention", "fp8-output-proj",
    "fp8-param", "fp8-param-gather", "fp8-quantizer-factory", "fp8-recipe", "fp8-wgrad",
    "grad-reduce-in-bf16", "keep-fp8-transpose-cache",
    "keep-fp8-transpose-cache-when-using-custom-fsdp", "kitchen-config-file",
    "kitchen-recipe-number", "logits-save-dtype", "main-grads-dtype", "main-params-dtype",
    "mamba-inference-conv-states-dtype", "mamba-inference-ssm-states-dtype",
    "mamba-training-ssm-states-dtype", "megatron-fsdp-grad-comm-dtype",
    "megatron-fsdp-main-grads-dtype", "megatron-fsdp-main-params-dtype", "moe-router-dtype",
    "moe-router-padding-for-fp8", "muon-fp32-matmul-prec", "no-fp8-wgrad",
    "num-layers-at-end-in-bf16", "num-layers-at-start-in-bf16",
    "reuse-grad-buf-for-mxfp8-param-ag", "te-precision-config-file", "transformer-impl",
    "use-precision-aware-optimizer", "params-dtype",
})
"""Megatron-LM's own flags about precision (dash form), read at the tags above. Not ``--fp8`` /
``--fp4``: their dests are ``fp8`` / ``fp4`` but the flags are ``--fp8-format`` / ``--fp4-format``;
a bare ``--fp8`` is another trainer's switch (BioNeMo's NeMo 2 ``train_evo2 --fp8``)."""

_WORDS = frozenset({"fp8", "fp4", "float8", "mxfp8", "mxfp4", "nvfp4", "e4m3", "e5m2",
                    "precision", "recipe", "dtype", "quant", "quantize", "quantization",
                    "quantized", "amp"})
_FORMAT = re.compile(r"(?i)(?:^|[^a-z0-9])(?:fp8|fp4|float8\w*|mxfp[48]|nvfp4|e4m3\w*|e5m2)"
                     r"(?:[^a-z0-9]|$)")
_LABELS = frozenset({"load", "save", "path", "dir", "file", "model", "name", "tokenizer",
                     "data", "ckpt", "checkpoint", "output", "log", "logs", "wandb", "exp",
                     "project", "run", "tag", "prefix", "tensorboard", "cache", "url"})
_NOT_FLAGS = frozenset({"nproc-per-node", "nproc_per_node", "nnodes", "node-rank", "node_rank",
                        "master-addr", "master_addr", "master-port", "master_port",
                        "rdzv-endpoint", "rdzv_endpoint", "rdzv-backend", "rdzv_backend",
                        "rdzv-id", "rdzv_id", "standalone", "no-python", "no_python"})
"""torchrun's own options, read on the same line: never a training flag."""
MAX_LOOKED_AT = 4000
"""Facts looked at per job (a launch line carries far fewer flags; the reader caps them too)."""


def foreign(facts: Mapping[str, Any], prefix: str) -> tuple[str, Any] | None:
    """The first flag under ``prefix`` (``config.megatron``) that Megatron-LM does not have and
    that speaks of precision, as ``(--flag, value)``; None when there is none."""
    start = prefix + "."
    for count, (name, value) in enumerate(facts.items()):
        if count >= MAX_LOOKED_AT:
            break
        if not name.startswith(start):
            continue
        key = name[len(start):]
        if "." in key:              # a --yaml-cfg / test-case YAML key path, never a flag
            continue
        flag = key.replace("_", "-")
        if flag in OWN or flag in _NOT_FLAGS:
            continue
        parts = set(re.split(r"[-_]", key.lower()))
        if parts & _WORDS or _FORMAT.search(key):
            return "--" + flag, value
        if isinstance(value, str) and not parts & _LABELS and _FORMAT.search(value):
            return "--" + flag, value
    return None
