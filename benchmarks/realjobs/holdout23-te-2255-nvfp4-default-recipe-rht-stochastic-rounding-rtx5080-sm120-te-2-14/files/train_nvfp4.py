# RECONSTRUCTION from NVIDIA/TransformerEngine issue 2255 ("is NVFP4 not supported for rtx 50 series?"),
# comment of 2026-05-03 (RTX 5080, sm_120, TE 2.14.1 built with TORCH_CUDA_ARCH_LIST=12.0a): a small
# Transformer Engine model trained under te.fp8_autocast with the default NVFP4BlockScaling() recipe,
# the case the thread reports failing ("NVFP4BlockScaling() defaults still RED"), at M=1024, K=N=4096.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import NVFP4BlockScaling

torch.manual_seed(0)
device = "cuda"

model = torch.nn.Sequential(
    te.Linear(4096, 4096, bias=False, params_dtype=torch.bfloat16),
    torch.nn.GELU(),
    te.Linear(4096, 4096, bias=False, params_dtype=torch.bfloat16),
).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

recipe = NVFP4BlockScaling()  # defaults: random Hadamard transform and stochastic rounding on

for step in range(100):
    x = torch.randn(1024, 4096, device=device, dtype=torch.bfloat16)
    target = torch.randn(1024, 4096, device=device, dtype=torch.bfloat16)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
        out = model(x)
    loss = torch.nn.functional.mse_loss(out.float(), target.float())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(step, loss.item())
