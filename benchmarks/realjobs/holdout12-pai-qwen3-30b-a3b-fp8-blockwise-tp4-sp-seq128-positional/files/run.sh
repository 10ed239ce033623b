#!/bin/bash
# fp8-doctor holdout12 (eval13): alibaba/Pai-Megatron-Patch @ a098ca5acbdeaf7172ce0393fa309b39a77506db,
# examples/qwen3/README.md l.109-138 (the Qwen3-30B-A3B pretraining command, `cd .../examples/qwen3 &&
# sh run_mcore_qwen3.sh ...`) with the precision parameter PR ($9) set to fp8, the value README l.84
# lists ("训练精度: fp16, bf16, fp8"); every other positional parameter as in the README.
# RECONSTRUCTION of the launch: the README shows bf16; fp8 is the documented alternative.
cd examples/qwen3
sh run_mcore_qwen3.sh  \
dlc  \
A3B   \
1    \
8 \
1e-5   \
1e-6   \
128  \
128  \
fp8  \
4   \
2  \
1 \
1 \
4 \
true \
true   \
true \
false \
sel   \
false \
100000  \
/mnt/qwen-datasets/mmap_qwen3_datasets_text_document   \
/mnt/qwen-datasets/mmap_qwen3_datasets_text_document   \
/mnt/qwen-ckpts/Qwen3-30B-A3B-to-mcore  \
10000  \
100   \
/mnt/logs/output_mcore_qwen3_pretrain
