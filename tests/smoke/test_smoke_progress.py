"""Progress display (preflight/smoke/progress.py): plain lines off a terminal, a rich status on
one; always on the stream given (stderr), never raising when that stream is gone."""

from __future__ import annotations

import io
import sys

from preflight.smoke.progress import progress_display
from preflight.smoke.runner import run_children


def test_plain_lines_off_a_terminal() -> None:
    err = io.StringIO()
    with progress_display("fp8-doctor smoke", stream=err) as progress:
        progress("smoke child on cuda:0: torchao (3 s)")
        progress("smoke child on cuda:0 finished in 9.1 s")
    assert err.getvalue().splitlines() == ["smoke child on cuda:0: torchao (3 s)",
                                           "smoke child on cuda:0 finished in 9.1 s"]


def test_live_status_keeps_each_message_and_reads_no_markup() -> None:
    err = io.StringIO()
    with progress_display("fp8-doctor smoke", stream=err, live=True) as progress:
        progress("stage [bold]te[/bold]")
    assert "stage [bold]te[/bold]" in err.getvalue()


def test_a_closed_stream_does_not_fail_the_run() -> None:
    err = io.StringIO()
    err.close()
    with progress_display("x", stream=err) as progress:
        progress("still fine")


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
