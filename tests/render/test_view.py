"""The typed view the renderers take (preflight/render/view.py, issue 25 item 2): built once from
the redacted document, frozen, findings with their Impact in the one reading order, environment
rows whose Unknowns keep their reason for each format to say its own way."""

from __future__ import annotations

import dataclasses

import pytest
from render_cases import findings_report

from preflight.facts import Unknown
from preflight.findings import Finding, Fix, Impact, Severity
from preflight.redact import Redactor
from preflight.render import document
from preflight.render.envrows import UnknownPart, environment_rows, unknown_text
from preflight.render.view import FindingView, build_view

NEUTRAL = Redactor(home=None, user=None, hostnames=())


def test_the_view_is_frozen_and_typed() -> None:
    view = build_view(document(findings_report(), redactor=NEUTRAL))
    assert view.findings and all(isinstance(f, FindingView) for f in view.findings)
    assert all(isinstance(f.impact, Impact) and isinstance(f.severity, Severity)
               for f in view.findings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.findings = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.findings[0].title = "x"  # type: ignore[misc]


def test_the_views_impact_is_the_documents() -> None:
    report = dataclasses.replace(findings_report(), findings=(
        Finding("X-A-0001", Severity.INFO, "t", "m", Fix("f"), tags=("silent-bf16",)),
        Finding("X-A-0002", Severity.ERROR, "t", "m", Fix("f")),
        Finding("X-A-0003", Severity.WARNING, "t", "m", Fix("f"))))
    doc = document(report, redactor=NEUTRAL)
    view = build_view(doc)
    assert [(f.id, f.impact.value) for f in view.findings] == \
        [(f["id"], f["impact"]) for f in doc["findings"]] == \
        [("X-A-0002", "blocks"), ("X-A-0001", "no-fp8"), ("X-A-0003", "other")]


def test_environment_rows_keep_unknown_reasons_for_each_format() -> None:
    why = "NVML: library not found; nvidia-smi not found"
    facts = {"gpu.count": {"$unknown": why}, "pkg.torch.version": {"$unknown": why},
             "host.python": "3.11.7"}
    rows = {r.label: r for r in environment_rows(facts)}
    assert rows["GPU"].parts == (UnknownPart(why, "referable"),)
    assert rows["torch"].parts == (UnknownPart(why, "head"),)
    told = {why}
    assert rows["GPU"].text(lambda p: unknown_text(p, told)) == "unknown (why: above)"
    assert rows["GPU"].text(lambda p: unknown_text(p)) == f"unknown ({why})"
    assert rows["GPU"].text(lambda p: unknown_text(p, short=True)) == \
        "unknown (NVML: library not found)"
    assert rows["torch"].text(lambda p: unknown_text(p)) == "unknown (NVML: library not found)"
    assert rows["Python"].text(lambda p: "?") == "3.11.7"


def test_a_view_of_an_empty_document() -> None:
    # Every key is optional (an older snapshot's document): the view still builds.
    view = build_view({})
    assert view.findings == () and view.environment and view.summary_line.startswith("0 errors")
    assert not view.smoke.checks and view.notice is None


def test_unknown_facts_in_the_report_reach_the_rows() -> None:
    base = findings_report()
    report = dataclasses.replace(base, facts=base.facts.merged({"gpu.count": Unknown("no NVML")}))
    view = build_view(document(report, redactor=NEUTRAL))
    gpu = next(r for r in view.environment if r.label == "GPU")
    assert gpu.parts == (UnknownPart("no NVML", "referable"),)


def test_an_fp8_library_is_one_row_not_also_a_framework() -> None:
    # torchtune's and cosmos-rl's records name torchao among their distributions: a newcomer's
    # report listed "Frameworks  torchao 0.18.0" under "FP8 libraries  torchao 0.18.0".
    facts = {"pkg.torchao.version": "0.18.0", "pkg.transformer-engine.version": "2.8.0",
             "pkg.accelerate.version": "1.11.0"}
    rows = {r.label: r.text(lambda p: "?") for r in environment_rows(facts)}
    assert rows["FP8 libraries"] == "transformer-engine 2.8.0, torchao 0.18.0"
    assert rows["Frameworks"] == "accelerate 1.11.0"


@pytest.mark.parametrize(("location", "given"), [({"path": "job", "line": None}, True),
                                                (None, False)])
def test_no_inputs_says_whether_paths_were_given(location: dict[str, object] | None,
                                                  given: bool) -> None:
    # `check .` in an empty folder said "no PATH given" (newcomer run): FP8D-CFG-NO-JOB has a
    # location exactly when paths were given, and the inputs line follows it.
    from preflight.render._common import NO_INPUTS_GIVEN, NO_INPUTS_NONE, inputs_summary

    doc = {"inputs": [], "findings": [{"id": "FP8D-CFG-NO-JOB", "location": location}]}
    assert inputs_summary(doc) == (NO_INPUTS_GIVEN if given else NO_INPUTS_NONE)
