"""A launch script with a decoy training command before the real one (redteam2, issue 21): the
override readers (verl, NeMo-RL, Megatron-Bridge, NeMo-Automodel, torchtitan, SkyRL) took the
first command that runs the entry point for the job, so a BF16 decoy in a function that is never
called, behind ``if false``, ``true ||``, a ``case`` arm that does not match or ``while false``
hid the FP8 command after it: FP8 rollout "no", every FP8 rule quiet, exit 0. Every training
command is now read; a setting they give differently is Unknown naming their lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

REAL = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.quantization=fp8 "
        "actor_rollout_ref.rollout.name=vllm")
DECOY = "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm"
DECOYS = {
    "function never called": f"never() {{\n  {DECOY}\n}}\n",
    "if false": f"if false; then\n  {DECOY}\nfi\n",
    "true ||": f"true || {DECOY}\n",
    "dry run &&": f'[ -n "$DRY_RUN" ] && {DECOY}\n',
    "case arm": f"case x in y) {DECOY} ;; esac\n",
    "while false": f"while false; do {DECOY}; done\n",
}


def _values(path: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


@pytest.mark.parametrize("decoy", sorted(DECOYS))
def test_a_decoy_before_the_fp8_command_does_not_make_it_no(tmp_path: Path, decoy: str) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -x\n" + DECOYS[decoy] + REAL + "\n")
    read, values = _values(script)
    rollout = values["intent.rollout.fp8"]
    if decoy in ("case arm", "if false", "while false", "function never called"):
        # `case x in y)` is decided as bash matches it (reading/shelltests.py), `if false` too
        # (megflags), `while false` as well (reading/shellloops.py, redfix), a function never
        # called (reading/shellreach.py, shell18): the decoy never runs, so the FP8 command is
        # the job's one
        assert rollout is True
        return
    assert isinstance(rollout, Unknown), rollout
    assert "2 times" in rollout.reason and "rollout.quantization" in rollout.reason
    assert read.provenance["config.verl.actor_rollout_ref.rollout.quantization"].path == \
        str(script)


def test_one_training_command_is_read_as_before(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_generation data.n=1\n{REAL}\n")
    _, values = _values(script)
    assert values["intent.rollout.fp8"] is True       # generation is not training: no conflict


def test_commands_that_agree_stay_decided(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\nfor seed in 1 2; do\n  {REAL} trainer.seed=$seed\ndone\n"
                      f"{REAL} trainer.seed=3\n")
    read, values = _values(script)
    assert values["intent.rollout.fp8"] is True
    assert isinstance(read.facts["config.verl.trainer.seed"], Unknown)   # they differ there


@pytest.mark.parametrize("call, decided", [("", True), ('[ -n "$X" ] && maybe\n', False)])
def test_the_same_holds_for_torchtitan_flags(tmp_path: Path, call: str, decided: bool) -> None:
    # a decoy in a function never called is none (shell18); one that may be called leaves FP8
    # Unknown here (Megatron-style launches compare their flags: reading/overridelaunch.py)
    (tmp_path / "a.toml").write_text('[model]\nname = "llama3"\n')
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nmaybe() {\n  torchrun -m torchtitan.train "
                      "--job.config_file a.toml\n}\n" + call + "torchrun -m torchtitan.train "
                      "--job.config_file a.toml --model.converters float8\n")
    _, values = _values(script)
    assert values["intent.fp8"] is True if decided else isinstance(values["intent.fp8"], Unknown)
