"""The CLI contract of DESIGN.md: exit codes, stdout carries only the report, snapshot replay.

These run the real pipeline (real probes, real config readers, the bundled rule base) through
``preflight.cli.main`` in-process, and through a real child process where stdout/stderr
separation matters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from preflight import cli
from preflight.examples import example_paths

REPO = Path(__file__).resolve().parents[2]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    """The real command line in a child process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "preflight", *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_example_job_exits_1_and_stdout_is_pure_json() -> None:
    proc = run("check", "--example", "--no-smoke", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)  # nothing but the report on stdout
    assert {"schema_version", "tool", "facts", "findings", "smoke", "summary",
            "exit_code"} <= set(doc)
    assert doc["exit_code"] == 1
    assert doc["summary"]["error"] >= 1
    assert proc.stderr == ""   # into a pipe: no progress at all (issue 24 item 5)


def test_fail_on_never_exits_0_with_the_same_findings(capsys) -> None:
    code = cli.main(["check", "--example", "--no-smoke", "--format", "json",
                     "--fail-on", "never"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["summary"]["error"] >= 1


def test_healthy_plan_exits_0(tmp_path: Path, capsys) -> None:
    # No config and no FP8 asked for: nothing can be an error on this machine.
    code = cli.main(["check", "--no-smoke", "--format", "json", "--fail-on", "error"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["error"] == 0, doc["findings"]
    assert code == 0


@pytest.mark.parametrize("argv, message", [
    (["check", "/no/such/file.yaml"], "no such file or folder: /no/such/file.yaml"),
    (["check", "--assume", "gpu"], "--assume expects KEY=VALUE"),
    (["check", "--assume", "gpu=NoSuchGPU9000"], "NoSuchGPU9000"),
    (["check", "--snapshot", "/no/such/snap.json"], "no such snapshot file"),
])
def test_usage_errors_exit_2_with_one_line(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--no-smoke"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_bad_flag_exits_2() -> None:
    proc = run("check", "--no-such-flag")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_unparseable_config_is_an_error_finding_with_file_and_line(tmp_path: Path,
                                                                    capsys) -> None:
    bad = tmp_path / "accelerate.yaml"
    # (a duplicate key is no longer unparseable: PyYAML keeps the last one, and so do we)
    bad.write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: fp8\nnum_processes: 8: 2\n")
    code = cli.main(["check", str(bad), "--no-smoke", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    unreadable = [f for f in doc["findings"] if f["id"] == "FP8D-CFG-UNREADABLE"]
    assert code == 1
    assert unreadable and unreadable[0]["location"]["line"] == 3
    assert "invalid YAML" in unreadable[0]["message"]
    assert bad.read_text().count("num_processes: 8: 2") == 1  # the user's file is untouched


def test_internal_error_exits_3_without_traceback(monkeypatch, capsys) -> None:
    import preflight.api

    def explode(*_a, **_k):  # a fake of our own pipeline, standing in for a bug in it
        raise RuntimeError("boom")

    monkeypatch.setattr(preflight.api, "run_check", explode)
    monkeypatch.delenv("FP8_DOCTOR_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--no-smoke"])
    assert exc.value.code == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_snapshot_replay_gives_the_same_findings(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "snap.json"
    assert cli.main(["snapshot", *example_paths(), "--assume", "gpu=H100",
                     "--assume", "pkg.accelerate=1.2.1", "-o", str(snap)]) == 0
    capsys.readouterr()
    live_code = cli.main(["check", *example_paths(), "--assume", "gpu=H100", "--assume",
                          "pkg.accelerate=1.2.1", "--no-smoke", "--format", "json"])
    live = json.loads(capsys.readouterr().out)
    replay_code = cli.main(["check", "--snapshot", str(snap), "--no-smoke", "--format", "json"])
    replay = json.loads(capsys.readouterr().out)
    ids = lambda doc: sorted(f["id"] for f in doc["findings"])  # noqa: E731
    assert ids(live) == ids(replay) and ids(live)
    assert live_code == replay_code == 1
    assert sorted(u["id"] for u in live["undetermined"]) == \
        sorted(u["id"] for u in replay["undetermined"])


def test_snapshot_is_versioned_json_with_provenance(capsys) -> None:
    assert cli.main(["snapshot", *example_paths()]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"].startswith("1.")
    assert doc["facts"]["intent.fp8"] is True
    assert doc["provenance"]["config.accelerate.mixed_precision"].endswith(
        "accelerate_fp8_deepspeed.yaml:17")


def test_help_lists_every_command() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for command in ("check", "snapshot", "report", "smoke", "rules"):
        assert command in proc.stdout


def test_no_command_is_a_usage_error() -> None:
    assert run().returncode == 2


def test_report_accepts_no_smoke_like_check(tmp_path: Path, capsys) -> None:
    """One flag set for `check` and `report`: --no-smoke (report's default) is not a usage error."""
    target = tmp_path / "report.md"
    assert cli.main(["report", "--no-smoke", *example_paths(), "-o", str(target)]) == 0
    assert "Status: skipped: --no-smoke" in target.read_text()
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--smoke", "--no-smoke"])
    assert exc.value.code == 2
