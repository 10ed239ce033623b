#!/usr/bin/env bash
# Second GPU call (device tool; carry [".whl"]): what device_all.sh's first run could not fit in
# one command's 10 minutes, on the final code. Timings of `fp8-doctor check` with the smoke step
# for a Transformer Engine job (the bundled example), a torchao job and no job config; the
# check vs collect_env benchmark on a GPU node; the GPU-relevant test files on the GPU.
#   bash benchmarks/device_timings.sh "$OUT"
set -u
out=${1:?output folder}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  for job in "--example" "fixtures/configs/torchtitan/v02_rowwise_allgather.toml" ""; do
    for i in 1 2 3; do
      t=$(date +%s%N)
      python3 -m preflight check $job --format json -o "$out/check_last.json" 2>/dev/null; rc=$?
      echo "check ${job:-<no config>} run $i rc=$rc wall_ms=$(ms $t) smoke_backends=$(python3 -c "import json;d=json.load(open('$out/check_last.json'));print(d['facts'].get('smoke.backends'), d['smoke'].get('duration_s'), d['smoke'].get('torch_import_s'))")"
    done
  done
  echo "== bench_check"
  timeout 200 python3 benchmarks/bench_check.py -n 10 --markdown > "$out/bench_check.md" 2>&1; echo "rc=$?"
} > "$out/timings.log" 2>&1
cat "$out/timings.log"; tail -22 "$out/bench_check.md"
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/smoke tests/live/test_live.py tests/integrations \
  tests/cli/test_exit_codes.py > "$out/pytest-gpu.txt" 2>&1; echo "pytest rc=$?"
tail -6 "$out/pytest-gpu.txt"
