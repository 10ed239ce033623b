#!/bin/bash
# fp8-doctor holdout18 (eval19): lccqqqqq/superposition-pretraining @ 51466cfd7de89c13716f1bee5a37a03808db32ba.
# The job as run_fp8_training.sh's usage comment submits it (addqueue ... --gpus 1 --gputype h200with141gb),
# minus the cluster queue wrapper: the wrapper script with the FineWeb-Edu FP8 config.
./run_fp8_training.sh configs/fineweb_edu_fp8.yaml
