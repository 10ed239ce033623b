"""Progress of the smoke step: the runner names the stage each child is in (the display is
preflight/render/progress.py, every command's)."""

from __future__ import annotations

import sys

from preflight.smoke.runner import run_children


def test_progress_names_the_stage_a_child_is_in() -> None:
    """The child rewrites its result file at each stage; the runner reports each new stage, so a
    slow or hung step shows where it is while it runs (and the hang's stage before the kill)."""
    script = ("import json, sys, time\n"
              "for stage in ('import torch', 'scaled_mm', 'te'):\n"
              "    json.dump({'stage': stage}, open(sys.argv[2], 'w'))\n"
              "    time.sleep(1.5)\n"
              "json.dump({'stage': 'done', 'done': True}, open(sys.argv[2], 'w'))\n")
    seen: list[str] = []
    [res] = run_children([{"device": "cpu"}], timeout=60, progress=seen.append,
                         command=(sys.executable, "-c", script))
    assert res.status == "ok"
    stages = [m.split(": ", 1)[1].rsplit(" (", 1)[0] for m in seen
              if m.startswith("smoke child on cpu: ")]
    assert stages == ["import torch", "scaled_mm", "te"]
    assert seen[-1].startswith("smoke child on cpu finished in")
