"""The files other tools run: the pre-commit hook (.pre-commit-hooks.yaml) and the composite
GitHub Action (action.yml). Their commands are parsed with fp8-doctor's own parser and run for
real on a fixture job (the Action's check step in bash, with ``fp8-doctor`` on PATH), so a
renamed flag or a broken script fails here, not in a user's CI."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hostenv import require_exec

from preflight.cli import build_parser, main
from preflight.jobs.formats import SCRIPT_EXT
from preflight.jobs.scan import SCAN_EXT

REPO = Path(__file__).resolve().parents[1]
JOB = "fixtures/configs/jobs/launch_accel_ds"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def _hooks() -> list[dict]:
    return yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def _action() -> dict:
    return yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))


def test_pre_commit_hook_is_a_static_check(capsys) -> None:
    (hook,) = _hooks()
    assert hook["id"] == "fp8-doctor" and hook["language"] == "python"
    assert hook["pass_filenames"] is False     # the job comes from args, not changed files
    files = re.compile(hook["files"])
    assert files.search("job/ds_config.json") and files.search("launch.sh")
    # every kind of file the job reader reads re-runs the hook (train.py's bf16=True included);
    # a file it never reads does not
    for ext in (*SCAN_EXT, *SCRIPT_EXT):
        assert files.search(f"job/x{ext}"), ext
    assert not files.search("README.md") and not files.search("train.py.orig")
    # redteam12: the reader matches extensions in any case, and reads files of any name (a
    # sourced common.env, an extensionless launcher): the hook runs at every commit
    assert files.search("job/Config.YAML") and files.search("RUN.SH")
    assert hook["always_run"] is True
    argv = shlex.split(hook["entry"])
    assert argv[:2] == ["fp8-doctor", "check"]
    args = build_parser().parse_args([*argv[1:], JOB])
    assert args.smoke is False and args.detail == "quiet"
    # What pre-commit runs with `args: [job/, --assume, pkg.accelerate=1.2.0]` (a CI runner
    # plans the versions; issue 24 item 2: its own CPU torch is no error): one line per finding,
    # then one summary line (issue 24 item 5), exit 1 on errors.
    code = main([*argv[1:], str(REPO / JOB), "--assume", "pkg.accelerate=1.2.0"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1 and out[-1].startswith("Summary: ")
    assert all(re.match(r"^(\S+:\d+: )?(error|warning|info) FP8D-", ln) for ln in out[:-1])


def test_action_pins_every_action_it_uses_to_a_commit() -> None:
    steps = _action()["runs"]["steps"]
    used = [s["uses"] for s in steps if "uses" in s]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in used)
    assert all(PINNED.match(u) for u in used), used
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    for u in used:   # each sha carries the version it is, for a reader and for Dependabot
        assert re.search(re.escape(u) + r"\s+# v\d+\.\d+\.\d+", text), u


def test_action_inputs_never_reach_a_script_unquoted() -> None:
    """``${{ inputs.x }}`` inside ``run:`` is pasted into the script (script injection);
    inputs go through ``env:`` instead. Every input used is declared."""
    action = _action()
    declared = set(action["inputs"])
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    assert set(re.findall(r"inputs\.([\w-]+)", text)) <= declared
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")
    assert action["runs"]["using"] == "composite"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_action_check_step_writes_relative_sarif_and_reports_the_exit_code(tmp_path) -> None:
    step = next(s for s in _action()["runs"]["steps"] if s.get("id") == "check")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    require_exec(bindir)
    shim = bindir / "fp8-doctor"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m preflight \"$@\"\n")
    shim.chmod(0o755)
    out_file = tmp_path / "github_output"
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(REPO), GITHUB_OUTPUT=str(out_file),
               FP8D_PATHS=JOB, FP8D_FAIL_ON="error", FP8D_SARIF=str(tmp_path / "r.sarif"),
               FP8D_ARGS="--assume gpu=H100 --assume pkg.accelerate=1.2.0")
    res = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "exit-code=1" in out_file.read_text()           # errors found: the last step fails
    run = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in run["results"] if r.get("locations")]
    assert locs and all(loc == {"uri": loc["uri"], "uriBaseId": "%SRCROOT%"} for loc in locs)
    assert all(loc["uri"].startswith(JOB + "/") for loc in locs)
    assert "FP8D-ACC-0001" in res.stdout                    # the -q lines for the job log


def _run_check_step(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    step = next(s for s in _action()["runs"]["steps"] if s.get("id") == "check")
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    require_exec(bindir)
    shim = bindir / "fp8-doctor"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m preflight \"$@\"\n")
    shim.chmod(0o755)
    out_file = tmp_path / "github_output"
    out_file.write_text("")
    full = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
                PYTHONPATH=str(REPO), GITHUB_OUTPUT=str(out_file), FP8D_PATHS=str(REPO / JOB),
                FP8D_FAIL_ON="error", FP8D_ARGS="", **env)
    res = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=full,
                         capture_output=True, text=True, timeout=300)
    return res, out_file.read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_action_writes_its_sarif_outside_the_workspace_by_default(tmp_path) -> None:
    # issue 21 item 3: the default fp8-doctor.sarif sat in the checked-out pull request
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    res, outputs = _run_check_step(tmp_path, FP8D_SARIF="", RUNNER_TEMP=str(runner_temp))
    assert res.returncode == 0, res.stderr
    assert f"sarif-file={runner_temp / 'fp8-doctor.sarif'}" in outputs
    assert json.loads((runner_temp / "fp8-doctor.sarif").read_text())["version"] == "2.1.0"
    assert _action()["runs"]["steps"][-2]["with"]["sarif_file"] == \
        "${{ steps.check.outputs.sarif-file }}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_action_never_writes_through_a_sarif_symlink_a_pull_request_ships(tmp_path) -> None:
    # issue 21 item 3: a PR shipping fp8-doctor.sarif as a link had the Action replace a dotfile
    dotfile = tmp_path / ".bashrc"
    dotfile.write_text("export PATH=$PATH\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "fp8-doctor.sarif").symlink_to(dotfile)
    res, outputs = _run_check_step(tmp_path, FP8D_SARIF=str(workspace / "fp8-doctor.sarif"))
    assert "exit-code=2" in outputs                 # the upload step is skipped on 2
    assert dotfile.read_text() == "export PATH=$PATH\n"
    assert "symbolic link" in res.stderr
