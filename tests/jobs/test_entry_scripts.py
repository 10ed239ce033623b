"""A script a launch line runs that is its framework's own entry point (jobs/entryscripts.py):
its settings are the launch line's, so it is no "file that holds no settings" (FP8D-CFG-NOT-
CONFIG, code not_a_config); one that holds settings a reader knows is still read, and a script
of a framework without an entry pattern keeps the warning."""

from __future__ import annotations

from pathlib import Path

from preflight.jobs.read import read_paths


def _own(read, name: str) -> list[str]:  # noqa: ANN001 - the job read
    return [p.code for p in read.problems if p.path.endswith(name)]


def test_megatron_lm_pretrain_script_beside_its_launch_is_not_a_warning(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --fp8-format hybrid "
        "--transformer-impl transformer_engine\n")
    (tmp_path / "pretrain_gpt.py").write_text(
        "from megatron.training import pretrain\n\nif __name__ == '__main__':\n"
        "    pretrain(None, None, None)\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert _own(read, "pretrain_gpt.py") == []
    assert read.facts["config.megatron.fp8_format"] == "hybrid"


def test_slime_train_py_beside_its_launch_is_not_a_warning(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "python3 train.py --actor-num-nodes 1 --fp8-format e4m3 --fp8-recipe blockwise "
        "--transformer-impl transformer_engine --bf16\n")
    (tmp_path / "train.py").write_text("import ray\nfrom slime.utils.arguments import parse_args\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert _own(read, "train.py") == []
    assert read.facts["config.slime.fp8_recipe"] == "blockwise"


def test_a_script_of_a_framework_without_an_entry_keeps_its_warning(tmp_path: Path) -> None:
    # accelerate reads its launch line, but the script holds the training loop, which may build
    # the Accelerator: one that holds nothing readable is still said
    (tmp_path / "run.sh").write_text("accelerate launch --config_file acc.yaml train.py\n")
    (tmp_path / "acc.yaml").write_text("distributed_type: MULTI_GPU\nmixed_precision: fp8\n")
    (tmp_path / "train.py").write_text("print('hello')\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert _own(read, "train.py") == ["not_a_config"]


def test_an_entry_script_that_holds_settings_is_still_read(tmp_path: Path) -> None:
    # HF Trainer's entry pattern matches the script; the launch line's flags are read, and so is
    # the TrainingArguments the script writes itself
    (tmp_path / "run.sh").write_text("python train.py --output_dir out --bf16 True\n")
    (tmp_path / "train.py").write_text(
        "from transformers import Trainer, TrainingArguments\n"
        "args = TrainingArguments(output_dir='out', gradient_checkpointing=True)\n"
        "Trainer(model=None, args=args).train()\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert _own(read, "train.py") == []
    assert any(path.endswith("train.py") for path, _ in read.files)
