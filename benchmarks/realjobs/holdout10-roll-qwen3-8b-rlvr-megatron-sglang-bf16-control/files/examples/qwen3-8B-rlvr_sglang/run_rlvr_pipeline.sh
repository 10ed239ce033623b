#!/bin/bash
# RECONSTRUCTION of the launch of alibaba/ROLL's example (ROLL's examples start a pipeline with
# examples/start_rlvr_pipeline.py and the Hydra config path/name); config: alibaba/ROLL @ 5edcd1b0007087df0b1f70bcc868d8825b696ca2.
CONFIG_PATH=$(basename $(dirname $0))
python examples/start_rlvr_pipeline.py --config_path $CONFIG_PATH  --config_name rlvr_config_sglang
