"""A BF16 baseline done right: the TE autocast follows --mixed_precision."""
import argparse

import torch
import transformer_engine.pytorch as te
from accelerate import Accelerator
from transformer_engine.common.recipe import DelayedScaling, Format

p = argparse.ArgumentParser()
p.add_argument("--mixed_precision", default="bf16")
args = p.parse_args()


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = te.LayerNormMLP(4096, 16384)

    def forward(self, x):
        with te.fp8_autocast(enabled=args.mixed_precision == "fp8", fp8_recipe=DelayedScaling(fp8_format=Format.HYBRID)):
            return x + self.mlp(x)


accelerator = Accelerator(mixed_precision=args.mixed_precision)
model = Block()
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
for step in range(10):
    x = torch.randn(16, 512, 4096, device="cuda")
    loss = model(x).float().pow(2).mean()
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
