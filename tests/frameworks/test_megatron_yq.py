"""Megatron flags a launch takes from a model YAML through ``yq`` (frameworks/megatron_yq.py,
called by megatron_walk.read).

holdout21's ModelZoo jobs: yanring/Megatron-MoE-ModelZoo @ 1ed4179f72e4873bc246501a976ed21628e99582
sbatch_benchmarking.sh:27-38 (envsubst, then the yq pipeline, verbatim) and a model YAML's
MODEL_ARGS (model_configs/benchmarking/Mixtral-8x22B.yaml, reduced). Firing (flags read from the
YAML, ``${TP}`` a run-time value), quiet (a file outside the job, other operators: the run-time
cut as before, never a flag invented), hostile (an unclosed substitution, 10,000 keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.frameworks import megatron_yq
from preflight.jobs.read import read_paths

P = "config.megatron."

YQ = """TRAINING_PARAMS_FROM_CONFIG=$(yq '... comments="" | .MODEL_ARGS | to_entries | .[] |
    select(.value != "false") |
    with(select(.value == "true"); .value = "") |
    [.key + " " + .value] | join("")' ${TRAINING_PARAMS_PATH} | tr '\\n' ' ')
"""

SCRIPT = """#!/bin/bash
TRAINING_PARAMS_PATH=model.yaml
envsubst < ${TRAINING_PARAMS_PATH} > ${TRAINING_PARAMS_PATH}.tmp
TRAINING_PARAMS_PATH=${TRAINING_PARAMS_PATH}.tmp
""" + YQ + """TRAINING_PARAMS="--seq-length 4096 ${TRAINING_PARAMS_FROM_CONFIG}"
torchrun --nproc_per_node 8 pretrain_gpt.py ${TRAINING_PARAMS}
"""

MODEL = """ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
MODEL_ARGS:
  --tensor-model-parallel-size: ${TP}
  --use-distributed-optimizer: true
  --overlap-param-gather: true
  --fp8-param-gather: false
  --num-layers: 56
  --transformer-impl: transformer_engine
"""


def _job(tmp_path: Path, script: str = SCRIPT, model: str = MODEL) -> dict[str, Any]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.yaml").write_text(model)
    (tmp_path / "run.sh").write_text(script)
    return read_paths([str(tmp_path / "run.sh")]).facts


def test_model_args_read_through_yq(tmp_path: Path) -> None:
    facts = _job(tmp_path)
    assert facts[P + "use_distributed_optimizer"] is True
    assert facts[P + "overlap_param_gather"] is True
    assert facts[P + "num_layers"] == 56
    assert facts[P + "transformer_impl"] == "transformer_engine"
    assert P + "fp8_param_gather" not in facts          # select(.value != "false") drops it
    assert facts[P + "seq_length"] == 4096


def test_envsubst_value_is_run_time(tmp_path: Path) -> None:
    assert isinstance(_job(tmp_path)[P + "tensor_model_parallel_size"], Unknown)


def test_plain_path_query() -> None:
    data = {"MODEL_ARGS": {"--max-position-embeddings": 4096, "--x": [1, 2]}}
    assert megatron_yq._evaluate('.MODEL_ARGS."--max-position-embeddings"', [data]) == [4096]
    assert megatron_yq._evaluate(".MODEL_ARGS.\"--x\"[]", [data]) == [1, 2]
    assert megatron_yq._evaluate(".missing", [data]) == [None]


@pytest.mark.parametrize("expr", [
    ".MODEL_ARGS | keys", ".MODEL_ARGS | map(.)", "del(.a)", ".a as $x | $x",
    ".MODEL_ARGS | to_entries | .[] | select(.value | test(\"x\"))"])
def test_other_operators_unsupported(expr: str) -> None:
    data = {"MODEL_ARGS": {"--a": 1}}
    with pytest.raises(megatron_yq.Unsupported):
        megatron_yq._evaluate(expr, [data])


def test_unsupported_operator_stays_a_cut(tmp_path: Path) -> None:
    script = SCRIPT.replace("to_entries | .[] |", "to_entries | .[] | sort_by(.key) |")
    facts = _job(tmp_path, script)
    assert P + "use_distributed_optimizer" not in facts
    assert facts[P + "seq_length"] == 4096


def test_file_outside_the_job_is_not_read(tmp_path: Path) -> None:
    script = SCRIPT.replace("TRAINING_PARAMS_PATH=model.yaml", "TRAINING_PARAMS_PATH=/etc/x.yaml")
    facts = _job(tmp_path, script)
    assert P + "use_distributed_optimizer" not in facts


def test_output_through_another_command_unsupported(tmp_path: Path) -> None:
    script = SCRIPT.replace("| tr '\\n' ' ')", "| head -3)")
    assert P + "use_distributed_optimizer" not in _job(tmp_path, script)


def test_hostile_unclosed_substitution() -> None:
    with pytest.raises(megatron_yq.Unsupported):
        megatron_yq._command("$(yq '.a' f.yaml " + "x" * 10_000, 0)


def test_hostile_many_keys(tmp_path: Path) -> None:
    model = "MODEL_ARGS:\n" + "".join(f"  --k{n}: {n}\n" for n in range(10_000))
    facts = _job(tmp_path, model=model)
    assert P + "k0" not in facts            # more values than read: the cut as before
    assert facts[P + "seq_length"] == 4096


@pytest.mark.parametrize("expr", [
    "[" + ".a + " * 800 + ".b x]", "select(" + ".a" * 1000 + ' == "x" ',
    '"' * 3000, "." + " | ." * 40])
def test_hostile_expressions_refused(expr: str) -> None:
    with pytest.raises(megatron_yq.Unsupported):
        megatron_yq._evaluate(expr, [{"a": 1}])
