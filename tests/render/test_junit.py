"""``--format junit`` (preflight/render/junit.py, issue 25 item 6): a JUnit XML report a CI shows
as tests. Parsed with xml.etree and held to the schema CI tools read (jenkinsci/xunit-plugin,
src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd at 031e285ef3b6):
which attributes and children each element may have, which are required; the counts agree with
the testcases; failures are exactly the findings at or above --fail-on; undetermined rules are
skipped; hostile text (control characters, markup, lone surrogates) stays well-formed XML."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest
from render_cases import clean_report, findings_report

from preflight.cli import main
from preflight.findings import Evidence, Finding, Fix, Location, Severity, Undetermined
from preflight.outputs import BY_NAME, COMMAND_FORMATS
from preflight.redact import Redactor
from preflight.render import render
from preflight.render.junit import render_junit, xml_text
from preflight.render.view import build_view

NEUTRAL = Redactor(home=None, user=None, hostnames=())

# junit-10.xsd: element -> (required attributes, optional attributes, allowed children).
SCHEMA = {
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors"}, {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors"},
                  {"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file",
                   "log", "url"},
                  {"testsuite", "properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, set(), set()),
    "testcase": ({"name"}, {"time", "classname", "group"},
                 {"skipped", "error", "failure", "system-out", "system-err"}),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
    "skipped": (set(), {"type", "message"}, set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def _valid(xml: str) -> ET.Element:
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(xml.encode("utf-8"))   # fails on anything that is not well-formed
    assert root.tag == "testsuites"
    for node in root.iter():
        required, optional, children = SCHEMA[node.tag]
        assert required <= set(node.attrib), (node.tag, node.attrib)
        assert set(node.attrib) <= required | optional, (node.tag, node.attrib)
        assert {c.tag for c in node} <= children, (node.tag, [c.tag for c in node])
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests", -1)) == len(cases)
        assert int(suite.get("failures", -1)) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("skipped", -1)) == sum(len(c.findall("skipped")) for c in cases)
        assert suite.get("errors") == "0"
    for key in ("tests", "failures", "errors"):
        assert root.get(key) == str(sum(int(s.get(key, 0)) for s in root.iter("testsuite")))
    return root


def _cases(root: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in root.iter("testcase")}


@pytest.mark.parametrize("fail_on,failing", [
    ("error", {"FP8D-ACC-0001"}),
    ("warning", {"FP8D-ACC-0001", "FP8D-TE-0003"}),
    ("info", {"FP8D-ACC-0001", "FP8D-TE-0003", "FP8D-HW-0002"}),
    ("never", set()),
])
def test_failures_are_the_findings_at_or_above_fail_on(fail_on: str, failing: set[str]) -> None:
    report = dataclasses.replace(findings_report(), fail_on=fail_on)
    root = _valid(render(report, "junit", redactor=NEUTRAL))
    failed = {n.split(":")[0] for n, c in _cases(root).items() if c.find("failure") is not None}
    assert failed == failing
    passed = {n.split(":")[0] for n, c in _cases(root).items()
              if c.find("failure") is None and c.find("skipped") is None}
    assert passed == {"FP8D-ACC-0001", "FP8D-TE-0003", "FP8D-HW-0002", "summary"} - failing
    assert (root.get("failures") != "0") == (report.exit_code() == 1)


def test_a_finding_names_its_place_and_fix_and_its_impact() -> None:
    root = _valid(render(findings_report(), "junit", redactor=NEUTRAL))
    case = next(c for n, c in _cases(root).items() if n.startswith("FP8D-ACC-0001"))
    assert case.get("classname") == "fp8-doctor.blocks"
    assert "(/work/job/accelerate.yaml:4)" in case.get("name", "")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert failure.get("message") == "FP8 silently not applied under DeepSpeed"
    body = failure.text or ""
    assert "at /work/job/accelerate.yaml:4" in body and "$ pip install 'accelerate>=1.11.0'" in body
    assert "see: https://github.com/huggingface/accelerate/pull/3361 (FIX)" in body


def test_undetermined_rules_are_skipped_with_why() -> None:
    root = _valid(render(findings_report(), "junit", redactor=NEUTRAL))
    case = next(c for n, c in _cases(root).items() if n.startswith("FP8D-HW-0001"))
    skipped = case.find("skipped")
    assert skipped is not None and "gpu.mig" in (skipped.get("message") or "")
    assert "nvmlDeviceGetMigMode not supported" in (skipped.text or "")


def test_a_clean_run_is_one_passing_test() -> None:
    root = _valid(render(clean_report(), "junit", redactor=NEUTRAL))
    assert root.get("tests") == "1" and root.get("failures") == "0"
    summary = _cases(root)["summary"]
    assert "0 errors" in (summary.findtext("system-out") or "")


def test_baselined_findings_pass_and_say_so() -> None:
    base = findings_report()
    report = dataclasses.replace(base, findings=base.findings[1:], baselined=base.findings[:1])
    root = _valid(render(report, "junit", redactor=NEUTRAL))
    case = next(c for n, c in _cases(root).items() if n.startswith("FP8D-ACC-0001"))
    assert case.get("classname") == "fp8-doctor.baselined" and case.find("failure") is None
    assert "accepted by the baseline" in (case.findtext("system-out") or "")


HOSTILE = "a\x00b\x1b[31mred\x07 <x>&amp; \"q\" 'a' ]]> \udc80 \ufffe end"


@pytest.mark.parametrize("through_render", [True, False])
def test_hostile_text_stays_well_formed(through_render: bool) -> None:
    finding = Finding("X-A-0001", Severity.ERROR, HOSTILE, HOSTILE, Fix(HOSTILE, (HOSTILE,)),
                      location=Location(f"/job/{HOSTILE}.yaml", 3), tags=(HOSTILE,))
    und = Undetermined("X-A-0002", Severity.ERROR, HOSTILE,
                       (Evidence(HOSTILE, HOSTILE, HOSTILE),))
    report = dataclasses.replace(findings_report(), findings=(finding,), undetermined=(und,),
                                 inputs=(HOSTILE,))
    if through_render:
        xml = render(report, "junit", redactor=NEUTRAL)
    else:   # the renderer alone, on a document nobody sanitized: it must escape by itself
        xml = render_junit(build_view({**report.to_dict(), "fail_on": "error"}))
    root = _valid(xml)
    case = next(c for n, c in _cases(root).items() if n.startswith("X-A-0001"))
    name = case.get("name", "")
    assert "<x>&amp; \"q\" 'a' ]]>" in name            # markup is text, not XML
    assert "\x00" not in xml and "\x1b" not in xml and "\ufffe" not in xml
    assert "\udc80" not in xml


def test_xml_text_escapes_only_what_xml_forbids() -> None:
    assert xml_text("tab\tnew\nline\rok é ✓ 🙂") == "tab\tnew\nline\rok é ✓ 🙂"
    assert xml_text("\x00\x1f\ud800\uffff") == "\\u0000\\u001f\\ud800\\uffff"


def test_junit_is_a_report_format_of_check_report_and_the_multi_rank_mode(capsys) -> None:
    for command in ("check", "report", "cluster"):
        assert "junit" in COMMAND_FORMATS[command]
    assert BY_NAME["junit"].document    # the multi-rank mode prints no table around it
    code = main(["check", "--example", "--no-smoke", "--no-project-config", "--format", "junit",
                 "--assume", "host.place=planning"])
    root = _valid(capsys.readouterr().out)
    assert code == 1 and int(root.get("failures", 0)) >= 1
