# fp8-doctor holdout18 (eval19): copied verbatim from Scicom-AI-Enterprise-Organization/small-ablation @ a664148fbdaab5b6d4fa3e91bc8deb1f17fec9e0, fsdp2-fused-moe-lora-bf16-vs-fp8/bf16.sh.
WANDB_PROJECT="fsdp2-fused-moe-lora-bf16-vs-fp8" \
WANDB_NAME="bf16" \
TORCH_DISTRIBUTED_DEBUG="info" \
torchrun --nproc_per_node 8 \
-m bf16