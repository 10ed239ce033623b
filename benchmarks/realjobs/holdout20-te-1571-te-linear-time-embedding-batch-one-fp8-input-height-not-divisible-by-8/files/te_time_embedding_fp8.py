# RECONSTRUCTION for fp8-doctor holdout20 (eval21) from NVIDIA/TransformerEngine issue 1571 (2025-03-13):
# the reporter converted a video DiT's time embedding to te.Linear because its features are multiples of 8 and 16
#   (time_embedding): Sequential((0): Linear(in_features=256, out_features=5120, bias=True) (1): SiLU()
#                                (2): Linear(in_features=5120, out_features=5120, bias=True))
# and fed it one timestep (input dims [1, 256]) under FP8. The module structure and the input shape are the issue's;
# the surrounding lines are the minimum that runs them.
import torch
import torch.nn as nn
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

time_embedding = nn.Sequential(
    te.Linear(256, 5120, bias=True),
    nn.SiLU(),
    te.Linear(5120, 5120, bias=True),
).cuda()

fp8_recipe = recipe.DelayedScaling()

t_freq = torch.randn(1, 256, device="cuda")  # one sample's sinusoidal timestep features

with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
    e = time_embedding(t_freq)

e.sum().backward()
