# Reduction of the repro of pytorch/ao issue 2586 (2025-07-23; the script itself is a gist linked from the
# issue): an HF transformer model, convert_to_float8_training, DDP, torch.compile(backend="eager").
# "no error if turn off compile, or turn off float8, or use FSDP instead of DDP" (the issue).
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torchao.float8 import convert_to_float8_training
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    config = AutoConfig.from_pretrained("meta-llama/Llama-3.1-8B")
    config.num_hidden_layers = 2
    model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16).cuda()
    convert_to_float8_training(model)
    model = DDP(model, device_ids=[rank])
    model = torch.compile(model, backend="eager")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, config.vocab_size, (2, 2048), device="cuda")
    loss = model(input_ids=x, labels=x).loss
    loss.backward()
    optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
