# RECONSTRUCTION for fp8-doctor holdout20 (eval21) of NVIDIA/TransformerEngine issue 1654 (2025-04-08): the reporter ran
# "the PyTorch example code from the Transformer Engine documentation" as /workspace/fp8.py on an RTX 5090; the
# traceback ends at fp8.py line 22, loss.backward(). Below is README.rst's PyTorch quickstart of NVIDIA/TransformerEngine
# at tag v2.2 (c55e425ac5751c72bfa656560fc7c65ab7d895e9), whose 22nd line is loss.backward(), copied verbatim.
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
with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
    out = model(inp)

loss = out.sum()
loss.backward()
