#!/bin/bash
# RECONSTRUCTION: the launch NVIDIA/NeMo scripts/performance/README.md gives
# ("python -m scripts.performance.llm.<script> --account <acct> --partition <part>"), with its documented options
# -g h100, -c/--compute_dtype fp8 and -fr/--fp8_recipe cs, run from the NeMo checkout root (NVIDIA/NeMo @ 8cfedd720346).
# The H100 fp8 row of recommended_model_configs/model_configs_h100.csv for mixtral 8x7b gives 64 GPUs, TP1 PP4 EP8 VP8.
python -m scripts.performance.llm.pretrain_mixtral_8x7b --account my_account --partition batch -g h100 -c fp8 -fr cs
