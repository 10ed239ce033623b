#!/bin/bash
# Script quoted in OpenRLHF/OpenRLHF issue 976 (comment of 2025-04-18, 4x A100 80G PPO with Ray); the
# comment is cut after --vllm_enable_sleep, the lines below it are not part of the quote.

cd OpenRLHF
export WANDB__SERVICE_WAIT=300
pwd

set -x

ray job submit --address="http://127.0.0.1:8265" \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   --ref_num_nodes 1 \
   --ref_num_gpus_per_node 4 \
   --reward_num_nodes 1 \
   --reward_num_gpus_per_node 4 \
   --critic_num_nodes 1 \
   --critic_num_gpus_per_node 4 \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 4 \
   --vllm_num_engines 4 \
   --vllm_tensor_parallel_size 1 \
   --colocate_all_models \
   --vllm_gpu_memory_utilization 0.5 \
   --pretrain Llama-3-8b-rm-mixture \
   --reward_pretrain Llama-3-8b-rm-mixture \
   --save_path checkpoint/ppo_checkpoints/final/llama3-8b-rlhf \
   --ckpt_path checkpoint/ppo_checkpoints/ckpt/llama3-8b-rlhf \
   --save_hf_ckpt \
   --micro_train_batch_size 2 \
   --train_batch_size 64 \
   --micro_rollout_batch_size 4 \
   --rollout_batch_size 512 \
   --n_samples_per_prompt 1 \
   --max_epochs 1 \
   --prompt_max_len 1024 \
   --max_samples 100000 \
   --generate_max_len 1024 \
   --zero_stage 2 \
   --bf16 \
   --actor_learning_rate 5e-7 \
   --critic_learning_rate 9e-6 \
   --init_kl_coef 0.01 \
   --prompt_data  triviaqa \
   --input_key confidence_prompt \
   --apply_chat_template \
   --normalize_reward \
   --gradient_checkpointing \
   --packing_samples \
   --vllm_sync_backend nccl \
   --enforce_eager \
   --vllm_enable_sleep
