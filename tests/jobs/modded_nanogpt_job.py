"""A faithful reduction of KellerJordan/modded-nanogpt @ f411b3d346aa52d3504324ca93c230fd84c6c07f
(``train_gpt.py``, ``triton_kernels.py``; the full files are in
benchmarks/realjobs/holdout12-modded-nanogpt-speedrun-*/files): the FP8 lm_head matmul as a
custom op over ``torch._scaled_mm`` (train_gpt.py l.70-162: ``@torch.library.custom_op(
"nanogpt::mm_t")``, ``mm_t_op.register_autograd`` at the top level), called by its registered
name in ``CastedLinearT.forward`` only ``if self.use_fp8 and self.training`` (l.978-980), with
``use_fp8 = not os.environ.get("DISABLE_FP8", False)`` in ``GPT.__init__`` (l.1224); the MLP's
``use_mlp_fp8 = self.training and not os.environ.get("DISABLE_FP8", False)`` (l.1498); the loss,
in training, ``FusedSoftcappedCrossEntropy.apply`` of triton_kernels.py (l.1687), whose forward
multiplies the lm_head in FP8 whatever DISABLE_FP8 says (triton_kernels.py l.1208-1224). Line
numbers are the upstream file's; bodies are cut to what decides FP8."""

from __future__ import annotations

from pathlib import Path

TRAIN_GPT = '''\
import os
import torch
import torch.nn as nn
from torch import Tensor
from triton_kernels import FusedSoftcappedCrossEntropy

@torch.library.custom_op("nanogpt::mm_t", mutates_args=())
def mm_t_op(x: Tensor, w: Tensor, x_s: float, w_s: float, grad_s: float):
    @torch.compile
    def impl(x: Tensor, w: Tensor):
        x_f8 = x.div(x_s).to(torch.float8_e4m3fn)
        w_f8 = w.div(w_s).to(torch.float8_e4m3fn)
        out = torch._scaled_mm(x_f8, w_f8.T.contiguous().T, out_dtype=torch.bfloat16,
                               scale_a=x.new_tensor(x_s), scale_b=x.new_tensor(w_s))
        return out, x_f8, w_f8
    return impl(x, w)

@mm_t_op.register_fake
def _(x: Tensor, w: Tensor, *_):
    return x @ w, x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)

def backward_t(ctx, grad_out: Tensor, *_):
    return grad_out, None, None, None, None

def setup_context_t(ctx, inputs, output):
    ctx.set_materialize_grads(False)

mm_t_op.register_autograd(backward_t, setup_context=setup_context_t)


class CastedLinearT(nn.Module):
    def __init__(self, in_features: int, out_features: int, use_fp8=False, x_s=1.0, w_s=1.0,
                 grad_s=1.0):
        super().__init__()
        self.use_fp8 = use_fp8
        self.x_s, self.w_s, self.grad_s = x_s, w_s, grad_s
        self.weight = nn.Parameter(torch.empty(in_features, out_features))

    def forward(self, x: Tensor):
        if self.use_fp8 and self.training:
            _x = x.flatten(0, -2)
            out = torch.ops.nanogpt.mm_t(_x, self.weight, x_s=self.x_s, w_s=self.w_s,
                                         grad_s=self.grad_s)[0]
            return out.reshape(*x.shape[:-1], -1)
        else:
            return x @ self.weight.type_as(x)


class GPT(nn.Module):
    def __init__(self, vocab_size: int, model_dim: int):
        super().__init__()
        use_fp8 = not os.environ.get("DISABLE_FP8", False)
        self.lm_head = CastedLinearT(model_dim, vocab_size, use_fp8=use_fp8, x_s=100/448,
                                     w_s=1.6/448, grad_s=0.75/448)

    def forward(self, x: Tensor, target_seq: Tensor):
        use_mlp_fp8 = self.training and not os.environ.get("DISABLE_FP8", False)
        if use_mlp_fp8:
            x = x.to(torch.float8_e4m3fn)
        LOSS
        return loss


model = GPT(vocab_size=50304, model_dim=768).cuda()
model = torch.compile(model, dynamic=False, fullgraph=True)
'''

LOSS_FUSED = '''\
if self.training:
            loss = FusedSoftcappedCrossEntropy.apply(x, target_seq, self.lm_head.weight,
                                                     self.lm_head.x_s, self.lm_head.w_s)
        else:
            loss = self.lm_head(x).float().mean()'''
"""The loss as the original computes it (l.1685-1692): FP8 in training whatever DISABLE_FP8."""
LOSS_HEAD = "loss = self.lm_head(x).float().mean()"
"""The loss through the lm_head only (as older modded-nanogpt records had it): DISABLE_FP8 off
turns every FP8 matmul off."""

TRITON_KERNELS = '''\
import torch

class FusedSoftcappedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, targets, lm_head_weight, x_s, w_s):
        x_f8 = x.div(x_s).to(torch.float8_e4m3fn)
        w_f8 = lm_head_weight.div(w_s).to(torch.float8_e4m3fn)
        logits = torch._scaled_mm(x_f8, w_f8.T.contiguous().T, out_dtype=torch.bfloat16,
                                  scale_a=x.new_tensor(x_s), scale_b=x.new_tensor(w_s),
                                  use_fast_accum=True)
        return logits.float().mean()
'''


def write(root: Path, loss: str = LOSS_HEAD, env: str = "", train: str | None = None) -> Path:
    """The job under ``root`` (run.sh, train_gpt.py, triton_kernels.py); returns run.sh."""
    (root / "train_gpt.py").write_text(train if train is not None else
                                       TRAIN_GPT.replace("LOSS", loss))
    (root / "triton_kernels.py").write_text(TRITON_KERNELS)
    run = root / "run.sh"
    run.write_text(f"#!/bin/bash\n{env}torchrun --standalone --nproc_per_node=8 train_gpt.py\n")
    return run
