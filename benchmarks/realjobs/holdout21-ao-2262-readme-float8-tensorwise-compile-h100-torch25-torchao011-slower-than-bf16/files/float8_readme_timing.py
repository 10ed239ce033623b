# RECONSTRUCTION of the script in pytorch/ao issue 2262 (2025-05-26): the reporter's "test code", copied from the
# torchao.float8 README section "float8 linear with dynamic tensorwise scaling" (README at pytorch/ao
# a0a0969922000b2c0fc39fbbfd4ec69ee630eeb7, 2025-05-13, reproduced below; the import line is the issue's, which adds
# Float8LinearConfig and time) and timed with and without convert_to_float8_training / torch.compile. The timing
# wrapper is paraphrased.
import time

import torch
import torch.nn as nn
from torchao.float8 import Float8LinearConfig, convert_to_float8_training
from torchao.utils import TORCH_VERSION_AT_LEAST_2_5

if not TORCH_VERSION_AT_LEAST_2_5:
    raise AssertionError("torchao.float8 requires PyTorch version 2.5 or greater")

# create model and sample input
m = nn.Sequential(
    nn.Linear(2048, 4096),
    nn.Linear(4096, 128),
).bfloat16().cuda()
x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
optimizer = torch.optim.SGD(m.parameters(), lr=0.1)


# optional: filter modules from being eligible for float8 conversion
def module_filter_fn(mod: torch.nn.Module, fqn: str):
    # don't convert the last module
    if fqn == "1":
        return False
    # don't convert linear modules with weight dimensions not divisible by 16
    if isinstance(mod, torch.nn.Linear):
        if mod.in_features % 16 != 0 or mod.out_features % 16 != 0:
            return False
    return True


# convert specified `torch.nn.Linear` modules to `Float8Linear`
convert_to_float8_training(m, module_filter_fn=module_filter_fn)

# enable torch.compile for competitive performance
m = torch.compile(m)

# toy training loop
for _ in range(10):
    t0 = time.time()
    optimizer.zero_grad()
    y = m(x)
    y.sum().backward()
    optimizer.step()
    torch.cuda.synchronize()
    print(f"step time: {time.time() - t0:.4f} s")
