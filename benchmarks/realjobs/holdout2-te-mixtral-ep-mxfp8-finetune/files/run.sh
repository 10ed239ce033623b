# Launch per NVIDIA/TransformerEngine docs/examples/te_mixtral/run_finetune_ep.py @ 937c4de09a045f6363677eb066c72b7623e0dd0c
# (its --improvement choices: 3 = TE EP MXFP8 fused MLP), 8 GPUs as its --ep-size help assumes.
torchrun --nproc_per_node=8 run_finetune_ep.py --improvement 3 --ep-size 2
