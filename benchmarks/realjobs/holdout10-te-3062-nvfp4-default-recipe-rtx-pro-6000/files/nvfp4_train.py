# Source: NVIDIA/TransformerEngine issue 3062 (2026-05-29), the minimal repro, as a
# training step: NVFP4BlockScaling() with its defaults (RHT and stochastic rounding on the backward
# gradient quantization) on an RTX PRO 6000 Blackwell (sm_120).
import torch, transformer_engine.pytorch as tep
from transformer_engine.common.recipe import NVFP4BlockScaling

lin = tep.Linear(512, 512, bias=False, params_dtype=torch.float32).cuda()
x = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)
with tep.fp8_autocast(enabled=True, fp8_recipe=NVFP4BlockScaling()):  # RHT+SR default
    y = lin(x)
y.float().pow(2).mean().backward()
