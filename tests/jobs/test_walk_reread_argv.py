"""A script the user names before the launch script that runs it (jobs/walk.py ``_rerun``):
read first "by hand" with its argparse defaults, it is read again with the argv the launch line
brings, so the order of the user's paths never changes the answer (session 44: ``check
train.py run.sh`` lost run.sh's ``--no_fp8`` and answered from the defaults)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.jobs.test_pyjob_byhand import TRAIN, _job, _notes, _read


@pytest.mark.parametrize("default, launch, fp8", [
    (True, "torchrun --nproc_per_node 8 train.py --no_fp8\n", False),
    (False, "torchrun --nproc_per_node 8 train.py --use_fp8\n", True),
    (True, "python train.py --batch_size 4 --no_fp8\n", False),
    (True, "torchrun train.py\n", True),                        # quiet: the launch gives nothing
    (False, "python3 train.py\n", False),
])
def test_every_order_of_the_paths_gives_the_launch_lines_arguments(
        tmp_path: Path, default: bool, launch: str, fp8: bool) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=default), "run.sh": launch})
    for order in itertools.permutations([root / "train.py", root / "run.sh"]):
        read, values = _read(*order)
        assert values["intent.fp8"] is fp8, order
        assert not _notes(read), order            # the by-hand note went with its read
        assert [f for f, _ in read.files].count(str(root / "train.py")) == 1


def test_the_script_named_alone_keeps_its_defaults_and_note(tmp_path: Path) -> None:
    root = _job(tmp_path, {"train.py": TRAIN.format(default=True),
                           "other.sh": "echo torchrun train.py --no_fp8\n"})  # no launch
    read, values = _read(root / "train.py", root / "other.sh")
    assert values["intent.fp8"] is True
    assert len(_notes(read)) == 1


def test_launch_scripts_running_each_other_read_the_script_a_bounded_number_of_times(
        tmp_path: Path) -> None:
    # hostile: two launch scripts that call each other and both run train.py; named last
    root = _job(tmp_path, {
        "train.py": TRAIN.format(default=True),
        "a.sh": "bash b.sh\ntorchrun train.py --no_fp8\n",
        "b.sh": "bash a.sh\ntorchrun train.py --no_fp8\n"})
    for order in itertools.permutations([root / "train.py", root / "a.sh", root / "b.sh"]):
        read, values = _read(*order)
        assert values["intent.fp8"] is False, order
        assert [f for f, _ in read.files].count(str(root / "train.py")) == 1, order
