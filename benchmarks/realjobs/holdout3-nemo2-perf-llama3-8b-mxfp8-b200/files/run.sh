#!/bin/bash
# RECONSTRUCTION: the launch NVIDIA/NeMo scripts/performance/README.md gives
# ("python -m scripts.performance.llm.pretrain_llama3_8b --account <acct> --partition <part>"), with its
# documented options -g b200, -c/--compute_dtype fp8 and -fr/--fp8_recipe mxfp8, run from the NeMo checkout root.
python -m scripts.performance.llm.pretrain_llama3_8b --account my_account --partition batch -g b200 -c fp8 -fr mxfp8
