# Launch per huggingface/accelerate benchmarks/fp8/torchao/README.md @ 00e4d264f66d9694ba6116a0dbe7ecec83655b43
# ("accelerate launch" with no accelerate config), on a 2-GPU host.
accelerate launch --num_processes 2 fsdp.py
