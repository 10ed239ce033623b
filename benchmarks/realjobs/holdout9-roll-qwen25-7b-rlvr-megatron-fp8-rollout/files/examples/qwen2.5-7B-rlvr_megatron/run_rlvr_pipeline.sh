#!/bin/bash
# RECONSTRUCTION (alibaba/ROLL @ 8eb27cc2dc34c4d1310b169d9b86d339004d811a): the launch of
# examples/qwen2.5-7B-rlvr_megatron/run_rlvr_pipeline.sh, with the config name of the 8-GPU file.
set +x
CONFIG_PATH=$(basename $(dirname $0))
python examples/start_rlvr_pipeline.py --config_path $CONFIG_PATH --config_name rlvr_config_8gpus
