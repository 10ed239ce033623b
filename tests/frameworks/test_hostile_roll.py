"""ROLL YAMLs and launch lines from a hostile pull request (issue 21): an interpolation cycle,
5,000-deep YAML, a megabyte model name, a strategy_name that is a mapping, a --config_name that
leaves the job. Each is a finding naming the file or an Unknown with its reason; no traceback,
nothing outside the job opened, FP8 never "no" from what was not read; bounded CPU time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from tests.cputime import cpu_seconds

HEAD = ("exp_name: x\npretrain: Qwen/Qwen2.5-7B\nrollout_batch_size: 64\n"
        "num_return_sequences_in_group: 8\n")
TRAIN = ("actor_train:\n  model_args: {dtype: bf16}\n  strategy_args:\n"
         "    strategy_name: megatron_train\n    strategy_config: {fp8: e4m3}\n")
INFER = ("actor_infer:\n  strategy_args:\n    strategy_name: vllm\n"
         "    strategy_config: {quantization: fp8}\n")


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return dict(values), read


def test_interpolation_cycle_is_a_finding_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + "a: ${b}\nb: ${a}\n" + TRAIN.replace("{fp8: e4m3}", "{fp8: ${a}}")
                    + INFER)
    start = cpu_seconds()
    got, read = _intent(path)
    assert cpu_seconds() - start < 10
    assert read.problems or isinstance(got["intent.fp8"], Unknown)
    assert got["intent.fp8"] is not False


def test_deep_yaml_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + TRAIN + "deep: " + "[" * 5000 + "]" * 5000 + "\n")
    start = cpu_seconds()
    _, read = _intent(path)
    assert cpu_seconds() - start < 10
    assert read.problems and all(str(p.path) == str(path) for p in read.problems)


def test_huge_model_name_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD.replace("Qwen/Qwen2.5-7B", "A" * 200_000 + "-A3B") + TRAIN + INFER)
    start = cpu_seconds()
    got, _ = _intent(path)
    assert cpu_seconds() - start < 10
    assert got["intent.fp8"] is True


@pytest.mark.parametrize("value", ["{a: 1}", "[megatron_train]", "123", "~"])
def test_strategy_name_not_a_name(tmp_path: Path, value: str) -> None:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + TRAIN.replace("strategy_name: megatron_train",
                                         f"strategy_name: {value}") + INFER)
    got, _ = _intent(path)
    assert isinstance(got["intent.fp8"], Unknown)


def test_config_name_leaving_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.yaml").write_text(HEAD + TRAIN.replace("e4m3", "SECRET"))
    job = tmp_path / "job"
    (job / "examples").mkdir(parents=True)
    (job / ".git").mkdir()
    script = job / "run.sh"
    script.write_text("python examples/start_rlvr_pipeline.py --config_path ../../outside "
                      "--config_name x\n")
    monkeypatch.chdir(job)
    got, read = _intent(script)
    assert "SECRET" not in repr(read.facts)
    assert isinstance(read.facts["config.roll.base_config"], Unknown)
    assert isinstance(got["intent.fp8"], Unknown)


def test_huge_file_is_refused_not_read_as_no(tmp_path: Path) -> None:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD.replace("Qwen/Qwen2.5-7B", "A" * 40_000_000) + TRAIN + INFER)
    start = cpu_seconds()
    got, read = _intent(path)
    assert cpu_seconds() - start < 20
    assert [p for p in read.problems if str(p.path) == str(path)]
    assert got["intent.fp8"] is not False
