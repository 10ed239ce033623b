# RECONSTRUCTION (eval25) from NVIDIA/TransformerEngine issue 1687 ("fp8_model_init fails with MXFP8BlockScaling",
# April 2025): TE modules created under te.fp8_model_init with an MXFP8BlockScaling recipe (FP8-only weights, no
# high-precision copy), then trained under te.fp8_autocast with the same recipe on a Blackwell GPU. The thread gives
# the title and the maintainer's answer ("mxfp8 + fp8_model_init is not supported yet"), not the script.
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling

recipe = MXFP8BlockScaling()

with te.fp8_model_init(enabled=True, recipe=recipe):
    model = torch.nn.Sequential(
        te.LayerNormLinear(4096, 4096 * 3, bias=False),
        te.Linear(4096 * 3, 4096, bias=False),
    ).cuda()

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

for step in range(10):
    x = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
        y = model(x)
    loss = y.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
