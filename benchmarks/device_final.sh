#!/usr/bin/env bash
# The final GPU call of issue 26 (and 23 item 4's smoke part): ONE device call, 10 minutes at most.
#
#   bash benchmarks/device_final.sh "$OUT"              # on the GPU machine
#   bash benchmarks/device_final.sh /tmp/x --dry-run    # anywhere: print the plan, run nothing
#
# How the lead runs it (device tool, nvidia-h200 or nvidia-h100-x1; the machine must still hold
# /tmp/te from the five TE carry calls of ../shared/device/te-prepare.sh, made back to back):
#   run(carry=[".whl"], timeout_s=600, command="bash benchmarks/device_final.sh $OUT")
#
# What .whl must hold (fetch it on the dev box, in /work/main, with nothing else in it: two
# versions of one package stop the whole install; ~6 MB in all, the working tree ~10 MB):
#   cd /work/main && rm -rf .whl && mkdir .whl && (grep -qx '/.whl/' .git/info/exclude || echo '/.whl/' >> .git/info/exclude)
#   PL="--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64"
#   .venv/bin/python -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $PL -d .whl torchao==0.18.0 ruamel.yaml==0.19.1 tomlkit==0.15.2 hjson==3.1.0
#   .venv/bin/python -m pip download --no-deps --no-binary=:all: -d /tmp/ds-sdist deepspeed==0.19.8
#   DS_BUILD_OPS=0 .venv/bin/python -m pip wheel --no-deps --no-build-isolation -w .whl /tmp/ds-sdist/deepspeed-0.19.8.tar.gz
#   git archive 3a18a5b preflight rules | gzip > .whl/old-3a18a5b.tar.gz
# torchao (the torchao smoke part, the trial cases of step d), DeepSpeed and hjson (ds_report, a
# peer of step a; its pydantic comes with TE's deps), ruamel.yaml and tomlkit (fp8-doctor's own
# dependencies, absent from the image). The old code is a *source* archive, not a wheel: the new
# code runs from this source tree too (like for like with the 2026-11-27 numbers), and a wheel of
# it in .whl/*.whl would be installed into /tmp/site, in front of the new code.
#
# Steps, most valuable first; each writes under $OUT, runs under `timeout`, and skips itself when
# the time left (BUDGET_S, default 585 s from the start) is below what it needs. Estimated from
# the 2026-11-27 H200 call: setup ~15 s + TE build ~140 s, a ~200 s, b ~50 s, c ~145 s: d runs
# only where the others were quicker.
#   setup  the wheels into /tmp/site, the old code into /tmp/old, TE built (bash /tmp/te/te-build.sh,
#          ~2.2 min) unless /tmp/site already imports it, the versions;
#   a      benchmarks/gpu_check.py -n 3: check --example cold (an empty cache) vs --no-cache,
#          the old code, the cache filling, then warm check --example and smoke with accelerate
#          env / collect_env / ds_report interleaved, and a second cold pair if time is left;
#   b      the real-TE tests: pytest -m gpu tests/smoke;
#   c      benchmarks/trial_validate.py --quick llama3-8b-8l:te:delayed:eager llama3-8b-8l:te:current:eager;
#   d      if time is left: Llama-3.2-1B and Qwen2.5-7B (8 layers), torchao tensorwise / rowwise.
# $OUT gets 8 files (the device tool brings back 8): summary.json, setup.log, a_gpu_check.log,
# gpu_check.json, b_pytest_gpu.log, cd_trial.log, trial_validate_te.json, trial_validate_extra.json.
#
# What the call must confirm (docs/benchmarks.md): the first run (cache empty) no slower than
# --no-cache; check --example <= 8 s warm; smoke <= 8 s; the TE child's seconds with the cache
# (<= 5 s is the target where bytecode exists); smoke verdicts identical to the old code's;
# smoke.te.gemm_flops_share 0.9624 on real TE; TE trial vs real run within +-5%.
set -u -o pipefail

out=${1:?usage: device_final.sh OUT_DIR [--dry-run]}
dry=0
[ "${2:-}" = "--dry-run" ] && dry=1
budget=${BUDGET_S:-585}          # the call's limit is 600 s for the command itself
reserve=10                       # kept for the summary
root=$(pwd)
start=$(date +%s)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
steps_file=$(mktemp)
trap 'rm -f "$steps_file"' EXIT

left() { echo $(( budget - ($(date +%s) - start) )); }

# step NAME NEEDS MAX LOG COMMAND: run COMMAND (bash -c) under timeout min(MAX, left - reserve),
# or skip it when fewer than NEEDS seconds would be left; one line per step in $steps_file. The
# command sees its own limit as $STEP_T (a benchmark then stops starting runs before it).
step() {
  local name=$1 needs=$2 max=$3 log=$4 cmd=$5 t rc t0 status
  t=$(( $(left) - reserve ))
  (( t > max )) && t=$max
  if (( dry )); then
    printf '%-6s needs %4ss, at most %4ss -> %s\n         %s\n' "$name" "$needs" "$max" "$log" "$cmd"
    printf '%s\tdry-run\t0\t%s\n' "$name" "$log" >> "$steps_file"
    return 0
  fi
  if (( t < needs )); then
    echo "== $name: skipped, ${t}s left of the ${needs}s it needs" | tee -a "$out/$log"
    printf '%s\tskipped: %ss left, needs %ss\t0\t%s\n' "$name" "$t" "$needs" "$log" >> "$steps_file"
    return 0
  fi
  echo "== $name: $(date -u +%T) timeout ${t}s: $cmd" >> "$out/$log"
  t0=$(date +%s)
  STEP_T=$t timeout -k 10 "$t" bash -c "$cmd" >> "$out/$log" 2>&1
  rc=$?
  case $rc in
    0) status=ok ;;
    124|137) status="timeout after ${t}s" ;;
    *) status="rc $rc" ;;
  esac
  echo "== $name: $status in $(( $(date +%s) - t0 ))s" | tee -a "$out/$log"
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$(( $(date +%s) - t0 ))" "$log" >> "$steps_file"
}

site_env="export PYTHONPATH=/tmp/site:$root"

# ---- setup
step wheels 20 60 setup.log "if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; else echo 'no .whl/*.whl carried'; fi"
step old 5 30 setup.log "rm -rf /tmp/old && mkdir -p /tmp/old && tar -xzf .whl/old-3a18a5b.tar.gz -C /tmp/old && ls /tmp/old"
step te 160 300 setup.log "if PYTHONPATH=/tmp/site python3 -c 'import transformer_engine.pytorch' 2>/dev/null; then echo 'TE already importable from /tmp/site'; else test -f /tmp/te/te-build.sh && bash /tmp/te/te-build.sh; fi"
# Versions from metadata only (importing TE here would cost ~10 s; te-build.sh ran a te.Linear).
step versions 5 30 setup.log "$site_env; date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nproc; python3 - <<'PY'
import importlib.metadata as md, sys
print('python', sys.version.split()[0])
for n in ('torch', 'torchao', 'transformer_engine', 'transformer-engine', 'deepspeed', 'accelerate', 'transformers', 'triton'):
    try:
        print(n, md.version(n))
    except md.PackageNotFoundError:
        print(n, '-')
PY"

# ---- a: the check's wall time, cold and warm, old vs new, with the peers
old_arg=""
{ [ -d /tmp/old/preflight ] || (( dry )); } && old_arg="--old /tmp/old"
step a 120 230 a_gpu_check.log "$site_env; python3 benchmarks/gpu_check.py --out '$out' --new '$root' $old_arg -n 3 --cold 1 --cold-extra 1 --deadline \$((STEP_T - 15))"

# ---- b: the real-TE tests
step b 45 120 b_pytest_gpu.log "$site_env; python3 -m pytest -q -p no:cacheprovider -m gpu --continue-on-collection-errors tests/smoke"

# ---- c: the trial against real TE training (8-layer Llama-3-8B, eager)
step c 130 330 cd_trial.log "$site_env; TV_SUFFIX=_te python3 benchmarks/trial_validate.py --out '$out' --quick llama3-8b-8l:te:delayed:eager llama3-8b-8l:te:current:eager"

# ---- d: more shapes with torchao, while time is left (each case is saved as it ends)
step d 120 600 cd_trial.log "$site_env; TV_SUFFIX=_extra python3 benchmarks/trial_validate.py --out '$out' --quick llama3.2-1b:torchao:tensorwise:compile llama3.2-1b:torchao:rowwise:compile qwen2.5-7b-8l:torchao:tensorwise:compile qwen2.5-7b-8l:torchao:rowwise:compile"

# ---- the summary: each step's outcome, and the numbers that answer the questions above
python3 - "$out" "$steps_file" "$budget" "$(( $(date +%s) - start ))" "$dry" <<'PY'
import json, os, sys

out, steps_file, budget, used, dry = sys.argv[1:6]
steps = []
for line in open(steps_file, encoding="utf-8"):
    name, status, seconds, log = line.rstrip("\n").split("\t")
    steps.append({"step": name, "status": status, "seconds": int(seconds), "log": log})


def load(name):
    try:
        with open(os.path.join(out, name), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


doc = {"steps": steps, "budget_s": int(budget), "used_s": int(used), "dry_run": dry == "1"}
gc = load("gpu_check.json")
if gc:
    doc["gpu_check"] = {k: gc.get(k) for k in ("summary", "smoke_verdicts_identical_to_old",
                                               "findings_identical_to_old", "skipped")}
    te = [v.get("children", {}).get("te") for vs in (gc.get("verdicts") or {}).values()
          for v in vs if isinstance(v, dict) and v.get("children")]
    doc["gpu_check"]["te_child_s"] = te
    shares = [v.get("new_facts") for vs in (gc.get("verdicts") or {}).values() for v in vs
              if isinstance(v, dict) and v.get("new_facts")]
    doc["gpu_check"]["gemm_flops_share"] = shares[:1]
for name in ("trial_validate_te.json", "trial_validate_extra.json"):
    tv = load(name)
    if tv:
        doc[name] = {"versions": tv.get("versions"), "cases": [
            {k: c.get(k) for k in ("case", "trial_speedup", "measured_speedup", "trial_error_pct",
                                   "verdict_agrees", "quick_speedup", "quick_error_pct",
                                   "trial_wall_s")} for c in tv.get("cases", [])]}
try:
    with open(os.path.join(out, "b_pytest_gpu.log"), encoding="utf-8") as fh:
        tail = [ln for ln in fh.read().splitlines() if " passed" in ln or " failed" in ln
                or " error" in ln or " skipped" in ln]
    doc["pytest_gpu"] = tail[-1:] if tail else None
except OSError:
    doc["pytest_gpu"] = None
with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
    json.dump(doc, fh, indent=1)
print(json.dumps({"steps": steps, "used_s": int(used)}, indent=1))
PY
