"""DiffSynth-Studio's train.py on an accelerate launch line (modelscope/DiffSynth-Studio 44c52da8,
examples/qwen_image/model_training, reduced): ``--fp8_models`` is FP8 storage (intent.fp8 true,
backend none, BF16 compute) at its line; without it no FP8; a script of the job that does not
import diffsynth keeps its flags its own; a train.py not found here is DiffSynth's only on two of
its own options; an unexpanded variable is Unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

TRAIN = """import torch, os, argparse, accelerate
from diffsynth.diffusion import *

def main():
    parser = argparse.ArgumentParser()
    parser = add_general_config(parser)
    args = parser.parse_args()
"""
LAUNCH = """modelscope download --dataset x --local_dir ./data

accelerate launch examples/qwen_image/model_training/train.py \\
  --model_id_with_origin_paths "Qwen/Qwen-Image:transformer/*.safetensors" \\
  --lora_base_model "dit" \\
  --use_gradient_checkpointing \\
  {fp8}
"""


def _job(tmp_path: Path, fp8: str = '--fp8_models "Qwen/Qwen-Image:transformer/*.safetensors"',
         train: str | None = TRAIN) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)     # the repository's top: the job root
    folder = tmp_path / "examples/qwen_image/model_training"
    (folder / "special/fp8_training").mkdir(parents=True)
    if train is not None:
        (folder / "train.py").write_text(train)
    script = folder / "special/fp8_training/lora.sh"
    script.write_text(LAUNCH.format(fp8=fp8))
    return script


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_fp8_models_is_fp8_storage_at_its_line(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path))
    assert intent["fp8"][0] is True
    assert intent["fp8"][1].endswith("lora.sh:7")
    assert intent["backend"][0] == "none"
    assert intent["precision"][0] == "bf16"
    assert intent["activation_checkpointing"][0] is True
    assert not any(k.startswith("config.hf_trainer.") for k in read.facts)


def test_without_fp8_models_no_fp8(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, fp8=""))
    assert intent["fp8"][0] is False


def test_empty_list_is_no_fp8(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, fp8='--fp8_models ","'))
    assert intent["fp8"][0] is False


def test_unexpanded_variable_is_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, fp8='--fp8_models "$FP8_MODELS"'))
    assert isinstance(intent["fp8"][0], Unknown)


def test_script_not_found_with_own_options_is_diffsynth(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, train=None))
    assert intent["fp8"][0] is True


def test_job_script_without_diffsynth_keeps_its_flags(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path, train="import argparse\nprint('mine')\n"))
    assert not any(k.startswith("config.diffsynth.") for k in read.facts)
    assert intent["fp8"][0] is not True


def test_hostile_binary_script_decides_nothing(tmp_path: Path) -> None:
    path = _job(tmp_path, train=None)
    (tmp_path / "examples/qwen_image/model_training/train.py").write_bytes(b"\x00\xff" * 5000)
    _, read = _intent(path)
    assert not any(k.startswith("config.diffsynth.") for k in read.facts)
