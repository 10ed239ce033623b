#!/bin/bash
# fp8-doctor holdout14 (eval15): RECONSTRUCTION of a launch of hpcaitech/ColossalAI @ 4f9953be335ef371b3848719ddafe596c01ecd37,
# examples/language/deepseek/benchmark.py (last changed in 014837e725a4dd72367c5883015c0be19ae480e0, 2025-02-14), in the form
# examples/language/llama/README.md:49-50 gives for these benchmarks (`colossalai run --nproc_per_node N benchmark.py
# --OTHER_CONFIGURATIONS`); every flag below is one the script's argparse defines (benchmark.py:78-131).
cd examples/language/deepseek
colossalai run --nproc_per_node 8 benchmark.py -c 14b -p 3d --ep 8 --zero 1 -b 4 -l 4096 -s 20 -g -x --use_fp8
