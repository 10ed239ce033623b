"""``PreflightError``: what :func:`preflight.assert_ready` and the callbacks raise, with a
redacted message built from the report (split from ``api.py``, which only sequences the pipeline).
"""

from __future__ import annotations

from preflight.findings import FailOn, Severity, at_or_above
from preflight.report import Report

__all__ = ["PreflightError"]


class PreflightError(AssertionError):
    """Raised by :func:`assert_ready` when the checks find problems; carries the report.

    ``str(err)`` is redacted like every report format (tracebacks and CI logs get pasted into
    bug trackers): tokens, URL credentials, the home directory, host names. The raw data stays
    on the object: ``err.report`` / ``err.findings`` are unredacted, and
    ``err.report.render("text", redact=False)`` shows everything.
    """

    def __init__(self, report: Report, fail_on: FailOn | str = FailOn.ERROR) -> None:
        self.report = report
        self.fail_on = fail_on = FailOn.parse(fail_on)
        bad = [f for f in report.sorted_findings() if at_or_above(f.severity, fail_on)]
        self.findings = tuple(bad)
        super().__init__(_error_message(report, fail_on))


def _error_message(report: Report, fail_on: FailOn) -> str:
    """The exception text, built from the report's redacted document (as the renderers do), so
    a secret-named fact interpolated into a message or a token in a config path is masked."""
    from preflight.redact import redact_text
    from preflight.render import document
    from preflight.render._common import location_text

    doc = document(report, redact=True)
    # The document sorts findings as Report.sorted_findings does; keep those at the threshold.
    bad = [f for f in doc["findings"] if at_or_above(Severity(f["severity"]), fail_on)]
    noun = "finding" if len(bad) == 1 else "findings"
    lines = [f"fp8-doctor: {len(bad)} {noun} at or above '{fail_on}':"]
    for f in bad:
        lines.append(f"  [{f['severity']}] {f['id']}: {f['title']}")
        lines.append(f"      {f['message']}")
        loc = location_text(f)
        if loc:
            lines.append(f"      at {loc}")
        fix = f.get("fix") or {}
        if fix.get("text"):
            lines.append(f"      fix: {fix['text']}")
        lines.extend(f"        $ {cmd}" for cmd in fix.get("commands") or ())
    lines.append("The full report is on this exception: err.report.render('text') "
                 "(or 'json' / 'markdown'; redact=False for the raw values).")
    # The same second pass as the renderers: a value assembled from several parts is checked too.
    return redact_text("\n".join(lines), hex_runs=False)
