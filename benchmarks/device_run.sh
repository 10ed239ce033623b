#!/usr/bin/env bash
# One device call for the GPU work that the smoke verification (gpu_verify.py) does not cover:
#   1. preflight.inspect on real Accelerate + torchao FP8 and real DeepSpeed ZeRO 0-3 (gpu_inspect.py)
#   2. python -m preflight.cluster --smoke --collectives on every GPU of the machine (NCCL)
#   3. check --no-smoke vs collect_env on a GPU machine (bench_check.py)
#   4. wall time of `fp8-doctor check --example` with the smoke step (on by default there)
# Usage (device tool, kind nvidia-h200-x2, carry [".whl"]): bash benchmarks/device_run.sh "$OUT"
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): it can take a shared host's GPUs down.
set -u
out=${1:?output folder}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD
log=$out/device_run.log
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tr '\n' ';')"
  python3 -c 'import torch, torchao, deepspeed; print("torch", torch.__version__, "torchao", torchao.__version__, "deepspeed", deepspeed.__version__)'
  echo "== 1. gpu_inspect"
  python3 benchmarks/gpu_inspect.py --out "$out" --timeout 150; echo "rc=$?"
  echo "== 2. dist --smoke --collectives on $(nvidia-smi -L | wc -l) GPUs"
  start=$(date +%s%N)
  timeout 300 python3 -m torch.distributed.run --nproc-per-node "$(nvidia-smi -L | wc -l)" \
    -m preflight.cluster --smoke --collectives --format json -o "$out/dist.json"; echo "rc=$?"
  echo "wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
  echo "== 3. bench_check"
  python3 benchmarks/bench_check.py -n 10 --markdown > "$out/bench_check.md"; echo "rc=$?"
  cat "$out/bench_check.md"
  echo "== 4. check --example with the smoke step"
  for i in 1 2 3; do
    start=$(date +%s%N)
    python3 -m preflight check --example --format json -o "$out/check_example.json" 2>/dev/null; rc=$?
    echo "run $i rc=$rc wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
  done
  python3 -m preflight check --example --format text --color never 2>&1 | head -120
} > "$log" 2>&1
tail -c 6000 "$log"
