#!/bin/bash
# fp8-doctor holdout12 (eval13): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a,
# examples/model_verification_cards/qwen3-30b-a3b/card.yaml l.189-236 (training.pretrain.GB200, status verified,
# precision fp8_mx, last_verified 2026-07-23, base container nvcr.io/nvidia/nemo:26.06): the command verbatim.
# scripts/training/train.sh execs setup_experiment.py, which forwards the arguments to run_recipe.py; the recipe
# qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config is in src/megatron/bridge/recipes/qwen/gb200/qwen3_moe.py.
./scripts/training/train.sh --nodes 2 --gpus-per-node 4 \
  --recipe qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config \
  --mode pretrain --dataset megatron-indexed --seq_length 4096 \
  --max_steps 100 --lr 3e-4 --min_lr 3e-5 --warmup_iters 40 \
  'dataset.blend=[["work/data/rp2/head_01"],null]' \
  dataset.path_to_cache=work/cache/qwen3-30b-a3b/rp2 \
  tokenizer.tokenizer_type=SentencePieceTokenizer \
  tokenizer.tokenizer_model=work/data/rp2/tokenizer.model \
  scheduler.lr_decay_iters=100 \
  model.moe_router_force_load_balancing=false \
  ddp.check_for_nan_in_grad=true ddp.check_for_large_grads=true \
  rerun_state_machine.check_for_nan_in_loss=true \
  checkpoint.load=null checkpoint.save_optim=true checkpoint.save_rng=true \
  checkpoint.load_optim=true checkpoint.load_rng=true checkpoint.finetune=false \
  validation.eval_iters=0 validation.eval_interval=0 \
  dataset.random_seed=1234 dataset.num_workers=8 rng.seed=1234 \
  dist.distributed_timeout_minutes=30 \
  --save_dir work/model-verification/qwen3-30b-a3b/pretrain-mxfp8-gb200-reference-checkpoints \
  --save_interval 50 logger.log_interval=1 logger.log_throughput=true \
  logger.tensorboard_dir=null
