#!/bin/bash
# fp8-doctor holdout19 (eval20): the reporter's verl launch script quoted in yaof20/Flash-RL issue 20 (2025-08-21),
# copied as quoted. One change: the quote ends the last override with a line continuation straight before `fi`
# (the reporter elided lines there); the trailing backslash is dropped so the script parses as bash.

export FLASHRL_CONFIG='fp8'

pip install flash-llm-rl

echo "FLASHRL_CONFIG: ${FLASHRL_CONFIG}"
MODEL_PATH=./Qwen2.5-1.5B-Instruct

if [ "${RANK}" = "0" ]; then
  export RAY_ADDRESS='http://127.0.0.1:1234'
  ray job submit --address ${RAY_ADDRESS} -- python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$train_files" \
    data.val_files="$val_files" \
    data.train_batch_size=128 \
    data.max_prompt_length=2048 \
    data.max_response_length=4096 \
    actor_rollout_ref.model.path=${MODEL_PATH} \
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.temperature=0.8 \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.actor.strategy='fsdp2' \
    actor_rollout_ref.rollout.quantization=fp8 \
    actor_rollout_ref.rollout.kv_cache_dtype=fp8 \
    reward_model.strategy='fsdp2' \
    trainer.logger=['console','tensorboard']
fi
