"""``check``'s output options end to end (issue 12, item 5): -q / -v, the terminal width from
COLUMNS, FORCE_COLOR / NO_COLOR, findings ordered by what blocks the run, and locations that
point at the line that sets the value (text, -q and SARIF agree)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from preflight.cli import main
from preflight.findings import Impact
from preflight.redact import redact_text

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "fixtures" / "configs" / "jobs" / "launch_accel_ds"
# A planned training node, so the versioned rules decide (not this CPU-only machine); said to be
# the training node, so what this machine lacks (transformers, a CUDA torch) is an error there.
PLAN = ["--assume", "gpu=H100", "--assume", "host.place=training-node",
        "--assume", "pkg.accelerate=1.2.0",
        "--assume", "pkg.transformer-engine=1.9.0", "--assume", "pkg.deepspeed=0.15.0"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _check(capsys, *argv: str) -> tuple[int, str]:
    code = main(["check", str(JOB), "--no-smoke", *PLAN, *argv])
    return code, capsys.readouterr().out


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_quiet_is_one_line_per_finding_at_its_location(capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out = _check(capsys, "-q", "--format", "text")
    _, doc = _check(capsys, "--format", "json")
    findings = json.loads(doc)["findings"]
    lines = out.splitlines()
    finding_lines = [ln for ln in lines if re.match(r"^(\S+:\d+: )?(error|warning|info) FP8D-", ln)]
    # Issue 24 item 5: exactly one line per finding, then one summary line that counts the
    # undetermined rules (which had a line each before), and nothing else.
    assert finding_lines == lines[:-1] and len(finding_lines) == len(findings) and code == 1
    assert lines[-1].startswith("Summary: ") and " undetermined" in lines[-1]
    # Ordered by what blocks the run: errors that stop it first, FP8-silently-off next (the
    # plan makes ACC-0001, "FP8 silently not applied under DeepSpeed", fire), then the rest.
    ids = [re.search(r"FP8D-[A-Z0-9-]+", ln).group(0) for ln in finding_lines]
    by_id = {f["id"]: f for f in findings}
    classes = [Impact(by_id[i]["impact"]) for i in ids]     # the JSON states each one's impact
    assert classes == sorted(classes, key=lambda c: c.rank)
    assert {Impact.BLOCKS, Impact.NO_FP8, Impact.OTHER} <= set(classes)
    assert "FP8D-ACC-0001" in ids and by_id["FP8D-ACC-0001"]["impact"] == "no-fp8"


def test_gradient_checkpointing_points_at_the_launch_script_line(capsys) -> None:
    """TE-0002 is about the flag that turns checkpointing on: the launch script's line, in the
    text, in -q and in the SARIF annotation."""
    script = JOB / "launch.sh"
    line = _line_of(script, "--gradient_checkpointing")
    _, quiet = _check(capsys, "-q")
    te = next(ln for ln in quiet.splitlines() if "FP8D-TE-0002" in ln)
    # the path as the report shows it: a clone under a home folder (CI's /home/runner/...) is ~/...
    assert te.startswith(f"{redact_text(str(script))}:{line}: warning ")
    _, sarif = _check(capsys, "--format", "sarif")
    result = next(r for r in json.loads(sarif)["runs"][0]["results"]
                  if r["ruleId"] == "FP8D-TE-0002")
    physical = result["locations"][0]["physicalLocation"]
    assert physical["region"]["startLine"] == line
    assert physical["artifactLocation"]["uri"].endswith("launch_accel_ds/launch.sh")


def test_sarif_uris_are_relative_to_the_run_directory(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    _, sarif = _check(capsys, "--format", "sarif")
    run = json.loads(sarif)["runs"][0]
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in run["results"] if r.get("locations")]
    assert locs and all(loc.get("uriBaseId") == "%SRCROOT%" for loc in locs)
    assert all(loc["uri"].startswith("fixtures/configs/jobs/launch_accel_ds/") for loc in locs)


def test_verbose_shows_evidence_and_every_reference(capsys) -> None:
    _, normal = _check(capsys)
    _, verbose = _check(capsys, "-v")
    assert "evidence: " not in normal and "evidence: intent.fp8 = yes" in verbose
    assert verbose.count("see: ") > normal.count("see: ")
    assert "more reference(s): -v" in normal


def test_findings_come_before_the_environment(capsys) -> None:
    _, out = _check(capsys)
    assert out.index("Findings:") < out.index("Environment") < out.index("Summary:")


@pytest.mark.parametrize("columns", [60, 150])
def test_columns_sets_the_width(capsys, monkeypatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    _, out = _check(capsys)
    # Lines that are never folded (URLs, paths, one word longer than the line) may be longer;
    # prose is wrapped to the width, at most 100 columns (issue 24 item 5).
    prose = [ln for ln in out.splitlines()
             if "see: " not in ln and "/" not in ln and len(ln.split()) > 1]
    assert max(len(ln) for ln in prose) <= min(columns, 100)
    assert max(len(ln) for ln in prose) > min(columns, 100) - 20


def test_no_word_is_broken_at_80_columns(capsys, monkeypatch) -> None:
    # Issue 24 item 5: at 80 columns URLs, paths and "(SOURCE" broke mid-word. Every word of
    # the wide report is a word of the narrow one.
    monkeypatch.setenv("COLUMNS", "400")
    _, wide = _check(capsys)
    monkeypatch.setenv("COLUMNS", "80")
    _, narrow = _check(capsys)
    assert set(narrow.split()) <= set(wide.split())
    assert any("https://" in w for w in narrow.split()) and "(SOURCE)" in narrow.split()


def test_force_color_and_no_color(capsys, monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out = _check(capsys)
    assert ANSI.search(out)
    monkeypatch.setenv("NO_COLOR", "1")
    _, out = _check(capsys)
    assert not ANSI.search(out)
    monkeypatch.delenv("NO_COLOR")
    _, out = _check(capsys, "--color", "never")
    assert not ANSI.search(out)


def test_quiet_and_verbose_are_exclusive(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "-q", "-v", "--no-smoke"])
    assert info.value.code == 2
