"""The shell flag editor's "set to false": a flag that takes a value (``--bf16 True``, ms-swift's
``--merge_lora true``, ``--flag=true``) gets its value word made false in the same spelling, since
removing it brings back the framework's default (true for ms-swift's ``--merge_lora`` where
``--save_safetensors`` is on); only a bare ``store_true`` flag is removed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api
from preflight.fixdiff import render_diff, shelledit
from preflight.fixdiff.common import EditError
from preflight.jobs.read import read_paths


@pytest.mark.parametrize(("line", "flag", "want"), [
    ("swift sft --merge_lora true --bf16 true x\n", "merge_lora",
     "swift sft --merge_lora false --bf16 true x\n"),
    ("python train.py --bf16 True --x 1\n", "bf16", "python train.py --bf16 False --x 1\n"),
    ("python train.py --bf16=TRUE\n", "bf16", "python train.py --bf16=FALSE\n"),
    ("python train.py --bf16 'true' \\\n", "bf16", "python train.py --bf16 'false' \\\n"),
    ("python train.py --bf16 1\n", "bf16", "python train.py --bf16 0\n"),
    ("pretrain_gpt.py --bf16 --lr 1\n", "bf16", "pretrain_gpt.py --lr 1\n"),   # store_true
])
def test_set_false_keeps_a_valued_flag_and_removes_a_bare_one(line: str, flag: str,
                                                              want: str) -> None:
    assert shelledit.set_flag(line, flag, 1, False, True) == want


def test_set_false_refuses_a_value_that_is_no_bool() -> None:
    with pytest.raises(EditError, match="not a true/false value"):
        shelledit.set_flag("x --flag maybe\n", "flag", 1, False, "maybe")


def test_ms_swift_reads_the_edited_flag_as_false(tmp_path: Path) -> None:
    # ms-swift: `megatron sft ... --merge_lora true` (its flags parse true|false values)
    line = "megatron sft --model Qwen/Qwen3-8B --fp8_format e4m3 --merge_lora true --tp 2\n"
    script = tmp_path / "lora.sh"
    script.write_text(shelledit.set_flag(line, "merge_lora", 1, False, True))
    read = read_paths([str(script)])
    assert read.facts["config.swift.merge_lora"] in (False, "false")


GIT = shutil.which("git")
TRAIN = """\
from transformers import HfArgumentParser, Trainer, TrainingArguments

parser = HfArgumentParser(TrainingArguments)
(args,) = parser.parse_args_into_dataclasses()
Trainer(model=None, args=args).train()
"""
RUN = """\
#!/bin/bash
# launch (HfArgumentParser reads `--bf16 False` as false)
accelerate launch --mixed_precision fp8 --num_processes 8 train.py \\
    --output_dir out --bf16 True \\
    --logging_steps 1
"""


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
def test_hf_0001_diff_sets_bf16_false_and_applies(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "run.sh").write_text(RUN)
    monkeypatch.chdir(tmp_path)
    assume = {"gpu": "H100", "pkg.accelerate": "1.11.0", "pkg.torchao": "none",
              "pkg.torch": "2.8.0+cu128", "pkg.transformers": "4.57.0"}
    before = api.check(["run.sh"], assume=assume)
    assert "FP8D-HF-0001" in {f.rule_id for f in before.findings}
    diff = render_diff(before, ["run.sh"])
    assert "+    --output_dir out --bf16 False \\" in diff, diff
    assert GIT is not None
    subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run([GIT, "apply", "-p1", "-"], cwd=tmp_path, input=diff.encode(),
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "--bf16 False" in (tmp_path / "run.sh").read_text()
    after = api.check(["run.sh"], assume=assume)
    assert "FP8D-HF-0001" not in {f.rule_id for f in after.findings}
