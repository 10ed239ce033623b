"""``--strict``: what makes a check fail beyond the findings that fired.

Why (issue 12): ``assert_ready(smoke=True)`` passed on a machine with no GPU, CPU-only torch and
no config (16 rules undetermined, smoke skipped); there was no way to fail on "could not tell".
Under ``--strict`` each of these becomes one error finding, so the exit code, ``Report.ok``,
``PreflightError`` and every renderer treat it like any other finding:

- ``FP8D-STRICT-UNDETERMINED``: rules at or above ``--fail-on`` that stayed undetermined;
- ``FP8D-STRICT-SMOKE``: the job asks for FP8 and the smoke step could not run (no GPU, a replayed
  snapshot, ...). An explicit ``--no-smoke`` / ``smoke=False`` is the user's choice, not this.
"""

from __future__ import annotations

from collections.abc import Sequence

from preflight.builtin_findings import BUILTIN
from preflight.findings import Evidence, FailOn, Finding, Fix, Undetermined

# Defined in preflight.builtin_findings (the one catalogue of built-in findings).
UNDETERMINED_ID = "FP8D-STRICT-UNDETERMINED"
SMOKE_ID = "FP8D-STRICT-SMOKE"
_SHOWN = 8


def undetermined_finding(blocking: Sequence[Undetermined], fail_on: FailOn) -> Finding:
    """One error naming the undetermined rules (at or above ``fail_on``) and why each is."""
    ids = sorted(u.rule_id for u in blocking)
    shown = ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN
                                       else "")
    reasons = sorted({r for u in blocking for r in u.reasons})
    why = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    evidence = {e.fact: e for u in blocking for e in u.unknown}
    return BUILTIN[UNDETERMINED_ID].make(
        f"{len(ids)} rule(s) at or above '{fail_on}' could not be decided here: "
        f"{shown}. Why: {why or 'facts they need are unknown'}.",
        Fix("Give fp8-doctor the missing facts: run it on the training node, pass "
            "--snapshot FILE from there, or --assume KEY=VALUE for what is planned; "
            "or drop --strict to accept undetermined rules."),
        evidence=tuple(evidence[k] for k in sorted(evidence)),
        tags=("strict",),
    )


def smoke_finding(why_not: str) -> Finding:
    """The job asks for FP8 but the smoke step did not run: nothing confirmed FP8 works."""
    return BUILTIN[SMOKE_ID].make(
        f"The job asks for FP8 but the smoke step did not run ({why_not}), so nothing "
        "confirmed that FP8 runs, engages and trains on the GPU.",
        Fix("Run fp8-doctor check --strict on a node with the training GPU and torch, or "
            "pass --no-smoke to accept an unconfirmed FP8 path."),
        evidence=(Evidence("smoke.skip_reason", why_not, "smoke"),),
        tags=("strict", "smoke"),
    )
