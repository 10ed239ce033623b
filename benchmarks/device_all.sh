#!/usr/bin/env bash
# The whole GPU verification in one device call (device tool, nvidia-h100-x1 or nvidia-h200;
# carry [".whl"]): the smoke-step numerics and speed (gpu_verify.py), live inspection with real
# Accelerate/torchao/DeepSpeed and the HF/Lightning callbacks plus dist and check timings
# (device_run.sh), and the GPU-relevant test files run on the GPU (transformers and lightning
# are installed there, so the callback tests that CI skips run too). It leaves 8 files under
# OUT, the most the device tool brings back.
#   bash benchmarks/device_all.sh "$OUT"
set -u
out=${1:?output folder}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tr '\n' ';')"
  nvidia-smi 2>&1
  echo "== gpu_verify"
  timeout 300 python3 benchmarks/gpu_verify.py "$out"; echo "rc=$?"
} > "$out/gpu_verify.log" 2>&1
tail -c 1500 "$out/gpu_verify.log"
timeout 330 bash benchmarks/device_run.sh "$out" > /dev/null 2>&1; echo "device_run rc=$?"
tail -c 2500 "$out/device_run.log"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/smoke tests/live/test_live.py tests/integrations \
  tests/cli/test_exit_codes.py > "$out/pytest-gpu.txt" 2>&1; echo "pytest rc=$?"
tail -5 "$out/pytest-gpu.txt"
