"""``--format junit``: JUnit XML for CI systems that show test reports (GitLab, Jenkins, Azure
Pipelines, CircleCI, GitHub test-report actions).

One testcase per finding and per undetermined rule, plus one ``summary`` testcase; not one per
rule evaluated. Why: the report lists only the rules that fired or could not be decided (the
quiet ones are a count, and a rule the index proved quiet on the check's facts is not even
built, ``engine/index.py``), a built-in finding such as FP8D-CFG-UNREADABLE is no rule at all,
and 270 passing testcases around two failures bury them in a CI's test view. So:

- a finding at or above ``--fail-on`` is a ``<failure>`` (``type``: its severity; the body: the
  message, where, the fix, its references), so the CI's failed tests are exactly what makes the
  exit code 1; one below it passes, its text in ``<system-out>``; a finding the baseline
  accepted passes too, saying so; classname ``fp8-doctor.<impact>`` groups them by what they do
  to the job (:class:`preflight.findings.Impact`);
- an undetermined rule is ``<skipped>`` with the unknown facts and why (``--strict`` turns them
  into FP8D-STRICT findings before rendering, which then fail);
- ``summary`` passes and carries the one-line result, so a clean run is one passing test, not an
  empty report (which some CIs treat as an error).

Valid against the JUnit schema CI tools read (jenkinsci/xunit-plugin, ``junit-10.xsd`` at
031e285ef3b6: ``testsuites`` takes name / tests / failures / errors, ``testsuite`` requires
name / tests / failures / errors and allows skipped, ``testcase`` requires name and allows
classname; no file or line attributes, so the location is in the names and bodies). No timestamp
or host name: the output is the same on every run and names no machine. Every text goes through
:func:`xml_text`: characters XML 1.0 forbids (controls but tab / newline / carriage return,
lone surrogates, U+FFFE / U+FFFF) are written as ``\\uXXXX``; ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from preflight.findings import at_or_above
from preflight.render.view import FindingView, ReportView, build_view

if TYPE_CHECKING:
    from preflight.render import Options

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: object) -> str:
    """``value`` as text XML 1.0 can hold: each forbidden character as a visible ``\\uXXXX``."""
    return _ILLEGAL.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


def render(doc: dict[str, Any], options: Options) -> str:
    """``--format junit`` (the :data:`preflight.outputs.REPORT_FORMATS` entry point)."""
    return render_junit(build_view(doc))


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text:
        node.text = xml_text(text)
    return node


def _name(f: FindingView) -> str:
    return f"{f.id}: {f.title}" + (f" ({f.location})" if f.location else "")


def _body(f: FindingView) -> str:
    lines = [f.message]
    if f.location:
        lines.append(f"at {f.location}")
    if f.fix_text:
        lines.append(f"fix: {f.fix_text}")
    lines += [f"$ {c}" for c in f.fix_commands]
    lines += [f"see: {r.url} ({r.type})" for r in f.references]
    return "\n".join(lines)


def render_junit(view: ReportView) -> str:
    """The report as one JUnit test suite (see the module docstring for the mapping)."""
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite")
    props = _el(suite, "properties")
    for name, value in (("fp8-doctor.version", view.tool_version), ("fail-on", view.fail_on),
                        ("exit-code", view.exit_code),
                        ("rules-evaluated", view.rules_evaluated),
                        *(("input", i) for i in view.inputs)):
        _el(props, "property", name=name, value=value)
    failures = 0
    for f in view.findings:
        case = _el(suite, "testcase", classname=f"fp8-doctor.{f.impact.value}", name=_name(f))
        if at_or_above(f.severity, view.fail_on):
            failures += 1
            _el(case, "failure", _body(f), type=f.severity.value, message=f.title)
        else:
            _el(case, "system-out", f"{f.severity.value} (below --fail-on {view.fail_on}): "
                                    + _body(f))
    for f in view.accepted:
        case = _el(suite, "testcase", classname="fp8-doctor.baselined", name=_name(f))
        _el(case, "system-out", f"{f.severity.value}, accepted by the baseline (not counted): "
                                + _body(f))
    for u in view.undetermined:
        case = _el(suite, "testcase", classname="fp8-doctor.undetermined",
                   name=f"{u.id}: {u.title}")
        facts = ", ".join(e.fact for e in u.unknown)
        why = "\n".join(f"{e.fact}: {_reason(e.value)}" for e in u.unknown)
        _el(case, "skipped", why, message=f"could not be decided ({u.severity.value}): "
                                          f"unknown facts: {facts}")
    summary = _el(suite, "testcase", classname="fp8-doctor", name="summary")
    _el(summary, "system-out", view.summary_line)
    tests = len(view.findings) + len(view.accepted) + len(view.undetermined) + 1
    counts = {"tests": tests, "failures": failures, "errors": 0}
    for key, value in {"name": "fp8-doctor", **counts}.items():
        suites.set(key, str(value))
    for key, value in {"name": "fp8-doctor check", **counts,
                       "skipped": len(view.undetermined)}.items():
        suite.set(key, str(value))
    ET.indent(suites, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") \
        + "\n"


def _reason(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"$unknown"}:
        return str(value["$unknown"])
    return str(value)
