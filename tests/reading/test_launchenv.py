"""The environment a launch script gives its training command (``export VAR=value``, ``VAR=value
cmd``), read as bash would hand it over; the TRL issue 3860 launch is the sample
(huggingface/trl#3860: ``ACCELERATE_MIXED_PRECISION=fp8`` with an SFTConfig leaving bf16 out)."""

from __future__ import annotations

from pathlib import Path

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launchenv import launch_env
from preflight.reading.shellvars import collect_variables, strip_comments


def _env(script: str, command: str) -> dict[str, tuple[str, int]]:
    text = strip_comments(script)
    at = text.index(command)
    return {n: (v, text.count("\n", 0, p) + 1)
            for n, v, p in launch_env(text, at, collect_variables(text))}


def test_prefix_assignments_and_exports_before_the_command() -> None:
    got = _env("export NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1\n"
               "export A=1 B='two'\n"
               "MP=fp8\n"
               "ACCELERATE_MIXED_PRECISION=$MP CUDA_VISIBLE_DEVICES=0,1 accelerate launch "
               "--num_processes 2 train.py\n", "accelerate launch")
    assert got == {"NVTE_FP8_BLOCK_SCALING_FP32_SCALES": ("1", 1), "A": ("1", 2),
                   "B": ("two", 2), "ACCELERATE_MIXED_PRECISION": ("fp8", 4),
                   "CUDA_VISIBLE_DEVICES": ("0,1", 4)}


def test_what_the_command_does_not_get() -> None:
    got = _env("export LATER_UNUSED=0\n"
               "PLAIN=1\n"                          # not exported: not the child's
               "export FROM_ENV=$SOMETHING\n"       # decided at run time: left out
               "export NAMED\n"                     # exported, never given a value here
               "setup() {\n  export IN_FUNCTION=1\n}\n"
               "# export COMMENTED=1\n"
               "srun --ntasks 8 accelerate launch train.py ACCELERATE_X=1\n"
               "export AFTER=1\n", "accelerate launch")
    assert got == {"LATER_UNUSED": ("0", 1)}


def test_export_of_a_variable_set_before() -> None:
    got = _env("NVTE_DEBUG=1\nexport NVTE_DEBUG\ntorchrun train.py\n", "torchrun")
    assert got == {"NVTE_DEBUG": ("1", 2)}


def test_trl_3860_env_prefix_reaches_the_trainer_rules(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "from trl import SFTConfig, SFTTrainer\n"
        "args = SFTConfig(output_dir='out', per_device_train_batch_size=4)\n"
        "SFTTrainer(model='m', args=args, train_dataset=None).train()\n")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nexport WANDB_API_KEY=abc\nexport CUDA_VISIBLE_DEVICES=0\n"
                   "ACCELERATE_MIXED_PRECISION=fp8 accelerate launch --num_processes 8 "
                   "train.py\n")
    read = read_paths([str(run)], None)
    assert read.facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"
    assert read.provenance["env.ACCELERATE_MIXED_PRECISION"] == f"{run}:4"
    # only the frameworks' prefixes: not the machine's, never a secret
    assert "env.CUDA_VISIBLE_DEVICES" not in read.facts
    assert "env.WANDB_API_KEY" not in read.facts
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert read.facts["config.trl.config_class"] == "SFTConfig"
    assert "config.hf_trainer.bf16" not in read.facts       # FP8D-HF-0050's case


def test_verl_keeps_its_own_env_facts(tmp_path: Path) -> None:
    # verl's own env handling is unchanged: config.verl.env.* stays, env.* added beside it
    run = tmp_path / "run.sh"
    run.write_text("export NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1\n"
                   "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm\n")
    read = read_paths([str(run)], None)
    assert read.facts["config.verl.env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"
    assert read.facts["env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"


def test_an_accelerate_launch_line_with_no_flag_is_read(tmp_path: Path) -> None:
    # red team (2026-11-27): the environment alone asks for FP8; the line was "no Accelerate
    # settings" (an error) and its env.* facts were dropped
    run = tmp_path / "run.sh"
    run.write_text("ACCELERATE_MIXED_PRECISION=fp8 accelerate launch train.py\n")
    read = read_paths([str(run)])
    assert not [p for p in read.problems if p.level == "error"], read.problems
    assert read.facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    # no environment, and the script it runs is not here: FP8 is not known, never "no"
    run.write_text("accelerate launch train.py\n")
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    fp8 = values["intent.fp8"]
    assert isinstance(fp8, Unknown) and "train.py" in fp8.reason
    (tmp_path / "train.py").write_text("print('hello')\n")       # here, and sets nothing
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False
