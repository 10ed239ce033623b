"""SimpleTuner's config.json (bghira/SimpleTuner 002cabbb, the Wan 2.1 8xH100 example reduced):
``base_model_precision`` fp8-torchao is FP8 (torchao, tensorwise) at its line, quanto FP8
presets Unknown, int8 / no_change no FP8; keys with ``--`` read the same; hostile values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import detect
from preflight.intent import derive
from preflight.jobs.read import read_paths

BASE: dict[str, Any] = {
    "attention_mechanism": "flash-attn-3-hub", "base_model_precision": "fp8-torchao",
    "context_parallel_size": 2, "data_backend_config": "config/multidatabackend.json",
    "gradient_checkpointing": True, "hub_model_id": "x", "learning_rate": 6e-5,
    "mixed_precision": "bf16", "model_family": "wan", "model_flavour": "t2v-480p-14b-2.1",
    "model_type": "lora", "num_train_epochs": 0, "output_dir": "out", "report_to": "none",
    "train_batch_size": 2}


def _intent(tmp_path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data, indent=1))
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_fp8_torchao_is_fp8_at_its_line(tmp_path: Path) -> None:
    intent, read = _intent(tmp_path, BASE)
    assert not any(k.startswith("config.hf_trainer.") for k in read.facts)
    assert intent["fp8"][0] is True
    assert intent["fp8"][1].endswith("config.json:3")
    assert intent["backend"][0] == "torchao"
    assert intent["recipe"][0] == "tensorwise"
    assert intent["precision"][0] == "bf16"
    assert intent["cp"][0] == 2


def test_dashed_keys_read_the_same(tmp_path: Path) -> None:
    intent, _ = _intent(tmp_path, {f"--{k}": v for k, v in BASE.items()})
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "torchao"


@pytest.mark.parametrize("preset", ["no_change", "int8-quanto", "int8-torchao", "nf4-bnb"])
def test_non_fp8_presets_are_no_fp8(tmp_path: Path, preset: str) -> None:
    intent, _ = _intent(tmp_path, {**BASE, "base_model_precision": preset})
    assert intent["fp8"][0] is False


def test_left_out_is_no_fp8_by_default(tmp_path: Path) -> None:
    data = {k: v for k, v in BASE.items() if k != "base_model_precision"}
    intent, _ = _intent(tmp_path, data)
    assert intent["fp8"][0] is False


@pytest.mark.parametrize("preset", ["fp8-quanto", "fp8uz-quanto", "fp9-magic", 8, ["fp8"]])
def test_quanto_and_unknown_presets_are_unknown(tmp_path: Path, preset: Any) -> None:
    intent, _ = _intent(tmp_path, {**BASE, "base_model_precision": preset})
    assert isinstance(intent["fp8"][0], Unknown)


def test_a_trainingarguments_file_is_not_simpletuner() -> None:
    data = {"output_dir": "o", "per_device_train_batch_size": 1, "report_to": "none",
            "mixed_precision": "bf16", "lora_type": "standard"}
    assert detect("json", data)[0] != "simpletuner"


def test_hostile_many_keys_bounded(tmp_path: Path) -> None:
    data = {**BASE, **{f"k{i}": i for i in range(20000)}}
    intent, _ = _intent(tmp_path, data)
    assert intent["fp8"][0] is True
