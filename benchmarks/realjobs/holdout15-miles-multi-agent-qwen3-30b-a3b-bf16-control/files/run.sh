#!/bin/bash
# fp8-doctor holdout15 (eval16): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76. The example script run with bash
# from the repository's top, as miles' examples are (examples/infra_features/low_precision/README.md: `bash examples/...`).
bash examples/experimental/multi_agent/run-qwen3-30B-A3B-multi-agent.sh
