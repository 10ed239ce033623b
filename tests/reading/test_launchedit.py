"""A command that edits, copies or reads a file is never the launch line (shell16, holdout23:
gpu-recipes' A4 launcher.sh l.83 @ 1f338bb4 ``sed -i ... scripts/performance/run_script.py``
was read as the Megatron-Bridge launch and the job was unread)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from preflight.reading import launch
from preflight.reading.launchedit import command_words, not_run, passive
from preflight.reading.shellexpand import launches
from preflight.reading.shellwords import split
from tests.cputime import cpu_seconds

PATTERN = re.compile(r"run_script\.py|train\.py")
EDITS = [
    "sed -i -e '/pretrain(config=recipe/i \\    recipe.x = 60' scripts/performance/run_script.py",
    "sed --in-place 's/a/b/' train.py",
    "perl -pi -e 's/bf16/fp8/' train.py",
    "ed -s train.py <<< $',s/a/b/g\\nw'",
    "ex -sc '%s/a/b/|x' train.py",
    "awk -i inplace '{print}' train.py",
    "gawk -i inplace '{print}' train.py",
    "cat > train.py",
    "tee train.py < src.py",
    "patch -p1 train.py fix.diff",
    "cp /src/train.py train.py",
    "mv train.py train.py.bak",
    "install -m 644 train.py /opt/x/train.py",
    "git apply --include train.py fix.patch",
    "git checkout -- train.py",
    "sudo sed -i s/a/b/ train.py",
    "LC_ALL=C sed -i s/a/b/ train.py",
    "cd /opt && sed -i s/a/b/ train.py",
    "chmod +x train.py",
]
RUNS = "torchrun --nproc_per_node 8 train.py --fp8"


@pytest.mark.parametrize("edit", EDITS)
def test_an_edit_before_the_launch_is_not_the_launch_line(edit: str) -> None:
    text = f"#!/bin/bash\n{edit}\n{RUNS}\n"
    hit = launch.find(PATTERN, text)
    assert hit is not None and text.count("\n", 0, hit.start()) + 1 == 3
    found = launches(split(text), lambda w: bool(PATTERN.search(w)))
    assert [f.entry.text for f in found] == ["train.py"]
    assert text.count("\n", 0, found[0].offset) + 1 == 3


@pytest.mark.parametrize("line", [
    RUNS,
    'CMD="torchrun --nproc_per_node 8 train.py"',
    'CMD="cd /opt; torchrun train.py"',
    "cd /opt && torchrun train.py",
    "cp ${SRC}/x.yaml . ; python ${ROOT}/train.py",
    "python train.py 2>&1 | tee log.txt",
    "time python train.py",
    "nohup python train.py > log 2>&1 &",
    "command python train.py",
    "env A=1 python train.py",
    "srun bash -c 'cd x && python train.py'",
])
def test_a_command_that_runs_the_script_is_still_the_launch(line: str) -> None:
    text = f"#!/bin/bash\n{line}\n"
    assert launch.find(PATTERN, text) is not None
    assert not not_run(text, text.index("train.py"))


def test_the_words_of_the_command_holding_a_position() -> None:
    text = 'A=1; CMD="cd x; sed -i s/a/b/ train.py" && echo ok\n'
    assert command_words(text, text.index("train.py")) == ["sed", "-i", "s/a/b/"]
    assert command_words("x=$(cat train.py)", 8) == ["cat"]
    assert passive(["command", "-v", "python"]) and not passive(["command", "python"])
    assert not passive([]) and not passive(["A=1"])


def test_a_huge_line_is_judged_in_bounded_time(tmp_path: Path) -> None:
    text = "sed -i " + "x " * 500_000 + "train.py\n" + ("python train.py " * 20_000) + "\n"
    before = cpu_seconds()
    hit = launch.find(PATTERN, text)
    scripts = launch.python_scripts(text, {})
    assert cpu_seconds() - before < 20     # ~0.3 s quiet
    # the sed line is past the window: not judged (read as before), never a traceback
    assert hit is not None and scripts
