"""FlagScale's Hydra experiment configs (the layout of examples/deepseek_v3/conf at FlagOpen/
FlagScale 6242f00e, in v0.9.0): composed over ``defaults: [_self_, {train: <option>}]``, the
``train.system/model/data`` leaves read as Megatron flags (``system.precision.fp8_format`` is
``--fp8-format``), FP8 at the file and line that set it; another backend, a missing option and a
cycle Unknown; the BF16 control "no FP8"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import frameworks
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

EXPERIMENT = """defaults:
  - _self_
  - train: small

experiment:
  exp_name: t
  seed: 42
  task:
    type: train
    backend: {backend}
    entrypoint: flagscale/train/train_gpt.py
  runner:
    per_node_task: false
action: run
hydra:
  run:
    dir: ${{experiment.exp_name}}/hydra
"""
TRAIN = """system:
  tensor_model_parallel_size: 2
  sequence_parallel: true
  precision:
    bf16: true
{precision}
model:
  transformer_impl: transformer_engine
  num_layers: 4
  hidden_size: 2048
  num_attention_heads: 16
  seq_length: 4096
  micro_batch_size: 1
  seed: ${{experiment.seed}}
data:
  data_path: /path
"""


def _job(tmp_path: Path, precision: str = "", backend: str = "megatron",
         option: str | None = "small") -> Path:
    (tmp_path / "train").mkdir()
    if option is not None:
        (tmp_path / "train" / f"{option}.yaml").write_text(TRAIN.format(precision=precision))
    path = tmp_path / "train.yaml"
    path.write_text(EXPERIMENT.format(backend=backend))
    return path


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)], "flagscale")
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}


def test_bf16_control_is_no_fp8(tmp_path: Path) -> None:
    intent = _intent(_job(tmp_path))
    assert intent["fp8"][0] is False
    assert intent["precision"][0] == "bf16"
    assert intent["precision"][1].endswith("small.yaml:5")
    assert intent["distributed"][0] == "megatron"
    assert intent["tp"][0] == 2


def test_fp8_keys_under_system_precision_are_megatron_flags(tmp_path: Path) -> None:
    intent = _intent(_job(tmp_path, "    fp8_format: hybrid\n    fp8_recipe: blockwise"))
    assert intent["fp8"][0] is True
    assert intent["fp8"][1].endswith("small.yaml:6")
    assert intent["format"][0] == "hybrid"
    assert intent["recipe"][0] == "blockwise"
    assert intent["backend"][0] == "te"


def test_false_bool_is_no_flag(tmp_path: Path) -> None:
    # flatten_dict_to_args leaves a false bool out: Megatron's default (fp32) holds
    path = _job(tmp_path)
    small = tmp_path / "train" / "small.yaml"
    small.write_text(small.read_text().replace("bf16: true", "bf16: false"))
    assert _intent(path)["precision"][0] == "fp32"


@pytest.mark.parametrize("backend", ["vllm", "robotics"])
def test_other_backend_is_unknown(tmp_path: Path, backend: str) -> None:
    fp8 = _intent(_job(tmp_path, "    fp8_format: hybrid", backend=backend))["fp8"]
    assert isinstance(fp8[0], Unknown)
    assert fp8[1].endswith("train.yaml:10")


def test_missing_option_is_unknown_not_bf16(tmp_path: Path) -> None:
    fp8 = _intent(_job(tmp_path, option=None))["fp8"]
    assert isinstance(fp8[0], Unknown)
    assert "small" in fp8[0].reason


def test_cycle_and_outside_option_are_unknown(tmp_path: Path) -> None:
    path = _job(tmp_path)
    (tmp_path / "train" / "small.yaml").write_text("defaults:\n  - /train\n")
    assert isinstance(_intent(path)["fp8"][0], Unknown)
    path.write_text(path.read_text().replace("train: small", "train: ../../etc/x"))
    assert isinstance(_intent(path)["fp8"][0], Unknown)


def test_recognised_as_flagscale_only() -> None:
    data = parse_yaml(EXPERIMENT.format(backend="megatron")).data
    scores = {kind: frameworks.score(kind, data) for kind in frameworks.KINDS}
    assert max(scores, key=lambda k: scores[k]) == "flagscale"
    assert frameworks.score("flagscale", {"experiment": {"name": "x"}}) == 0
    assert frameworks.score("flagscale", {"experiment": "x"}) == 0


def test_hostile_option_files_are_unknown_not_a_traceback(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(TRAIN.format(precision="    fp8_format: hybrid"))
    job = tmp_path / "job"
    job.mkdir()
    path = _job(job, option=None)
    (job / "train" / "small.yaml").symlink_to(outside)    # leaves the job: never read
    assert isinstance(_intent(path)["fp8"][0], Unknown)
    (job / "train" / "small.yaml").unlink()
    (job / "train" / "small.yaml").write_bytes(b"\xff\xfe\x00binary" * 100)
    assert isinstance(_intent(path)["fp8"][0], Unknown)
    (job / "train" / "small.yaml").write_text("- a list\n- not a mapping\n")
    assert isinstance(_intent(path)["fp8"][0], Unknown)


def _launched(tmp_path: Path, line: str) -> dict[str, Any]:
    (tmp_path / "conf").mkdir()
    _job(tmp_path / "conf")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + line + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}


@pytest.mark.parametrize("line", [
    "python run.py --config-path ./conf --config-name train action=run",
    "python run.py -cp=conf -cn=train.yaml action=run experiment.exp_dir=/out"])
def test_run_py_launch_links_the_experiment(tmp_path: Path, line: str) -> None:
    intent = _launched(tmp_path, line)
    assert intent["fp8"][0] is False
    assert intent["precision"][1].endswith("small.yaml:5")


@pytest.mark.parametrize("line", [
    "python run.py --config-path ./conf --config-name train action=run "
    "train.system.precision.fp8_format=hybrid",
    "python run.py action=run"])
def test_run_py_override_or_no_name_is_unknown(tmp_path: Path, line: str) -> None:
    fp8 = _launched(tmp_path, line)["fp8"]
    assert isinstance(fp8[0], Unknown)
    assert fp8[1].startswith(str(tmp_path / "run.sh"))


def test_generic_run_py_is_not_flagscale(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython run.py --config-name x lr=1\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert not any(k.startswith("config.flagscale.") for k in read.facts)
