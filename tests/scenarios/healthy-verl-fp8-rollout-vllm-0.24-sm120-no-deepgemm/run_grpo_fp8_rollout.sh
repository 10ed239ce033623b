#!/usr/bin/env bash
# verl GRPO with a BF16 FSDP trainer and a blockwise FP8 vLLM rollout (rollout.quantization=fp8,
# the 128x128 block config of verl/workers/rollout/vllm_rollout/vllm_async_server.py at v0.9.0);
# keys as in examples/grpo_trainer/run_qwen3_30b_a3b_megatron.sh at v0.9.0 (483b8a00), written
# for this scenario.
set -x
export VLLM_USE_DEEP_GEMM=0   # vLLM takes its CUTLASS block-FP8 path (vllm issue 47130)
python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=64 \
    data.max_prompt_length=1024 \
    data.max_response_length=2048 \
    actor_rollout_ref.model.path=Qwen/Qwen3-8B \
    actor_rollout_ref.actor.strategy=fsdp2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    +actor_rollout_ref.rollout.quantization=fp8 \
    algorithm.rollout_correction.rollout_is=token \
    trainer.n_gpus_per_node=2 \
    trainer.nnodes=1 "$@"
