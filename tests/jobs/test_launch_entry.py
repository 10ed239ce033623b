"""Flags that mark a framework's arguments decide a launch script's framework only when the
script the line runs may be that framework's entry point (``Launch.entry``, jobs/scripts.py):
``python3 train.py --fp8-recipe mxfp8`` with the job's own click train.py (Scicom
small-malaysian-lm a0af01f5 b200-bf16-logits-mxfp8.sh:7-11, held-out set 6) is no Megatron-LM
launch; Megatron-LM's pretrain_gpt.py imports megatron (``from megatron.training import
pretrain``), and one not in the job (a checkout's) still reads as Megatron."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.jobs.read import read_paths

_OWN = "import click\n\n@click.option('--fp8-recipe', default=None)\n@click.command()\n" \
       "def main(fp8_recipe):\n    pass\n"
_MEGATRON = "from megatron.training import pretrain\n\npretrain()\n"
_PLAIN = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--output_dir')\n" \
         "args = p.parse_args()\n"
_HF = "from transformers import HfArgumentParser, TrainingArguments\n" \
      "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"


def _kinds(tmp_path: Path, script: str | None, line: str) -> set[str]:
    if script is not None:
        (tmp_path / "train.py").write_text(script)
    (tmp_path / "run.sh").write_text(line + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    return {kind for path, kind in read.files if path.endswith("run.sh")}


@pytest.mark.parametrize("line", [
    'python3 train.py --fp8-recipe "mxfp8" --num-layers 2',
    'torchrun --nproc_per_node 8 train.py --fp8-recipe mxfp8',
])
def test_the_jobs_own_script_takes_its_flags(tmp_path: Path, line: str) -> None:
    assert "megatron" not in _kinds(tmp_path, _OWN, line)


def test_a_script_that_imports_megatron_is_megatrons(tmp_path: Path) -> None:
    line = "torchrun train.py --fp8-format hybrid --fp8-recipe tensorwise --num-layers 2"
    assert _kinds(tmp_path, _MEGATRON, line) == {"megatron"}


@pytest.mark.parametrize("line", [
    "torchrun pretrain_gpt.py --fp8-format hybrid --num-layers 2",      # a checkout's, not here
    "torchrun $MEGATRON/pretrain_gpt.py --fp8-format hybrid",
    "--fp8-format hybrid\n--num-layers 2",                              # an argument file
])
def test_a_script_not_found_here_decides_nothing(tmp_path: Path, line: str) -> None:
    assert _kinds(tmp_path, None, line) == {"megatron"}


def test_hf_trainer_flags_beside_a_plain_argparse_script_are_its_own(tmp_path: Path) -> None:
    line = "python train.py --output_dir out --per_device_train_batch_size 4"
    (tmp_path / "train.py").write_text(_PLAIN)
    (tmp_path / "run.sh").write_text(line + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    # not "no HF Trainer settings found" (an unreadable file): a script of no framework read
    codes = [p.code for p in read.problems if p.path.endswith("run.sh")]
    assert "unknown_framework" in codes and "unreadable" not in codes
    assert _kinds(tmp_path, _HF, line) == {"hf_trainer"}


@pytest.mark.parametrize("script, line, kind", [
    # a path alone (Megatron-Bridge's examples/models/, NeMo-RL's examples/run_sft.py) or a
    # flag alone (slime's --rollout-batch-size) makes no framework's launch when the script is
    # the job's own and never imports it
    ("examples/models/train.py", "torchrun examples/models/train.py model.fp8=e4m3",
     "megatron_bridge"),
    ("examples/run_sft.py", "python examples/run_sft.py --config cfg.yaml", "nemo_rl"),
    ("train.py", "python3 train.py --rollout-batch-size 8 --fp8", "slime"),
])
def test_a_path_or_flag_alone_beside_the_jobs_own_script(tmp_path: Path, script: str,
                                                        line: str, kind: str) -> None:
    (tmp_path / script).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / script).write_text(_OWN)
    (tmp_path / "run.sh").write_text(line + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert kind not in {k for _, k in read.files}
    (tmp_path / script).write_text(f"import {'megatron.bridge' if kind == 'megatron_bridge' else kind}\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert kind in {k for p, k in read.files if p.endswith("run.sh")}
