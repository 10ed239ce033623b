"""Checkpoint folders the job marks FP8 (frameworks/ckptcast.py): the source of a cast from FP8
the job runs, and its copies. The script is radixark/miles scripts/run_deepseek.py at
31f1ca961a94cb860cec3b2dea34ec332bfa8f76 as the agreement benchmark keeps it (holdout17):
``U.fp8_cast_bf16(path_src=f"{model_dir}/{model_name}", ...)`` (l.54), ``U.rsync_simple`` of
that folder to ``{model_local_dir}/{model_name}`` (l.102, inside a function handed on as
``partial(_prepare_ray_dependent, args)``), and ``--hf-checkpoint
{model_local_dir}/{model_name}`` for the rollout (l.111)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_SCRIPT = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
           "holdout17-miles-py-deepseek-v3-native-fp8-rollout-bf16-train-no-tis-gb200" /
           "files" / "scripts" / "run_deepseek.py").read_text()
WEIGHTS = "config.slime.hf_checkpoint_weights"


def _read(tmp_path: Path, script: str) -> tuple[dict[str, Any], Any]:
    target = tmp_path / "scripts" / "run_deepseek.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script)
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython scripts/run_deepseek.py train "
                                     "--num-nodes 16\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts}, read


def test_the_rsync_copy_of_the_cast_source_is_fp8(tmp_path: Path) -> None:
    got, read = _read(tmp_path, _SCRIPT)
    assert got["config.slime.hf_checkpoint"] == "/root/local_data/DeepSeek-V3"
    assert got[WEIGHTS] is True and got["intent.rollout.fp8"] is True
    assert read.provenance[WEIGHTS].line == 102     # the copy of the folder l.54 casts


def test_the_cast_destination_is_not_marked(tmp_path: Path) -> None:
    script = _SCRIPT.replace('f"--hf-checkpoint {args.model_local_dir}/{args.model_name} "',
                             'f"--hf-checkpoint {args.model_dir}/{args.model_name}-bf16 "')
    assert script != _SCRIPT
    got, _ = _read(tmp_path, script)
    assert got["intent.rollout.fp8"] is False        # its name says bf16; no cast marks it


def test_no_copy_no_mark(tmp_path: Path) -> None:
    script = _SCRIPT.replace('path_dst=f"{args.model_local_dir}/{args.model_name}",',
                             'path_dst=f"{args.model_local_dir}/other",')
    assert script != _SCRIPT
    got, _ = _read(tmp_path, script)
    assert isinstance(got[WEIGHTS], Unknown)
    assert isinstance(got["intent.rollout.fp8"], Unknown)


def test_a_source_computed_at_run_time_marks_nothing(tmp_path: Path) -> None:
    script = _SCRIPT.replace('path_src=f"{args.model_dir}/{args.model_name}",\n        path_dst',
                             'path_src=os.environ["SRC"],\n        path_dst')
    assert script != _SCRIPT
    got, _ = _read(tmp_path, "import os\n" + script)
    assert isinstance(got[WEIGHTS], Unknown)


def test_many_casts_are_bounded(tmp_path: Path) -> None:
    many = "".join(f'    U.fp8_cast_bf16(path_src="/m/{n}", path_dst="/m/{n}-bf16")\n'
                   for n in range(2000))
    script = _SCRIPT.replace("def _prepare_bf16_ckpt(args: ScriptArgs):\n",
                             "def _prepare_bf16_ckpt(args: ScriptArgs):\n" + many)
    got, _ = _read(tmp_path, script)
    assert "intent.rollout.fp8" in got      # read, no traceback
