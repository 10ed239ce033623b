"""Progress of the smoke step: the runner names the stage each child is in (the display is
preflight/render/progress.py, every command's)."""

from __future__ import annotations

import sys
from pathlib import Path

from preflight.smoke.runner import run_children

STAGES = ("import torch", "scaled_mm", "te")


def _stage_of(message: str) -> str | None:
    if not message.startswith("smoke child on cpu: "):
        return None
    return message.split(": ", 1)[1].rsplit(" (", 1)[0]


def test_progress_names_the_stage_a_child_is_in(tmp_path: Path) -> None:
    """The child rewrites its result file at each stage; the runner reports each new stage, so a
    slow or hung step shows where it is while it runs (and the hang's stage before the kill).

    The child stays in each stage until the report of it arrived (an acknowledgement file the
    progress callback writes; 120 s at most), not for a fixed 1.5 s that a loaded machine could
    pass without the runner looking."""
    acks = tmp_path / "acks"
    acks.mkdir()
    script = ("import json, os, sys, time\n"
              f"for i, stage in enumerate({STAGES!r}):\n"
              "    json.dump({'stage': stage}, open(sys.argv[2], 'w'))\n"
              "    end = time.monotonic() + 120\n"
              f"    while not os.path.exists(os.path.join({str(acks)!r}, str(i))) "
              "and time.monotonic() < end:\n"
              "        time.sleep(0.02)\n"
              "json.dump({'stage': 'done', 'done': True}, open(sys.argv[2], 'w'))\n")
    seen: list[str] = []

    def progress(message: str) -> None:
        seen.append(message)
        stage = _stage_of(message)
        if stage in STAGES:
            (acks / str(STAGES.index(stage))).touch()

    [res] = run_children([{"device": "cpu"}], timeout=300, progress=progress,
                         command=(sys.executable, "-c", script))
    assert res.status == "ok"
    stages = [s for s in map(_stage_of, seen) if s is not None]
    assert stages == list(STAGES)
    assert seen[-1].startswith("smoke child on cpu finished in")
