# Faithful reduction of NVIDIA/TransformerEngine examples/pytorch/fsdp/fsdp.py at commit
# 07a87a7891dcb42be62109ae608ad3a08b6c3ac2 (Apache-2.0, Copyright (c) 2022-2026 NVIDIA CORPORATION
# & AFFILIATES). Kept verbatim: imports, the checkpoint helper, the arguments that set precision,
# layers and checkpointing (help texts shortened), the recipe selection for the default "fp8"
# preset, the FSDP wrapping and the training step. Dropped: the other argument types and presets'
# bodies, printing, memory profiling.
import os
import argparse

from functools import partial

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
from torch.distributed.fsdp.wrap import always_wrap_policy, transformer_auto_wrap_policy
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    apply_activation_checkpointing,
    checkpoint_wrapper,
)

import transformer_engine.pytorch as te
from transformer_engine.common.recipe import (
    Format,
    DelayedScaling,
    MXFP8BlockScaling,
    NVFP4BlockScaling,
)
from transformer_engine.pytorch.distributed import prepare_te_modules_for_fsdp

LOCAL_RANK = int(os.getenv("LOCAL_RANK", "0"))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", "1"))


def apply_fsdp_checkpointing(model, blocks):
    """apply activation checkpointing to model
    returns None as model is updated directly
    """
    wrapper = lambda m: checkpoint_wrapper(
        m,
        checkpoint_fn=te.distributed.checkpoint,
        use_reentrant=False,
        get_rng_state_tracker=get_cuda_rng_tracker,
    )
    check_fn = lambda submodule: isinstance(submodule, blocks)
    apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrapper, check_fn=check_fn)


def parse_fsdp_args():
    parser = argparse.ArgumentParser(
        description="Run Transformer Engine modules with the "
        + "torch.distributed.fsdp.FullyShardedDataParallel strategy."
    )
    parser.add_argument("-b", "--batch-size", type=int, default=32, help="Input batch size.")
    parser.add_argument("-s", "--seq-length", type=int, default=1048, help="Input sequence length.")
    parser.add_argument("-n", "--num-heads", type=int, default=16, help="Number of attention heads.")
    parser.add_argument("-d", "--head-dim", type=int, default=128, help="Dimension of each attention head.")
    parser.add_argument("-k", "--num-layers", type=int, default=3, help="Number of modules chained together.")
    parser.add_argument("--layer-type", type=te_layer, default=te.TransformerLayer, help="TE module type.")
    parser.add_argument("--checkpoint-layer", type=te_layer, default=None, help="Recompute this layer.")
    parser.add_argument("--no-fp8", action=StoreTrueExplicitAction, default=False, help="Disables te.autocast().")
    parser.add_argument("--no-defer-init", action="store_true", help="Defer init until after FSDP sharding.")
    parser.add_argument("--no-te-fsdp", action="store_true", help="Disable sharding of TE internal buffers.")
    parser.add_argument("--dtype", type=torch_dtype, default=torch.bfloat16, action=StoreExplicitAction)
    parser.add_argument("--precision", type=precision, default="fp8",
                        help="Precision preset: FP32, FP16, FP8, MXFP8, NVFP4. Default: fp8.")
    return parser.parse_args()


def train(opts):
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(LOCAL_RANK)

    layer_args, layer_kwargs = get_layer_args(opts)

    # The "fp8" preset (the default --precision):
    dtype = torch.bfloat16
    precision_format = Format.HYBRID
    recipe = DelayedScaling(
        fp8_format=precision_format, amax_history_len=32, amax_compute_algo="max"
    )
    no_fp8 = False

    layer_kwargs["params_dtype"] = dtype
    te_layer_list = []
    for i in range(opts.num_layers):
        if opts.layer_type in [te.MultiheadAttention, te.TransformerLayer]:
            layer_kwargs["layer_number"] = i + 1
        te_layer_list.append(opts.layer_type(*layer_args, **layer_kwargs))
    te_model = nn.Sequential(*te_layer_list)

    all_gpus = dist.new_group(backend="nccl")
    fsdp_wrap_policy = always_wrap_policy
    if opts.layer_type == te.TransformerLayer:
        # NOTE: FSDP causes illegal memory access without this special policy for Transformers
        fsdp_wrap_policy = partial(
            transformer_auto_wrap_policy, transformer_layer_cls={te.TransformerLayer}
        )
    te_model = FullyShardedDataParallel(
        te_model,
        process_group=all_gpus,
        use_orig_params=True,
        mixed_precision=MixedPrecision(
            param_dtype=dtype,
            reduce_dtype=torch.float32,
        ),
        auto_wrap_policy=fsdp_wrap_policy,
    )

    if opts.checkpoint_layer is not None:
        apply_fsdp_checkpointing(te_model, blocks=opts.checkpoint_layer)
    elif not opts.no_te_fsdp:
        prepare_te_modules_for_fsdp(te_model)

    optim = torch.optim.Adam(te_model.parameters(), lr=0.0001)

    for i in range(opts.num_iters):
        x = torch.rand(
            opts.seq_length,
            opts.batch_size,
            opts.num_heads * opts.head_dim,
            dtype=dtype,
            device="cuda",
        )
        # autocast needs to be given the FSDP process group for amax reductions
        with te.autocast(enabled=not no_fp8, recipe=recipe, amax_reduction_group=all_gpus):
            y = te_model(x)
            loss = y.sum()
        # calculate gradient and take training step outside the autocast context
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        del x


if __name__ == "__main__":
    args = parse_fsdp_args()
    train(args)
