"""Text and JSON output of ``fp8-doctor plan`` (the search is in :mod:`preflight.plan.search`)."""

from __future__ import annotations

import json
from typing import Any

from preflight.plan.search import Plan, pip_line

SCHEMA_VERSION = "1.0"


def to_dict(plan: Plan) -> dict[str, Any]:
    """The JSON document: the plan, its proof, and how old the release data is."""
    return {
        "schema_version": SCHEMA_VERSION,
        "releases": {"generated": plan.releases.generated, "source": plan.releases.source,
                     "age_days": plan.releases.age_days()},
        "version_gated": list(plan.gated),
        "changes": [{"package": c.package, "from": c.current, "to": c.target,
                     "upgrade": c.upgrade, "clears": list(c.clears)} for c in plan.changes],
        "pip_install": pip_line(plan) if plan.changes else None,
        "proof": {"rules_evaluated": plan.rules_evaluated,
                  "candidates_tried": plan.candidates_tried,
                  "still_firing": list(plan.proof), "new_findings": list(plan.new_findings),
                  "search_stopped_early": plan.truncated},
        "uncleared": list(plan.uncleared),
        "not_version_gated": list(plan.other),
        "why": plan.why or None,
        "installable": {"requirements_recorded": plan.releases.requires is not None,
                        "blocked": list(plan.blocked), "not_checked": list(plan.unchecked)},
    }


def render_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2)


def render_text(plan: Plan) -> str:
    age = plan.releases.age_days()
    lines = [f"fp8-doctor plan  (release data of {plan.releases.generated}"
             + (f", {age} day{'' if age == 1 else 's'} old)" if age is not None else ")")]
    if not plan.gated:
        lines.append("No finding depends on a package version: nothing to change.")
    else:
        lines.append(f"Version-gated findings now: {len(plan.gated)} ({', '.join(plan.gated)})")
    if plan.changes:
        width = max(len(c.package) for c in plan.changes)
        lines.append("")
        lines.append(f"Plan ({len(plan.changes)} change{'s' if len(plan.changes) > 1 else ''}):")
        for c in plan.changes:
            arrow = "->" if c.upgrade else "-> (downgrade)"
            clears = f"   clears {', '.join(c.clears)}" if c.clears else ""
            lines.append(f"  {c.package:<{width}}  {c.current} {arrow} {c.target}{clears}")
        lines += ["", f"  {pip_line(plan)}", ""]
        if plan.uncleared:
            lines.append(f"Partial: {plan.why}.")
            lines.append(f"  Still firing with the plan: {', '.join(plan.uncleared)}")
        else:
            lines.append(f"Proof: the {plan.rules_evaluated} rules evaluated again with these "
                         "versions assumed: no version-gated finding remains and no new warning "
                         f"or error appears ({plan.candidates_tried} candidate stacks tried).")
        info = [r for r in plan.new_findings if r not in plan.uncleared]
        if info:
            lines.append(f"  New info-level findings with the plan: {', '.join(info)}")
        lines += _installable(plan)
    elif plan.uncleared:
        lines += ["", f"No plan: {plan.why}.",
                  f"  Not cleared by any known release: {', '.join(plan.uncleared)}"]
        if plan.truncated:
            lines.append(f"  (search stopped after {plan.candidates_tried} candidate stacks)")
        lines += [f"  Not installable: {b}" for b in plan.blocked[1:3]]
    if plan.other:
        lines.append("")
        lines.append(f"Findings a version change cannot clear (config or hardware; see "
                     f"`fp8-doctor check`): {', '.join(plan.other)}")
    if age is not None and age > 90:
        lines.append(f"\nThe release data is {age} days old: newer releases may clear more "
                     "(refresh it with tools/refresh_releases.py).")
    return "\n".join(lines) + "\n"


def _installable(plan: Plan) -> list[str]:
    """What the plan's installability rests on (issue 24: a plan pip would refuse)."""
    if plan.releases.requires is None:
        return ["  Installability not checked: this release data records no requirements "
                "(refresh it with tools/refresh_releases.py)."]
    out = ["  Installable: every recorded requirement between the stack's packages holds."]
    if plan.unchecked:
        out.append(f"  Not checked (no wheel metadata recorded): {', '.join(plan.unchecked)}")
    if plan.blocked:
        out.append(f"  Passed over as not installable: {plan.blocked[0]}")
    return out
