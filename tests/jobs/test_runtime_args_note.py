"""A launch script run by hand (no script of the job runs it) whose training command passes
``"$@"``: read as it is, with an info note that what the user adds there is not checked
(FP8D-CFG-RUNTIME-ARGS, issue 22). Reduction of volcengine/verl's recipe scripts, which end
their ``python3 -m verl.trainer.main_ppo`` line with ``"$@"`` (examples/grpo_trainer/
run_qwen2-7b_math_megatron.sh @ v0.5.0 ends in ``$@``), and hostile variants: "$@" in an echo,
in a function never called, bound by a caller, quoted as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.jobs.read import read_paths
from preflight.jobs.scriptargs import runtime_args

VERL = '''\
#!/bin/bash
set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    actor_rollout_ref.rollout.name=vllm \\
    trainer.n_gpus_per_node=8 "$@"
'''


def _notes(path: Path) -> list[tuple[int | None, str]]:
    read = read_paths([str(path)])
    return [(p.line, p.message) for p in read.problems if p.code == "runtime_args"]


def test_run_by_hand_says_what_is_not_checked(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(VERL)
    notes = _notes(run)
    assert len(notes) == 1
    line, message = notes[0]
    assert line == 3
    assert "python3 -m verl.trainer.main_ppo" in message and "not checked" in message
    read = read_paths([str(run)])
    assert any(p.code == "runtime_args" and p.level == "info" for p in read.problems)
    assert read.facts        # still read as it is


def test_a_caller_in_the_job_binds_them_no_note(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(VERL)
    outer = tmp_path / "outer.sh"
    outer.write_text("#!/bin/bash\nbash run.sh trainer.total_epochs=1\n")
    assert _notes(outer) == []


@pytest.mark.parametrize("text", [
    "#!/bin/bash\necho \"usage: $0 python3 train.py $@\"\npython3 train.py --bf16\n",
    "#!/bin/bash\nf() { python3 train.py \"$@\"; }\npython3 train.py --bf16\n",
    "#!/bin/bash\npython3 train.py --bf16 '$@'\n",
    "#!/bin/bash\npython3 train.py --bf16\n",
    "#!/bin/bash\nif [ 1 = 0 ]; then python3 train.py \"$@\"; fi\npython3 train.py --bf16\n",
])
def test_no_note_where_no_training_command_takes_them(text: str) -> None:
    assert runtime_args(text) is None


@pytest.mark.parametrize("text, line", [
    ("#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --bf16 \"$@\"\n", 2),
    ("#!/bin/bash\nARGS=\"$@\"\n\npython3 train.py $ARGS\n", 4),     # through a variable
    ("#!/bin/bash\nf() { python3 train.py \"$@\"; }\nf\n", None),
    ("#!/bin/bash\naccelerate launch train.py \"$*\"\n", 2),
])
def test_forwarded_forms(text: str, line: int | None) -> None:
    got = runtime_args(text)
    assert (got[0] if got else None) == line


def test_named_with_its_caller_no_note(tmp_path: Path) -> None:
    # both named: the caller binds the arguments (jobs/walk.py drops the first read's note)
    run = tmp_path / "run.sh"
    run.write_text(VERL)
    outer = tmp_path / "outer.sh"
    outer.write_text("#!/bin/bash\nbash run.sh trainer.total_epochs=1\n")
    for paths in ([run, outer], [outer, run]):
        read = read_paths([str(p) for p in paths])
        assert not [p for p in read.problems if p.code == "runtime_args"]
