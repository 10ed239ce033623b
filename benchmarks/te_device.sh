#!/usr/bin/env bash
# The device half of issue 15, after te-build.sh put real TE into /tmp/site (see docs/gpu-results.md):
#   bash benchmarks/te_device.sh "$OUT"      (from a copy of the worktree; torchao wheel in _whl/)
# 1. benchmarks/te_gpu.py: smoke --backend te (cold, warm, with NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1),
#    smoke auto (torchao resume too), the 1190 negative control, inspect on TE, --deep, a TE
#    without its torch extension;  2. the whole test suite with real TE importable.
set -u
out=${1:?output folder}
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site _whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, torchao, transformer_engine as t; print("torch", torch.__version__, "torchao", torchao.__version__, "te", t.__version__)'
} > "$out/versions.txt" 2>&1
timeout 330 python3 benchmarks/te_gpu.py "$out" > "$out/te_gpu.log" 2>&1; echo "te_gpu rc=$?"
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests > "$out/pytest_all.txt" 2>&1; echo "pytest rc=$?"
tail -5 "$out/pytest_all.txt"; tail -c 2500 "$out/te_gpu.log"
