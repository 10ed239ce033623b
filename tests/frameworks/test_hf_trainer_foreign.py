"""The HF Trainer reader does not claim a diffusion fine-tuner's config (frameworks/_claim.py
FOREIGN; holdout20: a SimpleTuner config.json with ``report_to``, ``hub_model_id`` and
``num_train_epochs`` was read as TrainingArguments and its ``mixed_precision: bf16`` said FP8
"no" over ``base_model_precision: fp8-torchao``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.frameworks import detect, score
from preflight.frameworks._claim import FOREIGN, GENERIC
from preflight.frameworks.hf_trainer import OWN_KEYS
from preflight.jobs.read import read_paths

TRAINING_ARGS = {"model_name_or_path": "Qwen/Qwen2-0.5B", "output_dir": "out",
                 "per_device_train_batch_size": 4, "num_train_epochs": 1, "report_to": "none",
                 "gradient_checkpointing": True, "bf16": True}

# kohya-ss/sd-scripts train_network.py options as a config (fp8_base: FP8 storage of the base)
KOHYA = {"pretrained_model_name_or_path": "sdxl.safetensors", "network_module": "networks.lora",
         "network_dim": 16, "fp8_base": True, "mixed_precision": "bf16", "output_dir": "out",
         "gradient_checkpointing": True, "num_train_epochs": 4, "report_to": "tensorboard"}
# Nerogar/OneTrainer TrainConfig (a few of its fields)
ONETRAINER = {"training_method": "LORA", "base_model_name": "black-forest-labs/FLUX.1-dev",
              "weight_dtype": "FLOAT_8", "train_dtype": "BFLOAT_16", "output_dir": "o",
              "gradient_checkpointing": "ON", "optim": "ADAMW", "report_to": "none"}


def test_training_arguments_still_claimed() -> None:
    assert detect("json", TRAINING_ARGS)[0] == "hf_trainer"


@pytest.mark.parametrize("data", [KOHYA, ONETRAINER], ids=["kohya", "onetrainer"])
def test_other_trainers_configs_are_not_trainingarguments(data: dict[str, object]) -> None:
    assert score("hf_trainer", data) == 0
    assert detect("json", data)[0] != "hf_trainer"


@pytest.mark.parametrize("key", sorted(FOREIGN))
def test_each_foreign_key_refuses_the_claim(key: str) -> None:
    assert score("hf_trainer", {**TRAINING_ARGS, key: 1}) == 0


def test_foreign_keys_are_no_trainingarguments_or_generic_keys() -> None:
    assert not FOREIGN & OWN_KEYS
    assert not FOREIGN & GENERIC


def test_unclaimed_kohya_config_is_fp8_undetermined(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(KOHYA, indent=1))
    read = read_paths([str(path)])
    assert not any(k.startswith("config.hf_trainer.") for k in read.facts)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
