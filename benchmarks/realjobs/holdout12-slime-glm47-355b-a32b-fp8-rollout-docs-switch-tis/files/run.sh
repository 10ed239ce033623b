#!/bin/bash
# fp8-doctor holdout12 (eval13): THUDM/slime @ 624b824a898ab0ec1fcb4d373004c7f3852bf515,
# docs/en/examples/glm4.7-355B-A32B.md l.47-48: `export BASE_DIR=... ; bash scripts/run-glm4.7-355B-A32B.sh` (the script as edited for FP8
# rollout per the same page, l.153-190).
export BASE_DIR=/shared/path  # accessible by all nodes
bash scripts/run-glm4.7-355B-A32B.sh
