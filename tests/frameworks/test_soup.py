"""Soup's ``soup.yaml`` (the chat template of MakazhanAlpamys/Soup v0.73.3 with the FP8 lines its
docs give) and ``soup train --config`` launch lines: ``quantization_aware: fp8`` is torchao FP8 at
its line, ``true`` int8 QAT (no FP8), a value SoupConfig refuses and the mlx backend Unknown, the
recipe tensorwise unless ``fp8_recipe``; the job runs on the HF Trainer; HW-0001 on an A100."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import frameworks
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

SOUP = """base: meta-llama/Llama-3.1-8B-Instruct
task: sft
{backend}
data:
  train: ./data/train.jsonl
  max_length: 2048
training:
  epochs: 3
  lr: 2e-5
  batch_size: auto
  lora:
    r: 64
  quantization_aware: {qa}
  quantization: none
{extra}
output: ./output
"""


def _job(tmp_path: Path, qa: str = "fp8", extra: str = "", backend: str = "",
         launch: str = "soup train --config soup.yaml") -> Path:
    (tmp_path / "soup.yaml").write_text(SOUP.format(qa=qa, extra=extra, backend=backend))
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + launch + "\n")
    return tmp_path / "run.sh"


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_quantization_aware_fp8_is_torchao_tensorwise(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path))
    assert "soup.yaml" in [Path(p).name for p, k in read.files if k == "soup"]
    assert intent["fp8"][0] is True
    assert intent["fp8"][1].endswith("soup.yaml:13")
    assert intent["backend"][0] == "torchao"
    assert intent["recipe"][0] == "tensorwise"
    assert intent["precision"][0] == "bf16"
    assert "hf_trainer" in intent["stack"][0]


@pytest.mark.parametrize("launch", ["soup train -c soup.yaml", "soup train --config=soup.yaml",
                                    "soup train"])
def test_launch_forms_link_the_config(tmp_path: Path, launch: str) -> None:
    intent, _ = _intent(_job(tmp_path, launch=launch))
    assert intent["fp8"][0] is True


def test_recipe_key(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, extra="  fp8_recipe: rowwise"))
    assert intent["recipe"][0] == "rowwise"
    intent, _ = _intent(_job(tmp_path, extra="  fp8_recipe: blockwise"))
    assert isinstance(intent["recipe"][0], Unknown)


@pytest.mark.parametrize("qa", ["true", "false"])
def test_int8_qat_and_off_are_no_fp8(tmp_path: Path, qa: str) -> None:
    intent, _ = _intent(_job(tmp_path, qa=qa))
    assert intent["fp8"][0] is False


def test_refused_value_and_mlx_are_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, qa="fp4"))
    assert isinstance(intent["fp8"][0], Unknown)
    intent, _ = _intent(_job(tmp_path, backend="backend: mlx"))
    assert isinstance(intent["fp8"][0], Unknown)


def test_auto_mixed_precision_is_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, extra="  auto_mixed_precision: true"))
    assert isinstance(intent["precision"][0], Unknown)


def test_recognised_as_soup_only() -> None:
    data = parse_yaml(SOUP.format(qa="fp8", extra="", backend="")).data
    scores = {kind: frameworks.score(kind, data) for kind in frameworks.KINDS}
    assert max(scores, key=lambda k: scores[k]) == "soup"
    assert frameworks.score("soup", {"base": "x", "training": {"steps": 1}}) == 0
    assert frameworks.score("soup", {"base": 3, "training": {"lr": 1}}) == 0
