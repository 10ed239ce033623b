"""A finding whose edits have nothing to change in the files read is listed, never dropped.

Acceptance audit of issue 24 item 3 (main eafd747): FP8D-TE-0006 (an error) with the E5M2 format
written in a script's ``TERecipeKwargs(fp8_format="E5M2")``: its edits only ``replace`` the
format where a config file or launch line writes it, so none applied, and ``--diff`` said
nothing at all about the error - neither an edit nor the "do these by hand" note every other
finding without an edit gets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import api
from preflight.fixdiff import build, diff_output

SCRIPT = """\
from accelerate import Accelerator
from accelerate.utils import TERecipeKwargs

accelerator = Accelerator(mixed_precision="fp8",
                          kwargs_handlers=[TERecipeKwargs(fp8_format="E5M2")])
"""
ASSUME = {"pkg.transformer-engine": "2.8.0", "pkg.accelerate": "1.11.0"}


def test_a_format_set_in_python_is_listed_by_hand(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    report = api.check(["train.py"], assume=ASSUME)
    assert "FP8D-TE-0006" in {f.rule_id for f in report.findings}
    out = diff_output(report, ["train.py"], str(tmp_path))
    assert out.patch == ""
    assert "FP8D-TE-0006" in out.notes
    listed = build(report.findings, report.facts, ["train.py"], str(tmp_path)).listed
    assert [why for rid, why in listed if rid == "FP8D-TE-0006"]


def test_an_edit_another_finding_already_makes_is_not_listed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two findings with the same edit: the second is covered by the first, not "by hand".
    (tmp_path / "accel.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: E5M2\n")
    monkeypatch.chdir(tmp_path)
    report = api.check(["accel.yaml"], assume=ASSUME)
    te6 = next(f for f in report.findings if f.rule_id == "FP8D-TE-0006")
    result = build([te6, te6], report.facts, ["accel.yaml"], str(tmp_path))
    assert len(result.applied) == 1
    assert not [why for rid, why in result.listed if rid == "FP8D-TE-0006"]


ACCEL_MXFP8 = """\
# the team's accelerate config
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: fp8
fp8_config:
  backend: TE
  fp8_format: HYBRID
  use_mxfp8_block_scaling: true
num_processes: 8
"""


@pytest.mark.parametrize(("rule_id", "gpu"), [("FP8D-HW-0004", "H100"), ("FP8D-HW-0005", "12.0")])
def test_the_accelerate_edit_of_the_mxfp8_gpu_rules_applies(
        rule_id: str, gpu: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # test_rule_edits.py round-trips each rule's first fixed case (Megatron here); this is the
    # accelerate half of the same edits, through real git apply.
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("needs git")
    (tmp_path / "accel.yaml").write_text(ACCEL_MXFP8)
    monkeypatch.chdir(tmp_path)
    assume = {**ASSUME, ("gpu" if gpu == "H100" else "gpu.cc"): gpu}
    before = api.check(["accel.yaml"], assume=assume)
    assert rule_id in {f.rule_id for f in before.findings}
    out = diff_output(before, ["accel.yaml"], str(tmp_path), redact=False)
    assert "+  use_mxfp8_block_scaling: false" in out.patch, out.notes
    subprocess.run([git, "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run([git, "apply", "-"], cwd=tmp_path, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    after = api.check(["accel.yaml"], assume=assume)
    assert rule_id not in {f.rule_id for f in after.findings}
    assert "# the team's accelerate config" in (tmp_path / "accel.yaml").read_text()
