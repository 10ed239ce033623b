"""The text-level launch readers (accelerate launch, HF Trainer flags, ``llamafactory-cli
train``, ``axolotl train``) and a decoy before the real FP8 command (redteam2's open item,
issue 21): they took the first match of their pattern, so a BF16 command in a function never
called, behind ``if false`` / ``true ||`` or in a ``case`` arm that does not match hid the FP8
command after it (FP8 "no", exit 0; ``true || torchrun ...`` left the job unread). Each
framework now says which of its commands train (``Launch.trains``); a training command in a
branch that does not run is never read, several that may run are read apart
(reading/launchpick.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.jobs.read import read_paths

# (real FP8 command, BF16 decoy, the fact that tells them apart)
JOBS = {
    "accelerate": ("accelerate launch --mixed_precision fp8 train.py",
                   "accelerate launch --mixed_precision bf16 train.py", "intent.fp8"),
    "hf_trainer": ("torchrun --nproc_per_node 8 train.py --output_dir o --bf16 False",
                   "torchrun --nproc_per_node 8 train.py --output_dir o --bf16 True",
                   "config.hf_trainer.bf16"),
    "llamafactory": ("llamafactory-cli train fp8.yaml", "llamafactory-cli train bf16.yaml",
                     "intent.fp8"),
    "axolotl": ("axolotl train fp8.yml", "axolotl train bf16.yml", "intent.fp8"),
}
REAL = {"intent.fp8": True, "config.hf_trainer.bf16": False}
DECOYS = {
    "function never called": "never() {{\n  {}\n}}\n",
    "if false": "if false; then\n  {}\nfi\n",
    "true ||": "true || {}\n",
    "case arm": "case x in y) {} ;; esac\n",
    "if on a value set here": 'MODE=fp8\nif [ "$MODE" = bf16 ]; then\n  {}\nfi\n',
    "function called where it may run": 'f() {{\n  {}\n}}\nif [ -n "$X" ]; then f; fi\n',
}
# decided as bash decides them: the decoy never runs, so the FP8 command is the job's (a
# function never called: reading/shellreach.py, session 44)
DECIDED = {"case arm", "if on a value set here", "if false",   # (`if false`: megflags)
           "function never called"}


def _job(tmp_path: Path, body: str) -> tuple[Any, dict[str, Any]]:
    lmf = "model_name_or_path: x\nstage: sft\nfinetuning_type: lora\noutput_dir: o\n"
    (tmp_path / "fp8.yaml").write_text(lmf + "fp8: true\n")
    (tmp_path / "bf16.yaml").write_text(lmf + "bf16: true\n")
    (tmp_path / "fp8.yml").write_text("base_model: x\nfp8: true\ndatasets: []\n")
    (tmp_path / "bf16.yml").write_text("base_model: x\nbf16: true\ndatasets: []\n")
    (tmp_path / "train.py").write_text("from transformers import Trainer, TrainingArguments\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\n" + body)
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, {**read.facts, **values}


@pytest.mark.parametrize("decoy", sorted(DECOYS))
@pytest.mark.parametrize("kind", sorted(JOBS))
def test_a_decoy_before_the_fp8_command_never_makes_it_no(tmp_path: Path, kind: str,
                                                          decoy: str) -> None:
    real, bf16, fact = JOBS[kind]
    _, got = _job(tmp_path, DECOYS[decoy].format(bf16) + real + "\n")
    if decoy in DECIDED or fact == "intent.fp8":
        # a BF16 decoy that may run beside the FP8 command: the job asks FP8 (the lead's
        # multi-launch policy, session 43: reading/launchpick.py _fp8_runs)
        assert got[fact] == REAL[fact]
        return
    assert isinstance(got[fact], Unknown), got[fact]
    assert "2 times" in got[fact].reason


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_the_unknown_names_both_lines(tmp_path: Path, kind: str) -> None:
    real, bf16, fact = JOBS[kind]
    read, got = _job(tmp_path, f'if [ -n "$X" ]; then\n  {bf16}\nfi\n{real}\n')
    if fact == "intent.fp8":      # the FP8 command is the job, its line named
        assert got[fact] is True
        assert kind != "accelerate" or any("1 of 2 launches asks FP8 (at line 6)" in str(v)
                                           for v in read.provenance.values())
        assert "bf16.y" not in str(read.provenance)     # the BF16 run's file is not the job
    else:
        assert "lines 4, 6" in got[fact].reason
    assert all(p.line for p in read.problems if p.path.endswith("run.sh"))


def test_a_decoy_in_a_dead_branch_is_not_read_at_all(tmp_path: Path) -> None:
    real, bf16, _ = JOBS["accelerate"]
    read, got = _job(tmp_path, f'if [ "a" = "b" ]; then\n  {bf16}\nfi\n{real}\n')
    assert got["intent.fp8"] is True
    assert read.provenance["config.accelerate.mixed_precision"].line == 6


# Real scripts that run more than one command of the framework, only one of which trains: the
# others are never read as the job (ms-swift lora.sh / axolotl README / LLaMA-Factory examples)
AFTER = {
    "accelerate": "accelerate launch --mixed_precision bf16 eval.py\n",
    "llamafactory": "llamafactory-cli export bf16.yaml\n",
    "axolotl": "axolotl merge-lora bf16.yml --lora-model-dir out\n",
    "hf_trainer": "python evaluate.py --output_dir o --bf16 True\n",
}


@pytest.mark.parametrize("kind", sorted(AFTER))
def test_commands_that_do_not_train_stay_out(tmp_path: Path, kind: str) -> None:
    real, _, fact = JOBS[kind]
    _, got = _job(tmp_path, f"{real}\n{AFTER[kind]}")
    assert got[fact] == REAL[fact]


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_commands_that_agree_stay_decided(tmp_path: Path, kind: str) -> None:
    real, _, fact = JOBS[kind]
    _, got = _job(tmp_path, f"for seed in 1 2; do\n  {real}\ndone\n{real}\n")
    assert got[fact] == REAL[fact]


def test_each_framework_with_a_launch_command_says_which_train() -> None:
    for kind in JOBS:
        record = BY_KIND[kind].launch
        assert record is not None and record.trains, kind


def test_more_decoys_than_are_compared_never_make_it_no(tmp_path: Path) -> None:
    # redteam3: nine decoys (that may run) put the FP8 command past the 8 compared
    real, bf16, _ = JOBS["accelerate"]
    decoys = "".join(f'if [ -n "$X{i}" ]; then\n  {bf16}\nfi\n' for i in range(20))
    read, got = _job(tmp_path, decoys + real + "\n")
    assert isinstance(got["intent.fp8"], Unknown)
    assert any(p.line and "more than" in p.message for p in read.problems)


def test_decoys_in_functions_never_called_are_no_commands(tmp_path: Path) -> None:
    real, bf16, _ = JOBS["accelerate"]
    decoys = "".join(f"f{i}() {{\n  {bf16}\n}}\n" for i in range(20))
    read, got = _job(tmp_path, decoys + real + "\n")
    assert got["intent.fp8"] is True
    assert not any("more than" in p.message for p in read.problems)


# --- a command notebook (holdout19: okeeper/LLaMA-Factory qwen/train.sh): every training
# command reads the same value for a setting, from its command line or from the config file it
# names -> that value holds whichever runs; a value that differs, or one a config file not read
# here may give, stays Unknown naming the lines.
LMF = "model_name_or_path: x\nstage: sft\nfinetuning_type: full\noutput_dir: o\n"
FLAGS = "llamafactory-cli train --model_name_or_path x --stage sft --output_dir o"


def _notebook(tmp_path: Path, files: dict[str, str], body: str) -> tuple[Any, dict[str, Any]]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "qwen").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    script = tmp_path / "qwen" / "train.sh"
    script.write_text("llamafactory-cli chat --model_name_or_path x --template qwen\n" + body)
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, {**read.facts, **values}


AGREE = {
    "files and a flag": ({"qwen/a.yaml": LMF + "bf16: true\nlearning_rate: 1e-5\n",
                          "qwen/b.yaml": LMF + "bf16: true\nlearning_rate: 2e-5\n"},
                         "llamafactory-cli train qwen/a.yaml\n"
                         "CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train qwen/b.yaml\n"
                         f"{FLAGS} --bf16\n"),
    # (after a YAML, LLaMA-Factory takes `key=value` words: OmegaConf.from_cli)
    "a flag over a file": ({"qwen/a.yaml": LMF + "bf16: false\n"},
                           "llamafactory-cli train qwen/a.yaml bf16=true\n"
                           f"{FLAGS} --bf16 true\n"),
}


@pytest.mark.parametrize("case", sorted(AGREE))
def test_training_commands_that_agree_decide_the_setting(tmp_path: Path, case: str) -> None:
    files, body = AGREE[case]
    read, got = _notebook(tmp_path, files, body)
    assert got["intent.fp8"] is False
    assert got["config.llamafactory.bf16"] is True
    src = read.provenance["config.llamafactory.bf16"]
    assert src.path.endswith("train.sh") and src.line
    assert "all give this" in src          # the reason it holds whichever runs
    assert not isinstance(got.get("config.llamafactory.base_config"), Unknown)


DIFFER = {
    # (files, body, the fact left Unknown)
    "a file against a flag": ({"qwen/a.yaml": LMF + "bf16: false\n"},
                              f"llamafactory-cli train qwen/a.yaml\n{FLAGS} --bf16\n",
                              "config.llamafactory.bf16"),
    "a file not found": ({"qwen/a.yaml": LMF + "bf16: true\n"},
                         "llamafactory-cli train qwen/a.yaml\n"
                         "llamafactory-cli train qwen/gone.yaml\n", "intent.fp8"),
    "a file that is no YAML": ({"qwen/a.yaml": LMF + "bf16: true\n", "qwen/b.yaml": "a: [\n"},
                               "llamafactory-cli train qwen/a.yaml\n"
                               "llamafactory-cli train qwen/b.yaml\n", "intent.fp8"),
}


FP8_RUNS = {
    "a file asks FP8": ({"qwen/a.yaml": LMF + "bf16: true\n",
                         "qwen/b.yaml": LMF + "bf16: true\nfp8: true\n"},
                        "llamafactory-cli train qwen/a.yaml\nllamafactory-cli train qwen/b.yaml\n",
                        "intent.fp8"),
    "a flag-only run asks FP8": ({"qwen/a.yaml": LMF + "bf16: true\n"},
                                 f"llamafactory-cli train qwen/a.yaml\n{FLAGS} --fp8 true\n",
                                 "intent.fp8"),
    "a flag the flag-only run lacks": ({"qwen/a.yaml": LMF + "bf16: true\n"},
                                       "llamafactory-cli train qwen/a.yaml fp8=true\n"
                                       f"{FLAGS} --bf16\n", "intent.fp8"),
}
"""Runs where one asks FP8 and the others do not: the job asks FP8 (the lead's multi-launch
policy, session 43), from the command line or the config file it names."""


@pytest.mark.parametrize("case", sorted(FP8_RUNS))
def test_one_run_asking_fp8_makes_the_job_ask(tmp_path: Path, case: str) -> None:
    files, body, fact = FP8_RUNS[case]
    _, got = _notebook(tmp_path, files, body)
    assert got[fact] is True


@pytest.mark.parametrize("case", sorted(DIFFER))
def test_training_commands_that_differ_leave_it_unknown(tmp_path: Path, case: str) -> None:
    files, body, fact = DIFFER[case]
    _, got = _notebook(tmp_path, files, body)
    assert isinstance(got[fact], Unknown), got[fact]
    assert "lines" in got[fact].reason
