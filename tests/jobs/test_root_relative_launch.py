"""Launch paths relative to the repository's top (holdout20, DiffSynth-Studio @ 44c52da8:
examples/qwen_image/model_training/special/fp8_training/Qwen-Image-LoRA.sh runs
``accelerate launch examples/qwen_image/model_training/train.py``): looked up from each folder
above the launch script up to the job root, never above it; two folders holding it are
Unknown naming both; a ``cd`` before the line decides; a path out of the job is never read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading import launchroot
from preflight.reading.boundary import enforced

FP8 = 'from accelerate import Accelerator\nacc = Accelerator(mixed_precision="fp8")\n'
BF16 = 'from accelerate import Accelerator\nacc = Accelerator(mixed_precision="bf16")\n'
DEEP = "examples/qwen_image/model_training/special/fp8_training"
TRAIN = "examples/qwen_image/model_training/train.py"


def _repo(root: Path, launch: str, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    script = root / DEEP / "run.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/bash\n" + launch + "\n")
    return script


def _read(script: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(script)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


def _files(read: Any) -> set[str]:
    return {os.path.realpath(f["path"]) for f in read.facts.get("config.files", [])}


@pytest.mark.parametrize("launch", [
    f"accelerate launch {TRAIN} --lr 1e-4",
    f"python {TRAIN}",
    f"torchrun --nproc_per_node 8 {TRAIN}",
    f"deepspeed --num_gpus 8 {TRAIN}",
])
def test_script_from_the_repository_top_is_read(tmp_path: Path, launch: str) -> None:
    script = _repo(tmp_path, launch, {TRAIN: FP8})
    intent, read = _read(script)
    assert os.path.realpath(tmp_path / TRAIN) in _files(read)
    assert intent["fp8"] is True


def test_beside_the_script_wins_over_the_top(tmp_path: Path) -> None:
    script = _repo(tmp_path, "python train.py", {"train.py": FP8, f"{DEEP}/train.py": BF16})
    intent, read = _read(script)
    assert os.path.realpath(tmp_path / DEEP / "train.py") in _files(read)
    assert os.path.realpath(tmp_path / "train.py") not in _files(read)
    assert intent["fp8"] is False


def test_nearest_single_folder_above(tmp_path: Path) -> None:
    script = _repo(tmp_path, "python model_training/train.py",
                   {"examples/qwen_image/model_training/train.py": FP8})
    intent, read = _read(script)
    assert os.path.realpath(tmp_path / TRAIN) in _files(read)
    assert intent["fp8"] is True


def test_two_folders_above_is_unknown_naming_both(tmp_path: Path) -> None:
    script = _repo(tmp_path, "python train.py",
                   {"train.py": FP8, "examples/qwen_image/train.py": BF16})
    intent, read = _read(script)
    assert not {os.path.realpath(tmp_path / "train.py"),
                os.path.realpath(tmp_path / "examples/qwen_image/train.py")} & _files(read)
    assert intent["fp8"] is not True and intent["fp8"] is not False
    said = [p for p in read.problems if p.code == "reference"]
    assert said and said[0].line == 2
    assert "examples/qwen_image/train.py" in said[0].message and \
        os.path.join(os.path.realpath(tmp_path), "train.py") in said[0].message


def test_cd_before_the_line_decides(tmp_path: Path) -> None:
    script = _repo(tmp_path, f"cd /opt/elsewhere\npython {TRAIN}", {TRAIN: FP8})
    _, read = _read(script)
    assert os.path.realpath(tmp_path / TRAIN) not in _files(read)


def test_never_above_the_job_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "train.py").parent.mkdir(parents=True)
    (outer / "train.py").write_text(FP8)
    script = _repo(outer / "repo", "python train.py", {})
    intent, read = _read(script)
    assert os.path.realpath(outer / "train.py") not in _files(read)
    assert intent.get("fp8") is not True


def test_path_escaping_the_job_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "train.py").write_text(FP8)
    script = _repo(tmp_path / "repo", "python ../secret/train.py\npython ../../../../../secret/"
                   "train.py", {})
    _, read = _read(script)
    assert os.path.realpath(tmp_path / "secret" / "train.py") not in _files(read)


def test_symlink_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "train.py").write_text(FP8)
    script = _repo(tmp_path / "repo", f"python {TRAIN}", {})
    (tmp_path / "repo" / TRAIN).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "repo" / TRAIN).symlink_to(tmp_path / "secret" / "train.py")
    with enforced([str(script)]):
        assert launchroot.find(TRAIN, str(script)).path is None
    intent, _ = _read(script)
    assert intent.get("fp8") is not True


def test_bash_and_source_from_the_top(tmp_path: Path) -> None:
    script = _repo(tmp_path, "source scripts/env.sh\nbash scripts/train.sh", {
        "scripts/env.sh": "export LR=1\n",
        "scripts/train.sh": f"#!/bin/bash\naccelerate launch {TRAIN}\n", TRAIN: FP8})
    intent, read = _read(script)
    assert os.path.realpath(tmp_path / "scripts/train.sh") in _files(read)
    assert intent["fp8"] is True


def test_ancestors_stop_at_the_outermost_root(tmp_path: Path) -> None:
    script = _repo(tmp_path, "true", {})
    with enforced([str(script)]):
        got = launchroot.ancestors(str(script))
    assert got[-1] == os.path.realpath(tmp_path)
    assert len(got) == DEEP.count("/") + 1
    assert launchroot.ancestors(str(script)) == []       # no boundary: nothing above


def test_hostile_targets_are_not_looked_up(tmp_path: Path) -> None:
    script = _repo(tmp_path, "true", {TRAIN: FP8})
    with enforced([str(script)]):
        for target in ("/etc/passwd", "$ROOT/train.py", "~/train.py", "`x`/t.py", "",
                       "../" * 40 + "etc/passwd", "x" * 5000 + ".py"):
            assert launchroot.find(target, str(script)) == launchroot.Found()


def test_fp8_option_the_script_does_not_declare_is_unknown(tmp_path: Path) -> None:
    # a train.py that parses --fp8_models with a parser of an installed package (not
    # DiffSynth's, which frameworks/diffsynth.py reads: tests/frameworks/test_diffsynth.py)
    train = ("import accelerate\nfrom mytools import add_general_config\n"
             "args = add_general_config(argparse.ArgumentParser()).parse_args()\n"
             "accelerator = accelerate.Accelerator()\nmodel = M(fp8_models=args.fp8_models)\n")
    script = _repo(tmp_path, f"accelerate launch {TRAIN} --fp8_models a,b", {TRAIN: train})
    intent, _ = _read(script)
    assert isinstance(intent["fp8"], Unknown)
    quiet = _repo(tmp_path / "q", f"accelerate launch {TRAIN}", {TRAIN: train})
    assert _read(quiet)[0]["fp8"] is False
    off = _repo(tmp_path / "off", f"accelerate launch {TRAIN} --no-fp8 --fp8_models none",
                {TRAIN: train})
    assert _read(off)[0]["fp8"] is False
