"""Launches bash never runs are no launches (reading/shellexpand.py ``_reached``, by
reading/shellreach.py): a command in a function the script never calls, after its ``exit`` /
``exec``, in an ``if false`` branch or a here-document nothing runs. Session 43: the
multi-launch policy (a launch asking FP8 among BF16 ones makes the job FP8) counted redteam11's
never-called ``fp8() { uv run rl ... mxfp8; }`` as a launch: a confident FP8 "yes"."""

from __future__ import annotations

import pytest

from preflight.reading.shelldir import RUNS
from preflight.reading.shellexpand import launch_args, launches
from preflight.reading.shellwords import split

FP8 = "torchrun train.py --fp8"
BF16 = "torchrun train.py --bf16"


def _lines(text: str, outer: dict[str, str] | None = None) -> list[int]:
    found = launches(split(text), lambda w: w == "train.py", outer, limit=64)
    return [text.count("\n", 0, lr.offset) + 1 for lr in found]


NEVER = {
    "a function never called": f"fp8() {{\n  {FP8}\n}}\n{BF16}\n",
    "a function keyword never called": f"function fp8 {{\n  {FP8}\n}}\n{BF16}\n",
    "after exit": f"{BF16}\nexit 0\n{FP8}\n",
    "after exec": f"exec {BF16}\n{FP8}\n",
    "if false": f"if false; then\n  {FP8}\nfi\n{BF16}\n",
    "a here-document nothing runs": f"cat > notes.txt <<'EOF'\n{FP8}\nEOF\n{BF16}\n",
    "a here-document to :": f": <<'DOC'\n{FP8}\nDOC\n{BF16}\n",
    "called only after exit": f"fp8() {{\n  {FP8}\n}}\n{BF16}\nexit\nfp8\n",
}


@pytest.mark.parametrize("case", sorted(NEVER))
def test_a_launch_bash_never_runs_is_dropped(case: str) -> None:
    text = NEVER[case]
    got = _lines(text)
    assert len(got) == 1
    assert "--bf16" in text.splitlines()[got[0] - 1]


def test_the_first_launch_read_is_the_one_that_runs() -> None:
    # (overridelaunch reads the first launch: the never-called one was the job)
    launch = launch_args(split(NEVER["a function never called"]), lambda w: w == "train.py")
    assert launch is not None and [a.text for a in launch.args] == ["--bf16"]


MAY = {
    "a function called": f"fp8() {{\n  {FP8}\n}}\n{BF16}\nfp8\n",
    "a function called in an undecided branch":
        f'fp8() {{\n  {FP8}\n}}\n{BF16}\nif [ -n "$X" ]; then fp8; fi\n',
    "an exit in an undecided branch": f'{BF16}\nif [ -n "$X" ]; then exit 0; fi\n{FP8}\n',
    "an exit in a subshell": f"{BF16}\n(exit 0)\n{FP8}\n",
    # `mkdir d || {\n echo e\n exit 1\n}` (Megatron-MoE-ModelZoo sbatch_benchmarking.sh):
    # the exit runs only when mkdir fails
    "an exit in a || group": f"{BF16}\nmkdir -p d || {{\n  echo e\n  exit 1\n}}\n{FP8}\n",
    "an exit in a one-line || group": f"{BF16}\nmkdir d || {{ echo e; exit 1; }}\n{FP8}\n",
    "an exit in a && group": f"{BF16}\n[ -n \"$X\" ] && {{\n  exit 0\n}}\n{FP8}\n",
    "an exit after ||": f"{BF16}\ncd d || exit 1\n{FP8}\n",
    "exec that only redirects": f"{BF16}\nexec > >(tee -a log) 2>&1\n{FP8}\n",
    "a function named by \"$@\"": f'fp8() {{\n  {FP8}\n}}\n{BF16}\n"$@"\n',
    "a function named by a variable": f"fp8() {{\n  {FP8}\n}}\n{BF16}\n$MODE\n",
    "a function run by a trap": f"fp8() {{\n  {FP8}\n}}\ntrap fp8 EXIT\n{BF16}\n",
    "a function named in a string": f'fp8() {{\n  {FP8}\n}}\nbash -c "fp8"\n{BF16}\n',
    "a here-document bash runs": f"{BF16}\nbash <<'EOF'\n{FP8}\nEOF\n",
}


@pytest.mark.parametrize("case", sorted(MAY))
def test_a_launch_that_may_run_is_kept(case: str) -> None:
    assert len(_lines(MAY[case])) == 2


def test_a_sourced_scripts_functions_are_kept() -> None:
    # the script that sources it may call them (`source lib.sh; fp8`)
    assert len(_lines(NEVER["a function never called"], {RUNS: "/job/run.sh"})) == 2


def test_more_functions_than_are_looked_at_are_all_kept() -> None:
    text = "".join(f"f{i}() {{\n  {FP8}\n}}\n" for i in range(300)) + BF16 + "\n"
    assert len(_lines(text)) == 64          # every one may run: none dropped (the limit)
