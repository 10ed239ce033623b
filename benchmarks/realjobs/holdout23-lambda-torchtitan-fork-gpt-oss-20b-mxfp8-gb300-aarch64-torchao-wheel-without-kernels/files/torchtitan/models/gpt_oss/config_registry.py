# Source: LambdaLabsML/torchtitan @ 035085233cc4afea88d5b47a8e6281dfa96601f3 torchtitan/models/gpt_oss/config_registry.py
# REDUCTION: the first part of the file (imports, gpt_oss_20b, gpt_oss_120b, the MXFP8 helper and
# gpt_oss_20b_gb300_mxfp8) kept verbatim; the later GB300 sweep configs, which do not use MXFP8, are left out.
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from torchtitan.components.checkpoint import CheckpointManager
from torchtitan.components.loss import ChunkedLossWrapper, CrossEntropyLoss
from torchtitan.components.lr_scheduler import LRSchedulersContainer
from torchtitan.components.metrics import MetricsProcessor
from torchtitan.components.optimizer import default_adamw
from torchtitan.components.quantization import (
    Float8GroupedExpertsConverter,
    Float8LinearConverter,
    MXFP8GroupedExpertsConverter,
    MXFP8LinearConverter,
)
from torchtitan.components.validate import Validator
from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC
from torchtitan.hf_datasets.text_datasets import HuggingFaceTextDataLoader
from torchtitan.models.common.config_utils import decoder_vocab_size
from torchtitan.tools.logging import logger
from torchtitan.trainer import Trainer

from . import model_registry


def gpt_oss_20b() -> Trainer.Config:
    model_spec = model_registry("20b")
    return Trainer.Config(
        loss=ChunkedLossWrapper.Config(
            loss_fn=CrossEntropyLoss.Config(
                global_vocab_size=decoder_vocab_size(model_spec),
            ),
        ),
        hf_assets_path="./assets/hf/gpt-oss-20b",
        model_spec=model_spec,
        dataloader=HuggingFaceTextDataLoader.Config(dataset="c4"),
        optimizer=default_adamw(lr=8e-4),
        lr_scheduler=LRSchedulersContainer.Config(
            warmup_steps=2000,
            decay_ratio=0.8,
            decay_type="cosine",
            min_lr_factor=0.1,
        ),
        training=TrainingConfig(
            local_batch_size=1,
            seq_len=8192,
            steps=10000,
        ),
        parallelism=ParallelismConfig(
            expert_parallel_degree=1,
        ),
        checkpoint=CheckpointManager.Config(interval=500),
        activation_checkpoint=FullAC.Config(),
    )


def gpt_oss_120b() -> Trainer.Config:
    model_spec = model_registry("120b")
    return Trainer.Config(
        loss=ChunkedLossWrapper.Config(
            loss_fn=CrossEntropyLoss.Config(
                global_vocab_size=decoder_vocab_size(model_spec),
            ),
        ),
        hf_assets_path="./assets/hf/gpt-oss-120b",
        model_spec=model_spec,
        dataloader=HuggingFaceTextDataLoader.Config(dataset="c4"),
        optimizer=default_adamw(lr=8e-4),
        lr_scheduler=LRSchedulersContainer.Config(
            warmup_steps=2000,
            decay_ratio=0.8,
            decay_type="cosine",
            min_lr_factor=0.1,
        ),
        training=TrainingConfig(
            local_batch_size=1,
            seq_len=8192,
            steps=10000,
        ),
        parallelism=ParallelismConfig(
            expert_parallel_degree=1,
        ),
        checkpoint=CheckpointManager.Config(interval=500),
        activation_checkpoint=FullAC.Config(),
    )


# ---------------------------------------------------------------------------
# GB300 tuning sweep (64x GB300 = 16 nodes x 4).
#
# All of these descend from gpt_oss_20b, so anything not named here stays at the
# baseline: seq_len 8192, FSDP over all ranks, expert_parallel_degree 1, AdamW
# lr 8e-4, C4.
#
# Measured numbers for each are in gb300/TUNING_RESULTS.md. Baseline for
# comparison is 287.8 TFLOP/s/GPU.
#
# Note every one of these still needs --training.disable_cuda_graphs at launch:
# varlen attention's cu_seqlens changes length per step, so CUDA graph capture
# fails on step 2. That is a property of the stock model config, not of these.
# ---------------------------------------------------------------------------


def _20b_mxfp8(config: Trainer.Config, flavor: str = "20b") -> Trainer.Config:
    """Apply MXFP8 to the MoE grouped GEMMs and the dense Linears in attention.

    fqns is an include-list (substring match). gpt-oss has no shared experts and
    no per-layer feed_forward - every layer's FFN is the MoE - so 'attention' is
    the whole dense-Linear surface. The router gate and lm_head stay in bf16.

    pad_multiple=128 is required by the CuTeDSL quantization kernel on sm_100+.
    """
    model_compile_enabled = (
        config.compile.enable and "model" in config.compile.components
    )
    config.model_spec = model_registry(
        flavor,
        converters=[
            MXFP8LinearConverter.Config(
                model_compile_enabled=model_compile_enabled,
                fqns=["attention"],
            ),
            MXFP8GroupedExpertsConverter.Config(
                model_compile_enabled=model_compile_enabled,
                pad_multiple=128,
            ),
        ],
    )
    return config


def gpt_oss_20b_gb300_mxfp8() -> Trainer.Config:
    """MXFP8 quantization, everything else baseline."""
    return _20b_mxfp8(gpt_oss_20b())
