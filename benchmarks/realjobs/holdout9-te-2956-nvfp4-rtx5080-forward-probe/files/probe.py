# RECONSTRUCTION of NVIDIA/TransformerEngine issue 2956 (2026-05-03, "NVFP4BlockScaling forward pass
# fails on RTX 5080 (sm_120) when K is a multiple of 128"): the square-shape boundary probe the issue
# describes (te.Linear forward under the NVFP4BlockScaling recipe, M=N=K), written out; the issue's
# own script is not quoted in full. TE 2.14.1, torch 2.11.0+cu130, RTX 5080 (the issue).
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import NVFP4BlockScaling

recipe = NVFP4BlockScaling()

for dim in (64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096):
    layer = te.Linear(dim, dim, bias=False, params_dtype=torch.bfloat16, device="cuda")
    x = torch.randn(dim, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    with te.autocast(enabled=True, recipe=recipe):
        y = layer(x)
    y.sum().backward()
    torch.cuda.synchronize()
    print(dim, "OK")
