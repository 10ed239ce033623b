#!/bin/bash
# fp8-doctor holdout15 (eval16): RECONSTRUCTION (see the header of the script). slime's scripts are run with bash from the
# repository's top (docs/en/advanced/low-precision.md:75-79: `bash scripts/low_precision/run-qwen3-4b-fp8.sh`).
bash examples/multi_agent/run-qwen3-30B-A3B-multi-agent-fp8.sh
