# Launch per NVIDIA/Megatron-LM examples/rl/README.md @ 60408d5f12fb2757df6ba015db5787c3ed648652 (its torchrun train_rl.py command),
# with MODEL_OPTIONS / COMMON_OPTIONS / ENV_DEPENDENT taken from the packaged model config sourced first.
CHECKPOINT=/checkpoints/nemotron5_56b TOKENIZER_MODEL=/tokenizers/nemotron5_56b ENV_CONFIG=examples/rl/environment_configs/dapo.yaml
source ./nemotron5_56b.sh
torchrun --nproc-per-node=8 --nnodes=2 train_rl.py --perform-rl-step --finetune ${MODEL_OPTIONS} ${COMMON_OPTIONS} ${ENV_DEPENDENT}
