#!/bin/bash
# Source: AMD-AGI/Primus @ fd1eeabbad15135e3702094087e96142b4b4eacb docs/02-user-guide/megatron-lm-training.md, the "Llama3.1-8B MXFP8" command (verbatim)
./runner/primus-cli container \
  --log_file /tmp/primus_llama3.1_8B_mxfp8.log \
  -- train pretrain \
  --config examples/megatron/configs/MI355X/llama3.1_8B-MXFP8-pretrain.yaml
