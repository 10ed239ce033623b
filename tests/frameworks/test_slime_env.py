"""The trainer's NVTE_FP8_BLOCK_SCALING_FP32_SCALES for slime / miles (issue 22,
frameworks/slime_env.py): ``--train-env-vars`` wins, then the ``--runtime-env-json`` of the
command that runs train.py, then the launch line's exports, then the default (slime 1; miles
since 7e7926b13, PR 1584: 0 on compute capability >= 10). Reduction of radixark/miles @
31f1ca961a94cb860cec3b2dea34ec332bfa8f76 examples/infra_features/low_precision/
run-qwen3-30b-a3b-fp8-two-nodes.sh (full file in benchmarks/realjobs/holdout9-miles-qwen3-30b-
a3b-fp8e2e-blockwise-two-nodes-h100); hostile variants: values only an echo, a comment or an
unused string holds, branches that do not run, launches that differ, bad JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FP32 = "intent.block_scales_fp32"

MILES = '''\
#!/bin/bash
NVLINK_COUNT=$(nvidia-smi topo -m 2>/dev/null | grep -o 'NV[0-9][0-9]*' | wc -l)
if [ "$NVLINK_COUNT" -gt 0 ]; then
    HAS_NVLINK=1
else
    HAS_NVLINK=0
fi
PERF_ARGS=(
   --tensor-model-parallel-size 4
   --fp8-format e4m3
   --fp8-recipe blockwise
)
ROLLOUT_ARGS=(
   --hf-checkpoint /root/Qwen3-30B-A3B-FP8
   --rollout-num-gpus-per-engine 8
)
# You should enable NVTE_FP8_BLOCK_SCALING_FP32_SCALES to use fp32 scales in fp8 training
RUNTIME_ENV_JSON="{
  \\"env_vars\\": {
    \\"PYTHONPATH\\": \\"/root/Megatron-LM/\\",
    \\"NCCL_NVLS_ENABLE\\": \\"${HAS_NVLINK}\\",
    \\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\\": \\"1\\",
    \\"NCCL_TIMEOUT_MS\\":\\"36000000\\"
  }
}"
DECOY
ray job submit --address="${RAY_ADDRESS}" \\
   --runtime-env-json="${RUNTIME_ENV_JSON}" \\
   -- python3 ENTRY \\
   --actor-num-nodes 2 \\
   --actor-num-gpus-per-node 8 \\
   ${PERF_ARGS[@]} \\
   ${ROLLOUT_ARGS[@]} TRAIN_ENV
'''
NO_RUNTIME_VALUE = '    \\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\\": \\"1\\",\n'


def _script(tmp_path: Path, decoy: str = "", entry: str = "/root/miles/train.py",
            train_env: str = "", keep: bool = True) -> Path:
    text = MILES.replace("DECOY", decoy).replace("ENTRY", entry).replace("TRAIN_ENV", train_env)
    if not keep:
        text = text.replace(NO_RUNTIME_VALUE, "")
    run = tmp_path / "run.sh"
    run.write_text(text)
    return run


def _fp32(run: Path, cc: str | None) -> tuple[Any, str]:
    read = read_paths([str(run)])
    facts = dict(read.facts)
    if cc is not None:
        facts["gpu.max_cc"] = cc
    values, prov = derive(Facts(facts, read.provenance))
    assert values["intent.recipe"] == "blockwise"
    return values[FP32], prov[FP32]


@pytest.mark.parametrize("cc", ["9.0", "10.0", None])
def test_the_runtime_env_value_reaches_the_trainer(tmp_path: Path, cc: str | None) -> None:
    got, where = _fp32(_script(tmp_path), cc)
    assert got is True
    line = MILES.splitlines().index(NO_RUNTIME_VALUE.rstrip("\n")) + 1
    assert where.endswith(f"run.sh:{line}")


def test_train_env_vars_beat_the_runtime_env(tmp_path: Path) -> None:
    # miles actor_factory.py l.27-38 @ 7e7926b13: **args.train_env_vars comes last
    run = _script(tmp_path, train_env="--train-env-vars "
                  "'{\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"0\"}'")
    got, where = _fp32(run, "10.0")
    assert got is False
    assert where.endswith(f"run.sh:{MILES.splitlines().index('   ${ROLLOUT_ARGS[@]} TRAIN_ENV') + 1}")


@pytest.mark.parametrize("entry, cc, want", [
    ("/root/miles/train.py", "9.0", True),       # 1 below sm_100, before and after PR 1584
    ("/root/miles/train.py", "10.0", None),      # 0 since 7e7926b13, 1 before: not known
    ("/root/slime/train.py", "10.0", True),      # slime: 1 whatever the GPU
    ("train.py", "10.0", None),                  # neither named
    ("train.py", "9.0", True),
])
def test_the_default_by_checkout_and_gpu(tmp_path: Path, entry: str, cc: str,
                                         want: bool | None) -> None:
    got, _ = _fp32(_script(tmp_path, entry=entry, keep=False), cc)
    assert got is want if want is not None else isinstance(got, Unknown)
    if want is None:
        assert "7e7926b13" in got.reason


@pytest.mark.parametrize("decoy", [
    "echo '{\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"1\"}'",
    "# \"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"1\"",
    "UNUSED='{\"env_vars\": {\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"1\"}}'",
    "if [ 1 = 0 ]; then ray job submit --runtime-env-json='{\"env_vars\": "
    "{\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"1\"}}' -- python3 train.py; fi",
])
def test_values_that_reach_no_trainer_are_not_read(tmp_path: Path, decoy: str) -> None:
    # before: the text-wide regex read 1 -> a false FP8D-TE-0055 on a Blackwell miles job
    got, _ = _fp32(_script(tmp_path, decoy=decoy, keep=False), "10.0")
    assert isinstance(got, Unknown)
    # and a 0 in a decoy does not hide slime's 1 (a missed FP8D-TE-0055)
    got, _ = _fp32(_script(tmp_path, decoy=decoy.replace('\\"1\\"', '"0"').replace('"1"', '"0"'),
                           entry="/root/slime/train.py", keep=False), "10.0")
    assert got is True


@pytest.mark.parametrize("train_env", [
    "--train-env-vars '{not json'",
    "--train-env-vars \"$1\"",
    "--train-env-vars '" + "[" * 5000 + "]" * 5000 + "'",
    "--train-env-vars '{\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": {\"a\": 1}}'",
])
def test_train_env_vars_not_read_leave_it_unknown(tmp_path: Path, train_env: str) -> None:
    got, _ = _fp32(_script(tmp_path, train_env=train_env), "10.0")
    assert isinstance(got, Unknown)


def test_launches_that_set_it_differently_are_unknown(tmp_path: Path) -> None:
    second = ("if [ \"$MODE\" = a ]; then ray job submit --runtime-env-json='{\"env_vars\": "
              "{\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\": \"0\"}}' -- python3 train.py "
              "--fp8-format e4m3 --fp8-recipe blockwise; fi")
    got, _ = _fp32(_script(tmp_path, decoy=second), "10.0")
    assert isinstance(got, Unknown)


def test_a_value_from_a_branch_is_unknown(tmp_path: Path) -> None:
    from preflight.frameworks import slime_env
    facts: dict[str, Any] = {}
    slime_env.read("run.sh", _script(tmp_path).read_text(), {}, facts, {})
    assert isinstance(facts["config.slime.env.NCCL_NVLS_ENABLE"], Unknown)   # ${HAS_NVLINK}
    assert facts["config.slime.env.NCCL_TIMEOUT_MS"] == "36000000"
    assert facts["config.slime.package"] == "miles"
