#!/bin/bash
# fp8-doctor holdout13 (eval14): alibaba/Pai-Megatron-Patch @ a098ca5acbdeaf7172ce0393fa309b39a77506db, examples/deepseek_v3/README.md "预训练示例" (the
# DeepSeek-V3 A37B continued-pretraining command) with the precision parameter PR ($9) set to fp8, the value the
# README's parameter table lists ("训练精度: fp16, bf16, fp8"); every other positional parameter as in the README
# (TP=${10}=8, PP=${11}=8, EP=${14}=16, SP=${15}=true, DO=${16}=true, AC=${19}=sel, OPTIMIZER_OFFLOAD=${20}=1.0).
# RECONSTRUCTION of the launch: the README shows bf16; fp8 is the documented alternative. The PR=fp8 arm gives
# --bf16 --fp8-format hybrid --fp8-amax-compute-algo max --fp8-amax-history-len 1024 (default delayed recipe);
# comm_overlap_option (--tp-comm-overlap when TP>1) is built but never put into run_cmd.
cd examples/deepseek_v3
export MP_PP0_LAYERS=5
sh run_mcore_deepseek.sh  \
dsw  \
A37B   \
1    \
8 \
1e-5   \
1e-6   \
1024  \
1024  \
fp8  \
8   \
8  \
1 \
1 \
16 \
true \
true   \
false \
false \
sel   \
1.0 \
100000  \
/mnt/deepseek-datasets/mmap_deepseekv3_datasets_text_document   \
/mnt/deepseek-datasets/mmap_deepseekv3_datasets_text_document   \
/mnt/deepseek-ckpts/DeepSeek-V3-to-mcore-tp8-pp8-etp1-ep16  \
1000000000  \
10000   \
/workspace/output_mcore_deepseek_pretrain
