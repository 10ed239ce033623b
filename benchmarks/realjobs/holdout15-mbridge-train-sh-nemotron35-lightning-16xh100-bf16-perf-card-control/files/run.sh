#!/bin/bash
# fp8-doctor holdout15 (eval16): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, examples/model_verification_cards/nemotron-3.5-lightning/card.yaml
# pretrain_performance.H100 (status verified, precision bf16, last_verified 2026-08-03): the command verbatim
# (card.yaml:695-697 in the job copy, upstream 694-696). train.sh execs setup_experiment.py -> run_recipe.py; the
# recipe function is src/megatron/bridge/perf_recipes/nemotronh/h100/nemotronh.py:216 in the job copy
# (nemotron_3_nano_pretrain_16gpu_h100_bf16_config: _perf_precision("bf16"); BF16 Adam moments through
# use_precision_aware_optimizer; the file's FP8 current-scaling siblings are other functions).
./scripts/training/train.sh --nodes 2 --gpus-per-node 8 \
  --recipe nemotron_3_5_lightning_pretrain_16gpu_h100_bf16_config \
  --max_steps 50
