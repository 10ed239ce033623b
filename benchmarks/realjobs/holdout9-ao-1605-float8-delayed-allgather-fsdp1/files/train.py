# RECONSTRUCTION of pytorch/ao issue 1605 (2025-01-23, "Float8 with FSDP and DelayedScaling:
# 'WeightWithDelayedFloat8CastTensor' object has no attribute '_tensor'"): the float8 lines are the
# ones quoted in the issue; the model and the data loop are left out (the issue does not show them,
# a stand-in stack of Linear layers takes the model's place). Wrapped with FSDP1 as the issue says
# ("model = FSDP(model, **kwargs)"; the maintainer: "Your code sample looks like it is using FSDP1").
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torchao.float8 import CastConfig, Float8LinearConfig, ScalingType, convert_to_float8_training

enable_fsdp_float8_all_gather = True

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096, bias=False) for _ in range(8)]).cuda()

weight_config = CastConfig(
    scaling_type=ScalingType.DELAYED
)
config = Float8LinearConfig(
    enable_fsdp_float8_all_gather=enable_fsdp_float8_all_gather,
    force_recompute_fp8_weight_in_bwd=enable_fsdp_float8_all_gather,  # same as enable_fsdp_float8_all_gather
    cast_config_weight=weight_config,
)
convert_to_float8_training(model, config=config)

model = FSDP(model, use_orig_params=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

for _ in range(10):
    x = torch.randn(16, 4096, device="cuda")
    loss = model(x).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
