# RECONSTRUCTION: minimal repro quoted in pytorch/ao issue 3982 (https://github.com/pytorch/ao/issues/3982), verbatim.
import torch, torch.nn as nn, torch.distributed as dist
from torch.distributed._composable.fsdp import fully_shard
from torchao.float8 import convert_to_float8_training
from torchao.float8.config import Float8LinearConfig

dist.init_process_group("nccl")
rank, ws = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)

model = nn.Sequential(
    nn.Linear(1024, 4096, bias=False),
    nn.Linear(4096, 1024, bias=False),
).cuda().bfloat16()

convert_to_float8_training(model, config=Float8LinearConfig(enable_fsdp_float8_all_gather=True))
fully_shard(model)

x = torch.randn(2, 128, 1024, device="cuda", dtype=torch.bfloat16)
model(x).sum().backward()  # crashes when 1024*4096 % world_size != 0
