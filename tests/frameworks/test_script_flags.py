"""Flags after the training script are TrainingArguments only when the script is a Trainer job:
a plain ``Accelerator`` loop found here that parses ``--model_name_or_path`` with argparse is not
an HF Trainer job (newcomer review 2026-11, row 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.jobs.read import read_paths

PLAIN = """import argparse
from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--model_name_or_path")
parser.add_argument("--per_device_train_batch_size", type=int)
args = parser.parse_args()
accelerator = Accelerator(mixed_precision="fp8")
"""
TRAINER = """from transformers import HfArgumentParser, Trainer, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
Trainer(model=model, args=args).train()
"""
FLAGS = "--model_name_or_path m --per_device_train_batch_size 4 --bf16"


@pytest.mark.parametrize("launcher", ["accelerate launch --num_processes 8",
                                      "torchrun --nproc-per-node 8"])
@pytest.mark.parametrize(("script", "hf"), [(PLAIN, False), (TRAINER, True), (None, True)])
def test_flags_after_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: str,
                                script: str | None, hf: bool) -> None:
    monkeypatch.chdir(tmp_path)
    if script is not None:
        (tmp_path / "train.py").write_text(script)
    (tmp_path / "launch.sh").write_text(f"#!/bin/bash\n{launcher} train.py {FLAGS}\n")
    read = read_paths(["launch.sh"])
    kinds = {k for _, k in read.files}
    assert ("hf_trainer" in kinds or "config.hf_trainer.bf16" in read.facts) is hf, kinds
    if script is PLAIN and launcher.startswith("accelerate"):
        assert read.facts["config.accelerate.mixed_precision"] == "fp8"     # the script's own
