"""SimpleTuner's other config files (frameworks/simpletuner_env.py; bghira/SimpleTuner v4.8.0
0a03ecf3 simpletuner/helpers/configuration/env_file.py and toml_file.py): ``config.env``'s
``export BASE_MODEL_PRECISION=...`` lines and ``TRAINER_EXTRA_ARGS``, and ``config.toml`` (the
same options as config.json, mapping_to_cli_args): firing, quiet and hostile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ENV = """\
# SimpleTuner config.env
export MODEL_TYPE='lora'
export MODEL_FAMILY="flux"
export MODEL_NAME="black-forest-labs/FLUX.1-dev"
export BASE_MODEL_PRECISION="{precision}"
export MIXED_PRECISION="bf16"
export TRAIN_BATCH_SIZE=1
export USE_GRADIENT_CHECKPOINTING=true
export DATALOADER_CONFIG="config/multidatabackend.json"
export TRAINER_EXTRA_ARGS="--lora_rank=16{extra}"
"""


def _read(tmp_path: Path, name: str, text: str) -> tuple[dict[str, Any], Any]:
    path = tmp_path / "config" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_config_env_fp8_torchao_is_fp8_at_its_line(tmp_path: Path) -> None:
    intent, read = _read(tmp_path, "config.env", ENV.format(precision="fp8-torchao", extra=""))
    assert read.files[0][1] == "simpletuner"
    assert intent["fp8"][0] is True and intent["fp8"][1].endswith("config.env:5")
    assert intent["backend"][0] == "torchao" and intent["precision"][0] == "bf16"
    assert read.facts["config.simpletuner.gradient_checkpointing"] is True


@pytest.mark.parametrize("precision", ["int8-quanto", "no_change", "nf4-bnb"])
def test_config_env_without_fp8_is_no(tmp_path: Path, precision: str) -> None:
    intent, _ = _read(tmp_path, "config.env", ENV.format(precision=precision, extra=""))
    assert intent["fp8"][0] is False


def test_trainer_extra_args_win_over_the_mapped_variable(tmp_path: Path) -> None:
    intent, _ = _read(tmp_path, "config.env", ENV.format(
        precision="int8-quanto", extra=" --base_model_precision fp8-torchao"))
    assert intent["fp8"][0] is True and intent["fp8"][1].endswith("config.env:10")


def test_a_commented_variable_sets_nothing(tmp_path: Path) -> None:
    text = ENV.format(precision="int8-quanto", extra="").replace(
        'export BASE_MODEL_PRECISION="int8-quanto"', '#export BASE_MODEL_PRECISION="fp8-torchao"')
    intent, read = _read(tmp_path, "config.env", text)
    assert "config.simpletuner.base_model_precision" not in read.facts
    assert intent["fp8"][0] is False              # SimpleTuner's default, no_change


def test_a_placeholder_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(tmp_path, "config.env", ENV.format(precision="${PRECISION}", extra=""))
    assert isinstance(intent["fp8"][0], Unknown)


def test_config_toml_reads_as_config_json(tmp_path: Path) -> None:
    text = ('"--model_family" = "flux"\n"--base_model_precision" = "fp8-torchao"\n'
            '"--data_backend_config" = "config/multidatabackend.json"\nmixed_precision = "bf16"\n')
    intent, read = _read(tmp_path, "config.toml", text)
    assert read.files[0][1] == "simpletuner"
    assert intent["fp8"][0] is True and intent["fp8"][1].endswith("config.toml:2")


def test_hostile_config_env_is_bounded(tmp_path: Path) -> None:
    text = ENV.format(precision="fp8-torchao", extra=" --x" * 20000) + \
        "export BASE_MODEL_PRECISION+=" + "w " * 100000 + "\n" + "A=b\n" * 20000
    intent, read = _read(tmp_path, "config.env", text)
    assert read.files and read.files[0][1] == "simpletuner"
    # the appended words make the preset no name SimpleTuner knows: not FP8 "no"
    assert isinstance(intent["fp8"][0], Unknown)


def test_a_binary_config_env_is_a_problem_naming_it(tmp_path: Path) -> None:
    _, read = _read(tmp_path, "config.env", ENV.format(precision="fp8-torchao", extra="") +
                    "A=\x00\x01\n")
    assert not read.files
    assert any(p.path.endswith("config.env") for p in read.problems)


def test_a_shell_script_of_another_trainer_is_not_claimed(tmp_path: Path) -> None:
    text = "export MODEL_FAMILY=llama\ntorchrun --nproc_per_node 8 train.py --bf16\n"
    _, read = _read(tmp_path, "run.sh", text)
    assert all(kind != "simpletuner" for _, kind in read.files)
