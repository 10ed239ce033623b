# Launch per NVIDIA/Megatron-LM examples/rl/README.md @ 6cd6ea530e18776da54297bbf88292264264bcd3 (its torchrun train_rl.py command),
# with MODEL_OPTIONS / COMMON_OPTIONS / ENV_DEPENDENT taken from the packaged model config sourced first.
CHECKPOINT=/checkpoints/qwen3_30b_a3b_moe TOKENIZER_MODEL=/tokenizers/qwen3_30b_a3b_moe ENV_CONFIG=examples/rl/environment_configs/dapo.yaml
source ./qwen3_30b_a3b_moe.sh
torchrun --nproc-per-node=8 --nnodes=1 train_rl.py --perform-rl-step --finetune ${MODEL_OPTIONS} ${COMMON_OPTIONS} ${ENV_DEPENDENT}
