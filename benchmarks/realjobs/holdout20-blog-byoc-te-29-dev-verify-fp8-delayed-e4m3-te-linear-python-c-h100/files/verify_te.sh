#!/bin/bash
# fp8-doctor holdout20 (eval21): verdimrc/playground-nemo-2.0-gh @ 6129a1ad5d345ee9628fa6fba4bbdc48a7d3bce3,
# 05-byoc-te-mb/with-ngc-pytorch-25.06-cleanup.md section "2.3. Verify TE": the code block, verbatim below this header.
# https://github.com/NVIDIA/TransformerEngine?tab=readme-ov-file#pytorch
python -c 'import transformer_engine.pytorch as te ; print(te.__path__)'
python -c '
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

# Set dimensions.
in_features = 768
out_features = 3072
hidden_size = 2048

# Initialize model and inputs.
model = te.Linear(in_features, out_features, bias=True)
inp = torch.randn(hidden_size, in_features, device="cuda")

# Create an FP8 recipe. Note: All input args are optional.
fp8_recipe = recipe.DelayedScaling(margin=0, fp8_format=recipe.Format.E4M3)

# Enable autocasting for the forward pass
for _ in range(100_000):   # HAHA: give me enough time to `nvidia-smi -l 1` in another terminal
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        out = model(inp)

loss = out.sum()
loss.backward()
'

# On GPU without fp8 capability.
python -c '
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

# Set dimensions.
in_features = 768
out_features = 3072
hidden_size = 2048

# Initialize model and inputs.
model = te.Linear(in_features, out_features, bias=True)
inp = torch.randn(hidden_size, in_features, device="cuda")

out = model(inp)
loss = out.sum()
loss.backward()
'
