# Reduction of src/llm_train.py from NVIDIA/TransformerEngine issue 2304 (2025-10-26): the traceback shows
# `with precision_context:` entering te.fp8_autocast with an MXFP8 recipe (check_recipe_support raises
# "MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet"). Model reduced to TE layers.
import contextlib

import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling


def main():
    model = torch.nn.Sequential(
        te.LayerNormLinear(4096, 4096 * 3),
        te.Linear(4096 * 3, 4096),
    ).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    fp8_recipe = MXFP8BlockScaling()
    precision_context = te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)
    x = torch.randn(8, 2048, 4096, device="cuda", dtype=torch.bfloat16)
    with precision_context:
        out = model(x)
    out.float().pow(2).mean().backward()
    optimizer.step()


if __name__ == "__main__":
    main()
