"""A run of a script the launch script never makes is no run (jobs/scriptcalls.py, by
reading/shellreach.py): ``f() { PR=fp8 bash train.sh; }`` never called beside ``bash
train.sh`` is one BF16 run, not two that differ (session 43's multi-launch policy read such a
pair FP8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

TRAIN = """#!/bin/bash
PR=${PR:-bf16}
ARGS="--bf16 --seq-length 4096"
if [ "$PR" = fp8 ]; then ARGS="$ARGS --fp8-format e4m3 --fp8-recipe blockwise"; fi
torchrun pretrain_gpt.py $ARGS
"""
FP8 = "PR=fp8 bash ./train.sh"


def _fp8(tmp_path: Path, runs: str) -> object:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.sh").write_text(TRAIN)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + runs)
    read = read_paths([str(tmp_path / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("runs", [
    f"fp8() {{\n  {FP8}\n}}\nbash ./train.sh\n",                  # a function never called
    f"bash ./train.sh\nexit 0\n{FP8}\n",                          # after exit
    f"bash ./train.sh\nif false; then {FP8}; fi\n",               # a branch that never runs
    f"bash ./train.sh\ncat > n.txt <<EOF\n{FP8}\nEOF\n",          # a here-document's text
])
def test_a_run_never_made_is_no_run(tmp_path: Path, runs: str) -> None:
    assert _fp8(tmp_path, runs) is False


def test_a_run_made_in_a_function_called_is_read(tmp_path: Path) -> None:
    assert _fp8(tmp_path, f"fp8() {{\n  {FP8}\n}}\nfp8\n") is True


def test_a_function_named_at_run_time_may_be_called(tmp_path: Path) -> None:
    # `"$@"` may name it: the run may be made (never dropped)
    assert _fp8(tmp_path, f'fp8() {{\n  {FP8}\n}}\nbash ./train.sh\n"$@"\n') is not False


def test_an_unknown_run_is_not_dropped(tmp_path: Path) -> None:
    got = _fp8(tmp_path, 'bash ./train.sh\nif [ -n "$X" ]; then exit; fi\n'
                         'PR=$MODE bash ./train.sh\n')
    assert isinstance(got, Unknown)
