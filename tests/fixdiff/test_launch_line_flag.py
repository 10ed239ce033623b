"""A launch-line flag for an ``accelerate launch`` line that passes none of accelerate's settings
yet (only ``--config_file``, or nothing): the edit goes right after the command words.

Found by session 38's newcomer run: ``check launch.sh acc.yaml ds.json --diff`` with
``accelerate launch --config_file acc.yaml train.py`` made no edit for FP8D-ACC-0003 ("no
accelerate file read that could take it"), while ``--num_processes 8`` on the same line gave one:
the flag was placed only beside a sibling flag, and ``--config_file`` is a pointer, not a fact.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api
from preflight.fixdiff import diff_output, shelledit
from preflight.fixdiff.common import EditError
from preflight.fixdiff.place import launch_commands
from preflight.frameworks import accelerate_launch

GIT = shutil.which("git")
ACC = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n"
       "  deepspeed_config_file: ds.json\nmixed_precision: fp8\nnum_processes: 8\n")
DS = '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}\n'
FILES = ["launch.sh", "acc.yaml", "ds.json"]
ASSUME = {"pkg.accelerate": "1.10.0", "pkg.deepspeed": "0.17.0"}


def test_the_launch_commands_are_the_frameworks_own() -> None:
    assert launch_commands("accelerate") == accelerate_launch.TRAINS
    assert launch_commands("no-such-kind") == ()


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
@pytest.mark.parametrize("line", [
    "accelerate launch --config_file acc.yaml train.py",
    "accelerate launch --config_file=acc.yaml train.py --lr 1e-5",
    "ACCELERATE_LOG_LEVEL=info /opt/venv/bin/accelerate launch --config_file acc.yaml train.py",
    "accelerate-launch --config_file acc.yaml train.py",
    "accelerate launch \\\n  --config_file acc.yaml \\\n  train.py",
])
def test_acc_0003_edit_lands_after_the_command(line: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "launch.sh").write_text(f"#!/bin/bash\n{line}\n")
    (tmp_path / "acc.yaml").write_text(ACC)
    (tmp_path / "ds.json").write_text(DS)
    monkeypatch.chdir(tmp_path)
    before = api.check(FILES, assume=ASSUME)
    assert "FP8D-ACC-0003" in {f.rule_id for f in before.findings}
    out = diff_output(before, FILES, str(tmp_path), redact=False)
    assert "+++ b/launch.sh" in out.patch and "+++ b/acc.yaml" in out.patch, out.notes
    subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run([GIT, "apply", "-"], cwd=tmp_path, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, (out.patch, proc.stderr.decode())
    launched = (tmp_path / "launch.sh").read_text().splitlines()[1]
    assert "--mixed_precision fp8" in launched
    after = api.check(FILES, assume=ASSUME)
    assert "FP8D-ACC-0003" not in {f.rule_id for f in after.findings}, out.patch


def test_a_line_that_does_not_run_the_command_is_refused() -> None:
    text = "#!/bin/bash\necho accelerate is not run here\n"
    with pytest.raises(EditError):
        shelledit.add_after_command(text, "mixed_precision", 2,
                                    launch_commands("accelerate"), "fp8")


def test_a_flag_already_passed_is_refused_and_false_adds_nothing() -> None:
    text = "accelerate launch --mixed_precision bf16 train.py\n"
    cmds = launch_commands("accelerate")
    with pytest.raises(EditError):
        shelledit.add_after_command(text, "mixed_precision", 1, cmds, "fp8")
    assert shelledit.add_after_command(text, "use_fsdp", 1, cmds, False) == text


def test_only_the_words_after_the_command_move() -> None:
    text = "x=1\nCUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file a.yaml t.py  # go\n"
    got = shelledit.add_after_command(text, "mixed_precision", 2,
                                      launch_commands("accelerate"), "fp8")
    assert got.splitlines()[1] == ("CUDA_VISIBLE_DEVICES=0,1 accelerate launch --mixed_precision "
                                   "fp8 --config_file a.yaml t.py  # go")
    assert got.splitlines()[0] == "x=1"
