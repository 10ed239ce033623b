"""Findings that arise outside the rules: a probe that crashed, a config file that cannot be used
(unreadable, not found, not a config, a key set twice, a kind forced), no job read at all."""

from __future__ import annotations

from typing import Any

from preflight.findings import Evidence, Finding, Fix, Location, Severity
from preflight.probes.base import ProbeResult


def probe_crashed(result: ProbeResult) -> Finding:
    return Finding(
        rule_id="FP8D-PROBE-CRASH",
        severity=Severity.WARNING,
        title=f"Probe '{result.name}' crashed; its facts are unknown",
        message=f"The {result.name} probe could not finish: {result.reason}. Its facts are "
                "unknown, so rules that need them are reported as undetermined.",
        fix=Fix("Re-run with FP8_DOCTOR_DEBUG=1 and attach `fp8-doctor report` to an issue."),
        evidence=(Evidence(f"probe.{result.name}", result.reason, result.name),),
        confidence="verified",
    )


# ConfigProblem.code -> (finding id, title); the severity is the problem's level.
_CONFIG_FINDINGS = {
    "unreadable": ("FP8D-CFG-UNREADABLE", "A config file cannot be read"),
    "reference": ("FP8D-CFG-REFERENCE", "A file the config names was not found here"),
    "no_job": ("FP8D-CFG-NO-JOB", "No job config was read: nothing about the job was checked"),
    "not_a_config": ("FP8D-CFG-NOT-CONFIG", "A path given is not a config file"),
    "duplicate_key": ("FP8D-CFG-DUPLICATE-KEY", "A config key is set twice; the last one wins"),
    "kind_forced": ("FP8D-CFG-KIND-FORCED", "A config was read as the --kind given, against its keys"),
    "not_read": ("FP8D-CFG-NOT-READ", "Files of the job folder were not read"),
    "unknown_framework": ("FP8D-CFG-UNKNOWN-FRAMEWORK",
                          "A file fp8-doctor does not read (it is not broken)"),
}


def config_problem(problem: Any) -> Finding:
    loc = Location(problem.path, problem.line)
    rule_id, title = _CONFIG_FINDINGS.get(getattr(problem, "code", "unreadable"),
                                          _CONFIG_FINDINGS["unreadable"])
    return Finding(
        rule_id=rule_id,
        severity={"warning": Severity.WARNING, "info": Severity.INFO}.get(
            getattr(problem, "level", "error"), Severity.ERROR),
        title=title,
        message=f"{loc}: {problem.message}",
        fix=Fix(getattr(problem, "fix", None) or
                "Fix the file so it parses; the training job would fail on it too."),
        evidence=(Evidence("config.files", problem.path, str(loc)),),
        location=loc,
        confidence="verified",
    )
