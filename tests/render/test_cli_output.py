"""The CLI's output contract end to end: stdout carries only the report, progress goes to stderr,
exit codes follow ``--fail-on`` (DESIGN.md), and every format is redacted unless ``--no-redact``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.cli import main

TOKEN = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456"
RULE = """\
schema_version: "1.0"
id: FP8D-HW-9001
title: Planted warning for CLI tests
severity: warning
confidence: inferred
when:
  all:
    - {fact: gpu.count, op: eq, value: 8}
message: "{gpu.count} GPUs seen"
fix: {text: "Nothing to do.", commands: []}
references:
  - {type: WEB, url: "https://example.org/x"}
tests:
  - {facts: {gpu.count: 8}, expect: fire}
  - {facts: {gpu.count: 1}, expect: quiet}
"""


@pytest.fixture
def job(tmp_path: Path) -> tuple[str, str]:
    """A snapshot (8 GPUs, a leaked token) and a rule folder with one warning rule."""
    rules = tmp_path / "rules" / "hw"
    rules.mkdir(parents=True)
    (rules / "FP8D-HW-9001.yaml").write_text(RULE)
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"schema_version": "1.0",
                                "facts": {"gpu.count": 8, "env.HF_TOKEN": TOKEN,
                                          "env.NCCL_DEBUG": f"INFO {TOKEN}"},
                                "provenance": {}}))
    return str(snap), str(tmp_path / "rules")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fail_on,code", [("error", 0), ("warning", 1), ("info", 1),
                                          ("never", 0)])
def test_exit_code_follows_fail_on(capsys, job, fail_on: str, code: int) -> None:
    snap, rules = job
    got, out, _ = run(capsys, "check", "--snapshot", snap, "--rules", rules, "--no-smoke",
                      "--format", "json", "--fail-on", fail_on)
    assert got == code
    doc = json.loads(out)
    assert doc["exit_code"] == code and doc["summary"]["warning"] == 1


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_stdout_is_only_the_report_and_redacted(capsys, job, fmt: str) -> None:
    snap, rules = job
    _, out, err = run(capsys, "check", "--snapshot", snap, "--rules", rules, "--no-smoke",
                      "--format", fmt)
    assert TOKEN not in out and TOKEN not in err
    # Not a terminal: no progress at all (issue 24 item 5), on stdout or stderr.
    assert "replaying snapshot" not in err and "replaying snapshot" not in out
    if fmt in ("json", "sarif"):
        json.loads(out)  # nothing but the document
    elif fmt == "text":
        assert out.startswith("fp8-doctor ") and "\x1b[" not in out  # not a TTY: no colour
    else:
        assert out.startswith("# fp8-doctor support report")


def test_no_redact_opts_out(capsys, job) -> None:
    snap, rules = job
    _, out, _ = run(capsys, "check", "--snapshot", snap, "--rules", rules, "--no-smoke",
                    "--format", "json", "--no-redact")
    assert json.loads(out)["facts"]["env.HF_TOKEN"] == TOKEN


def test_report_command_defaults_to_markdown_and_never_fails(capsys, job, tmp_path) -> None:
    snap, rules = job
    target = tmp_path / "report.md"
    code, out, err = run(capsys, "report", "--snapshot", snap, "--rules", rules, "-o",
                         str(target))
    assert code == 0 and out == ""
    text = target.read_text()
    assert "FP8D-HW-9001" in text and TOKEN not in text and "<details>" in text


def test_missing_path_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "/nonexistent/fp8-doctor-job.yaml", "--no-smoke"])
    assert info.value.code == 2
    _, err = capsys.readouterr()
    assert "no such file or folder" in err


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_unreadable_paths_are_not_reported_as_no_path_given(capsys, tmp_path: Path,
                                                           fmt: str) -> None:
    bad = tmp_path / "accelerate.yaml"
    bad.write_text("mixed_precision: 'fp8\n")          # an unterminated quote
    worse = tmp_path / "ds_config.json"
    worse.write_text('{"zero_optimization": {"stage": 3,}}')
    code, out, _ = run(capsys, "check", str(bad), str(worse), "--no-smoke", "--format", fmt)
    assert code == 1
    assert "no PATH given" not in out
    assert "none readable: 2 config files were given but could not be read" in out
    assert "accelerate.yaml:" in out and "ds_config.json:" in out and "(unreadable)" in out
    if fmt == "text":
        assert "Findings: 2 errors" in out
