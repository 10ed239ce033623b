"""A rule's ``fix.edits`` may name keys of several frameworks (FP8D-TAO-0011: accelerate's
``distributed_type`` / ``fsdp_version`` and torchtitan's data-parallel degrees). A key to add for
a framework the job has no file of is for other jobs: it must not hold back the edits that fit
this one (issue 24 item 3; before, a torchtitan job's DDP -> FSDP2 edit was "left out too (they
belong together)" because no accelerate file could take ``fsdp_version``), and where nothing
else fits it is still listed, never dropped."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api
from preflight.findings import EditSpec
from preflight.fixdiff import build, diff_output

GIT = shutil.which("git")
ASSUME = {"gpu": "H100", "pkg.torchao": "0.13.0", "pkg.torch": "2.8.0+cu128"}
TOML = """[model]
name = "llama3"
flavor = "8B"
converters = ["float8"]

[training]
local_batch_size = 1
seq_len = 8192

[compile]
enable = true

[parallelism]
data_parallel_replicate_degree = 8  # DDP over 8 GPUs
data_parallel_shard_degree = 1
"""


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
def test_a_torchtitan_ddp_job_gets_its_fsdp2_edit(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.toml").write_text(TOML)
    monkeypatch.chdir(tmp_path)
    before = api.check(["train.toml"], assume=ASSUME)
    assert "FP8D-TAO-0011" in {f.rule_id for f in before.findings}
    out = diff_output(before, ["train.toml"], str(tmp_path), redact=False)
    assert "data_parallel_shard_degree = -1" in out.patch, out.notes
    assert "config.accelerate" not in out.notes
    subprocess.run([GIT, "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run([GIT, "apply", "-"], cwd=tmp_path, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    after = api.check(["train.toml"], assume=ASSUME)
    assert "FP8D-TAO-0011" not in {f.rule_id for f in after.findings}


def test_a_key_for_an_absent_framework_is_still_listed_when_nothing_else_fits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same finding with only the accelerate half of its edits: nothing fits this job, so
    # the finding is listed with the reason, never dropped.
    (tmp_path / "train.toml").write_text(TOML)
    monkeypatch.chdir(tmp_path)
    report = api.check(["train.toml"], assume=ASSUME)
    finding = next(f for f in report.findings if f.rule_id == "FP8D-TAO-0011")
    only = dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, edits=(
        EditSpec("config.accelerate.fsdp_config.fsdp_version", "set", 2),)))
    result = build([only], report.facts, [str(tmp_path)], str(tmp_path))
    assert not result.placed_in
    assert [rid for rid, _ in result.listed] == ["FP8D-TAO-0011"]
    assert "no accelerate file" in result.listed[0][1]
