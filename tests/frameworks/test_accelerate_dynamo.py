"""accelerate's config loader lets a top-level ``dynamo_backend`` (the pre-``dynamo_config``
key) replace the whole ``dynamo_config`` (``{}`` for NO): commands/config/config_args.py
l.117-119, the same from v0.34.0 through v1.14.0. A YAML with both must be read as accelerate
reads it (acceptance audit of issue 24: the reader preferred ``dynamo_config``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api
from preflight.facts import Facts
from preflight.fixdiff import diff_output
from preflight.intent import derive
from preflight.jobs.read import read_paths

HEAD = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"


def _read(tmp_path: Path, text: str, launch: str | None = None) -> tuple[dict, dict]:
    (tmp_path / "acc.yaml").write_text(HEAD + text)
    paths = [str(tmp_path / "acc.yaml")]
    if launch is not None:
        (tmp_path / "run.sh").write_text(f"#!/bin/bash\naccelerate launch --config_file acc.yaml "
                                         f"{launch} train.py\n")
        paths.append(str(tmp_path / "run.sh"))
    read = read_paths(paths)
    values, prov = derive(Facts(read.facts, read.provenance))
    return read.facts, {"compile": values["intent.compile"],
                        "src": prov.get("intent.compile", "")}


@pytest.mark.parametrize(("top", "nested", "compiles"), [
    ("NO", "INDUCTOR", False), ("INDUCTOR", "NO", True), ("INDUCTOR", None, True),
    (None, "INDUCTOR", True), (None, "NO", False)])
def test_top_level_dynamo_backend_replaces_dynamo_config(tmp_path: Path, top: str | None,
                                                         nested: str | None,
                                                         compiles: bool) -> None:
    text = f"dynamo_backend: {top}\n" if top else ""
    if nested:
        text += f"dynamo_config:\n  dynamo_backend: {nested}\n  dynamo_mode: max-autotune\n"
    facts, got = _read(tmp_path, text)
    assert got["compile"] is compiles
    if top:                        # accelerate never reads what dynamo_config held
        assert not [n for n in facts if n.startswith("config.accelerate.dynamo_config.")]
        assert "acc.yaml:4" in got["src"]


def test_the_launch_line_still_wins_over_the_top_level_key(tmp_path: Path) -> None:
    _, got = _read(tmp_path, "dynamo_backend: 'NO'\n", launch="--dynamo_backend inductor")
    assert got["compile"] is True
    assert "run.sh" in got["src"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git for git apply")
def test_the_compile_off_edit_changes_the_key_accelerate_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FP8D-TE-0007 (compile off) on a YAML whose top-level key compiles while its dynamo_config
    says NO: the edit must turn off the key that wins, and the re-check is quiet."""
    (tmp_path / "acc.yaml").write_text(HEAD + "fp8_config:\n  backend: TE\n  fp8_format: HYBRID\n"
                                       "dynamo_backend: INDUCTOR\ndynamo_config:\n"
                                       "  dynamo_backend: 'NO'\n")
    monkeypatch.chdir(tmp_path)
    assume = {"gpu": "H100", "pkg.transformer-engine": "2.15.0", "pkg.accelerate": "1.10.0"}
    before = api.check(["acc.yaml"], assume=assume)
    hit = [f for f in before.findings if f.rule_id == "FP8D-TE-0007"]
    assert hit and str(hit[0].location).endswith("acc.yaml:7")
    out = diff_output(before, ["acc.yaml"], str(tmp_path), redact=False)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, (out.patch, proc.stderr.decode())
    after = api.check(["acc.yaml"], assume=assume)
    assert "FP8D-TE-0007" not in {f.rule_id for f in after.findings}
