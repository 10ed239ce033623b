"""Training commands of one script that differ in FP8: the FP8 one is the job (the lead's
policy, session 43; reading/launchpick.py ``_fp8_runs``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

BF16 = "accelerate launch --mixed_precision bf16 --num_processes 8 train.py\n"
FP8 = "accelerate launch --mixed_precision fp8 --num_processes 4 train.py\n"


def _read(tmp_path: Path, body: str) -> tuple[dict[str, object], dict[str, str]]:
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + body)
    read = read_paths([str(tmp_path / "run.sh")])
    return dict(read.facts), dict(read.provenance)


def test_the_fp8_command_among_bf16_ones_gives_the_settings(tmp_path: Path) -> None:
    facts, prov = _read(tmp_path, BF16 + FP8 + BF16)
    assert facts["config.accelerate.mixed_precision"] == "fp8"
    assert facts["config.accelerate.num_processes"] == 4
    assert "1 of 3" in prov["config.accelerate.mixed_precision"]
    assert "line 3" in prov["config.accelerate.mixed_precision"]


def test_quiet_all_bf16_commands_differ_as_before(tmp_path: Path) -> None:
    facts, _ = _read(tmp_path, BF16 + BF16.replace("8", "2"))
    assert facts["config.accelerate.mixed_precision"] == "bf16"
    assert isinstance(facts["config.accelerate.num_processes"], Unknown)


def test_a_dead_fp8_command_is_no_launch(tmp_path: Path) -> None:
    facts, _ = _read(tmp_path, BF16 + "if false; then\n" + FP8 + "fi\n" + BF16)
    assert facts["config.accelerate.mixed_precision"] == "bf16"


def test_an_undecided_precision_keeps_fp8_unknown(tmp_path: Path) -> None:
    facts, _ = _read(tmp_path, BF16 + "accelerate launch --mixed_precision $MP train.py\n")
    assert isinstance(facts["config.accelerate.mixed_precision"], Unknown)


def test_two_fp8_commands_that_differ_leave_that_setting_unknown(tmp_path: Path) -> None:
    facts, prov = _read(tmp_path, BF16 + FP8 + FP8.replace("4", "2"))
    assert facts["config.accelerate.mixed_precision"] == "fp8"
    assert isinstance(facts["config.accelerate.num_processes"], Unknown)
    assert "2 of 3" in prov["config.accelerate.mixed_precision"]


@pytest.mark.parametrize("body", [
    f"fp8() {{\n  {FP8}}}\n{BF16}",                     # a function never called
    f"{BF16}exit 0\n{FP8}",                             # after the script's exit
    f"{BF16}cat > notes.md <<'EOF'\n{FP8}EOF\n",        # a here-document nothing runs
    f"if false; then\n{FP8}fi\n{BF16}",
])
def test_an_fp8_command_bash_never_runs_asks_nothing(tmp_path: Path, body: str) -> None:
    # redteam11 (prime-rl) against session 43's policy: a confident FP8 "yes" from a launch in
    # a function never called (reading/shellexpand.py _reached drops it first)
    facts, _ = _read(tmp_path, body)
    assert facts["config.accelerate.mixed_precision"] == "bf16"


def test_an_fp8_command_in_a_function_that_may_be_called_asks(tmp_path: Path) -> None:
    facts, prov = _read(tmp_path, f'fp8() {{\n  {FP8}}}\n{BF16}[ -n "$X" ] && fp8\n')
    assert facts["config.accelerate.mixed_precision"] == "fp8"
    assert "1 of 2" in prov["config.accelerate.mixed_precision"]
