"""What a person reads first (issue 12, item 5): findings by what blocks the run, the "not the
training environment" notice at the top, an Unknown reason printed once, text sized to a width,
and the -q / -v levels of the text renderer."""

from __future__ import annotations

import dataclasses
import re

import pytest
from render_cases import findings_report

from preflight.facts import Unknown
from preflight.findings import (
    Evidence,
    Finding,
    Fix,
    Impact,
    Location,
    Severity,
    Undetermined,
    reading_order,
)
from preflight.redact import Redactor
from preflight.render import render

NEUTRAL = Redactor(home=None, user=None, hostnames=())


def _f(rule_id: str, severity: Severity, tags: tuple[str, ...] = ()) -> Finding:
    return Finding(rule_id, severity, f"title {rule_id}", f"message {rule_id}", Fix("do it"),
                   tags=tags, location=Location("/job/a.yaml", 3))


def _report(*findings: Finding, **changes):
    return dataclasses.replace(findings_report(), findings=findings, **changes)


def _ids(text: str) -> list[str]:
    return re.findall(r"\b(?:X|FP8D)-[A-Z]+-\d+\b", text)


def test_blocking_errors_then_silent_no_fp8_then_the_rest() -> None:
    report = _report(_f("X-A-0003", Severity.INFO), _f("X-A-0002", Severity.WARNING),
                     _f("X-A-0009", Severity.WARNING, ("silent-no-fp8",)),
                     _f("X-A-0001", Severity.ERROR, ("silent-no-fp8",)),
                     _f("X-A-0005", Severity.ERROR))
    want = ["X-A-0005", "X-A-0001", "X-A-0009", "X-A-0002", "X-A-0003"]
    for fmt, detail in (("text", "normal"), ("text", "quiet"), ("markdown", "normal")):
        text = render(report, fmt, redactor=NEUTRAL, detail=detail)
        seen = [i for i in dict.fromkeys(_ids(text)) if i.startswith("X-")]
        assert seen == want, (fmt, detail, seen)
    text = render(report, "text", redactor=NEUTRAL)
    assert text.index("Stops or breaks the job") < text.index("FP8 silently not applied") \
        < text.index("Other findings")


def test_impact_is_a_total_order_over_severity_and_tags() -> None:
    items = [(f"X-{s}-{t}", s, (t,))
             for s in ("error", "warning", "info") for t in ("silent-no-fp8", "silent-bf16", "x")]
    ordered = sorted(items, key=lambda i: reading_order(i[1], i[2], i[0]))
    ranks = [Impact.of(s, tags).rank for _, s, tags in ordered]
    assert ranks == sorted(ranks)
    assert {Impact.of(s, tags) for _, s, tags in items} == set(Impact)


def test_one_order_of_findings_json_and_every_renderer() -> None:
    # Issue 25 item 2: Report.sorted_findings (the JSON document) and the renderers had two
    # orders; a silent-no-fp8 info now precedes a plain warning in both.
    report = _report(_f("X-A-0002", Severity.WARNING), _f("X-A-0001", Severity.INFO,
                                                          ("silent-no-fp8",)))
    want = ["X-A-0001", "X-A-0002"]
    assert [f.rule_id for f in report.sorted_findings()] == want
    assert [f["id"] for f in report.to_dict()["findings"]] == want
    assert [f["impact"] for f in report.to_dict()["findings"]] == ["no-fp8", "other"]
    sarif = render(report, "sarif", redactor=NEUTRAL)
    assert [i for i in dict.fromkeys(_ids(sarif)) if i.startswith("X-")] == want


def test_not_the_training_environment_notice_is_at_the_top() -> None:
    base = findings_report()
    note = Finding("FP8D-ENV-NOT-TRAINING", Severity.WARNING, "Not the training environment",
                   "No FP8 stack is installed here (a CI runner?).", Fix("Use --snapshot."))
    report = dataclasses.replace(base, findings=(*base.findings, note))
    text = render(report, "text", redactor=NEUTRAL)
    head = text.split("Findings:")[0]
    assert "Not the training environment" in head
    assert "a CI runner?" in head
    assert "Not the training environment" not in render(base, "text", redactor=NEUTRAL)


def test_an_unknown_reason_is_printed_once() -> None:
    nvml = ("NVML: NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed "
            "here, or it is not mounted into this container; nvidia-smi not found on PATH")
    base = findings_report()
    report = dataclasses.replace(
        base, facts=base.facts.merged({"gpu.count": Unknown(nvml), "gpu.driver": Unknown(nvml)}),
        undetermined=(Undetermined("FP8D-HW-0001", Severity.ERROR, "No FP8 tensor cores",
                                   (Evidence("gpu.count", Unknown(nvml), "nvml"),)),))
    for fmt in ("text", "markdown"):
        # In full once ("nvidia-smi not found" is its tail); elsewhere only its head is named.
        body = render(report, fmt, redactor=NEUTRAL, width=400)
        flat = " ".join(body.split())
        assert flat.count("nvidia-smi not found on PATH") == 1, fmt


@pytest.mark.parametrize("width", [50, 70, 160])
def test_text_is_wrapped_to_the_width(width: int) -> None:
    text = render(findings_report(), "text", redactor=NEUTRAL, width=width)
    prose = [ln for ln in text.splitlines() if "/" not in ln and "see: " not in ln]
    # Capped at a readable width (issue 24 item 5: at 200 columns prose ran the full width).
    assert max(map(len, prose)) <= min(width, 100)
    if width == 160:
        assert max(map(len, prose)) > 90   # but it does use the room up to the cap


def test_quiet_and_verbose() -> None:
    report = findings_report()
    quiet = render(report, "text", redactor=NEUTRAL, detail="quiet").splitlines()
    assert quiet[0] == "/work/job/accelerate.yaml:4: error FP8D-ACC-0001 FP8 silently not " \
                       "applied under DeepSpeed"
    # Exactly one line per finding, then one summary line counting the undetermined.
    assert len(quiet) == len(report.findings) + 1
    assert quiet[-1].startswith("Summary: ") and "1 undetermined" in quiet[-1]
    verbose = render(report, "text", redactor=NEUTRAL, detail="verbose")
    assert "evidence: config.accelerate.mixed_precision = fp8  (/work/job/accelerate.yaml:4)" \
        in verbose
    assert "Probes (2)" in verbose and "packages: crashed" in verbose
    with pytest.raises(ValueError, match="detail"):
        render(report, "text", detail="loud")


def _doc_text(report, extra: dict, fmt: str = "text", detail: str = "normal") -> str:
    """Render ``report``'s document with keys the pipeline adds (environment judgement, baseline,
    ignore) merged in, through the same redaction path as :func:`render`."""
    from preflight.render import render_document
    from preflight.render.markdown import render_markdown
    from preflight.render.text import render_text
    from preflight.render.view import build_view

    doc = {**report.to_dict(), **extra}
    if fmt == "text":
        return render_document(doc, lambda d: render_text(build_view(d), detail=detail),
                               redactor=NEUTRAL)
    return render_document(doc, lambda d: render_markdown(build_view(d)), redactor=NEUTRAL)


@pytest.mark.parametrize("training,expected", [(False, "is not"), (None, "may not be")])
def test_environment_judgement_gives_the_notice(training, expected: str) -> None:
    env = {"where": "this machine", "is_training_environment": training,
           "reasons": ["no GPU is visible"],
           "missing_packages": [{"packages": ["transformer-engine"],
                                 "needed_because": "intent.backend is te", "source": None}]}
    for fmt in ("text", "markdown"):
        text = _doc_text(findings_report(), {"environment": env}, fmt)
        head = " ".join(text.split("## Findings")[0].split("Findings:")[0].split())
        assert f"(this machine) {expected} the training environment" in head, fmt
        assert "no GPU is visible" in head and "transformer-engine" in head
    quiet = _doc_text(findings_report(), {"environment": env}, detail="quiet").splitlines()
    # -q: the notice is not a line of its own (FP8D-ENV-NOT-TRAINING, when raised, is a finding)
    assert len(quiet) == len(findings_report().findings) + 1
    env["is_training_environment"] = True
    assert "training environment" not in _doc_text(findings_report(), {"environment": env})


def test_baselined_and_ignored_are_shown_not_counted() -> None:
    base = findings_report()
    accepted = [f.to_dict() for f in base.findings[:1]]
    extra = {"baselined": accepted, "ignored": ["FP8D-HW-0009"]}
    report = dataclasses.replace(base, findings=base.findings[1:])
    text = _doc_text(report, extra)
    assert "Accepted by the baseline: 1 finding(s)" in text
    assert "Ignored (--ignore): FP8D-HW-0009" in text
    assert "Findings: 1 warning, 1 info" in text
    quiet = _doc_text(report, extra, detail="quiet")
    assert "FP8D-ACC-0001" not in quiet and "· 1 baselined ·" in quiet  # counted, not listed
    md = _doc_text(report, extra, "markdown")
    assert "## Accepted by the baseline" in md and "`FP8D-HW-0009`" in md
    plain = render(report, "text", redactor=NEUTRAL)
    assert "baseline" not in plain and "Ignored" not in plain


def test_a_reason_given_in_the_notice_is_not_repeated() -> None:
    nvml = "NVML: NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed here"
    base = findings_report()
    report = dataclasses.replace(base, undetermined=(
        Undetermined("FP8D-HW-0001", Severity.ERROR, "No FP8 tensor cores",
                     (Evidence("gpu.min_cc", Unknown(nvml), "nvml"),)),))
    env = {"where": "this machine", "is_training_environment": False,
           "reasons": [f"no GPU is visible ({nvml})"], "missing_packages": []}
    text = " ".join(_doc_text(report, {"environment": env}).split())
    assert text.count("no NVIDIA driver is installed here") == 1   # in full in the notice only
    verbose = " ".join(_doc_text(report, {"environment": env}, detail="verbose").split())
    assert "gpu.min_cc: given in the notice at the top" in verbose


def test_environment_block_keeps_unknown_package_reasons_short() -> None:
    """Absent packages the job needs are Unknown with a long reason: the environment block shows
    its first clause, or "why: above" when the undetermined section already gave it."""
    why = ("deepspeed is not installed here: run on the training node, pass --snapshot from it, "
           "or --assume pkg.deepspeed=VERSION")
    base = findings_report()
    report = dataclasses.replace(
        base, facts=base.facts.merged({"pkg.deepspeed.version": Unknown(why),
                                       "pkg.torch.version": Unknown(why.replace("deepspeed",
                                                                                "torch"))}),
        undetermined=(Undetermined("FP8D-TORCH-0004", Severity.ERROR, "t",
                                   (Evidence("pkg.torch.version",
                                             Unknown(why.replace("deepspeed", "torch")),
                                             "importlib.metadata"),)),))
    text = render(report, "text", redactor=NEUTRAL, width=200)
    env = text.split("Environment")[1]
    assert "deepspeed unknown (deepspeed is not installed here)" in env
    assert "torch          unknown (torch is not installed here)" in env
    assert "--assume" not in env
    verbose = render(report, "text", redactor=NEUTRAL, width=200, detail="verbose")
    assert "torch          unknown (why: above)" in verbose.split("Environment")[1]
