# RECONSTRUCTION of modelscope/ms-swift issue 6994 (2025-12-10): the command as quoted in the issue,
# up to where the stored copy of the issue is cut (after --use_precision_aware_optimizer true).
# https://github.com/modelscope/ms-swift/issues/6994
PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \
NPROC_PER_NODE=8 \
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
megatron sft \
    --model /test/weights/Qwen3-Coder-30B-A3B-Instruct-FP8 \
    --train_type lora \
    --lora_rank 16 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --load_safetensors true \
    --save_safetensors true \
    --fp8_recipe delayed \
    --fp8_format hybrid \
    --fp8_param_gather true \
    --dataset /test/ml/CodeAlpaca-20k.jsonl \
    --load_from_cache_file true \
    --tensor_model_parallel_size 1 \
    --expert_model_parallel_size 8 \
    --moe_permute_fusion true \
    --moe_grouped_gemm true \
    --moe_shared_expert_overlap true \
    --moe_aux_loss_coeff 1e-6 \
    --micro_batch_size 2 \
    --global_batch_size 16 \
    --recompute_granularity full \
    --recompute_method uniform \
    --recompute_num_layers 1 \
    --max_epochs 1 \
    --finetune true \
    --cross_entropy_loss_fusion true \
    --lr 1e-5 \
    --lr_warmup_fraction 0.05 \
    --min_lr 1e-6 \
    --save megatron_output/Qwen3-Coder-30B-A3B-Instruct-FP8-result \
    --eval_interval 200 \
    --save_interval 200 \
    --max_length 2048 \
    --num_workers 8 \
    --dataset_num_proc 8 \
    --no_save_optim true \
    --no_save_rng true \
    --sequence_parallel true \
    --moe_expert_capacity_factor 2 \
    --use_precision_aware_optimizer true
