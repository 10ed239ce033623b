"""LLaMA-Factory started from a launch line (issue 22 item 3): ``accelerate launch ... src/train.py
--flags`` / ``... src/train.py x.yaml`` and ``llamafactory-cli train x.yaml key=value`` are read as
LLaMA-Factory's, so the job runs on LLaMA-Factory -> HF Trainer -> accelerate and LLaMA-Factory's
defaults (gradient checkpointing on) apply."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts
from preflight.jobs.read import read_paths

ACC_YAML = """\
compute_environment: LOCAL_MACHINE
distributed_type: NO
mixed_precision: fp8
fp8_config:
  backend: TE
  fp8_format: HYBRID
num_processes: 1
"""


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def _derive(paths: list[str], **pkgs: str) -> dict[str, object]:
    read = read_paths(paths)
    facts = Facts(read.facts, read.provenance).merged(
        {f"pkg.{k}.version": v for k, v in pkgs.items()}, source="assume")
    return intent.derive(facts)[0]


# sbhavani/llamafactory-fp8-hopper 90a462ff scripts/train_fp8_proper.sh, reduced
LF_FLAGS = """\
accelerate launch \\
  --config_file acc.yaml \\
  /workspace/LLaMA-Factory/src/train.py \\
  --stage sft --do_train true --model_name_or_path Qwen/Qwen2.5-7B \\
  --finetuning_type full --template qwen --cutoff_len 1024 \\
  --per_device_train_batch_size 4 --bf16 true --output_dir out
"""


def test_lf_flags_after_its_train_py_are_llamafactory_settings(tmp_path: Path) -> None:
    _write(tmp_path, "acc.yaml", ACC_YAML)
    line = _write(tmp_path, "run.sh", LF_FLAGS)
    read = read_paths([line])
    assert read.facts["config.llamafactory.bf16"] is True
    assert read.facts["config.llamafactory.stage"] == "sft"
    assert not any(n.startswith("config.hf_trainer.") for n in read.facts)
    values = _derive([line], accelerate="1.11.0")
    assert values["intent.stack"] == ["accelerate", "llamafactory", "hf_trainer"]
    assert values["intent.activation_checkpointing"] is True     # LLaMA-Factory's default
    # accelerate >= 1.9: the TE backend `accelerate launch` exports still converts under bf16
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    old = _derive([line], accelerate="1.8.1")
    assert old["intent.fp8"] is False and "intent.fp8_overridden_by" in old


@pytest.mark.parametrize("command", [
    "llamafactory-cli train examples/qwen_fp8.yaml cutoff_len=4096",
    "FORCE_TORCHRUN=1 lmf train examples/qwen_fp8.yaml cutoff_len=4096",
    "accelerate launch --config_file acc.yaml LLaMA-Factory/src/train.py examples/qwen_fp8.yaml "
    "cutoff_len=4096",
])
def test_a_yaml_and_its_dotlist_overrides(tmp_path: Path, command: str) -> None:
    _write(tmp_path, "acc.yaml", ACC_YAML)
    _write(tmp_path, "examples/qwen_fp8.yaml", """\
        stage: sft
        finetuning_type: full
        template: qwen
        cutoff_len: 1024
        fp8: true
        fp8_backend: te
        bf16: true
        output_dir: out
    """)
    line = _write(tmp_path, "run.sh", command + "\n")
    read = read_paths([line])
    assert read.facts["config.llamafactory.cutoff_len"] == 4096          # the line wins
    assert read.provenance["config.llamafactory.cutoff_len"].endswith("run.sh:1")
    assert read.facts["config.llamafactory.fp8_backend"] == "te"
    assert read.facts["config.accelerate.kwargs_handlers"] == ["TERecipeKwargs"]
    assert "llamafactory" in [k for _, k in read.files]


def test_flags_only_llamafactory_takes_mark_any_script_as_its(tmp_path: Path) -> None:
    line = _write(tmp_path, "run.sh", "torchrun --nproc_per_node 8 train.py --stage sft "
                                      "--finetuning_type lora --fp8 true --fp8_backend te "
                                      "--output_dir o --per_device_train_batch_size 2\n")
    read = read_paths([line])
    assert read.facts["config.llamafactory.finetuning_type"] == "lora"
    assert read.facts["config.accelerate.fp8_config.backend"] == "TE"   # its TE handler


def test_plain_trainer_flags_stay_hf_trainer(tmp_path: Path) -> None:
    line = _write(tmp_path, "run.sh", "accelerate launch --mixed_precision fp8 train.py "
                                      "--output_dir o --bf16 --template x\n")
    read = read_paths([line])
    assert read.facts["config.hf_trainer.bf16"] is True
    assert not any(n.startswith("config.llamafactory.") for n in read.facts)


# LLaMA-Factory v1 (USE_V1=1): src/llamafactory/v1/launcher.py l.31 at ff6d4d12 trains on
# train / sft / dpo / rm; its guide launches with `llamafactory-cli sft` (holdout15).
@pytest.mark.parametrize("command", [
    "USE_V1=1 llamafactory-cli sft examples/v1/full.yaml",
    "USE_V1=1 lmf dpo examples/v1/full.yaml",
    "export USE_V1=1\nllamafactory-cli rm examples/v1/full.yaml",
])
def test_v1_training_subcommands_are_launch_lines(tmp_path: Path, command: str) -> None:
    _write(tmp_path, "examples/v1/full.yaml", "model: Qwen/Qwen3-0.6B\nbf16: true\n"
                                              "fp8: true\nfp8_backend: te\n")
    read = read_paths([_write(tmp_path, "run.sh", command + "\n")])
    assert read.facts["config.llamafactory.fp8"] is True
    assert ("llamafactory" in [k for _, k in read.files])


@pytest.mark.parametrize("command", [
    "USE_V1=1 llamafactory-cli merge examples/v1/full.yaml",   # v1's non-training commands
    "USE_V1=1 llamafactory-cli chat examples/v1/full.yaml",
    "llamafactory-cli sftx examples/v1/full.yaml",             # not a sub-command: a prefix only
    "echo 'run: llamafactory-cli sft examples/v1/full.yaml'",  # text in a message
])
def test_other_v1_commands_and_lookalikes_are_not_the_job(tmp_path: Path, command: str) -> None:
    _write(tmp_path, "examples/v1/full.yaml", "model: Qwen/Qwen3-0.6B\nfp8: true\n")
    read = read_paths([_write(tmp_path, "run.sh", command + "\n")])
    assert "config.llamafactory.fp8" not in read.facts
