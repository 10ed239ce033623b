"""Ctrl-C during the smoke step kills the child and removes its work folder (issue 13, item 7).

A real SIGINT is sent to this process while the runner waits for a real child that sleeps: from
the runner's own wait loop (its progress report of the child's stage, in the main thread), so
the interrupt lands where the test means it to, on any machine. A timer (1 s) could fire before
the child was even started on a loaded machine, and a thread that waited for the child's pid
file could fire inside ``proc.start``, before the runner had the child to clean up: a library
process has no fp8-doctor signal handlers, so ``held()`` defers nothing there (the CLI's
handlers and ``finish()`` cover that window)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

import pytest

from preflight.smoke.runner import run_children


def test_interrupt_removes_the_work_folder_and_kills_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # where mkdtemp puts the folder
    pidfile = tmp_path.parent / f"{tmp_path.name}.pid"
    # argv: the pid file, then the runner's request and result files
    child = ("import json, os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
             "json.dump({'stage': 'asleep'}, open(sys.argv[3], 'w')); time.sleep(600)")
    said: list[str] = []

    def progress(message: str) -> None:
        said.append(message)
        if message.startswith("smoke child on cpu: asleep"):
            os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C, while the runner waits

    with pytest.raises(KeyboardInterrupt):
        run_children([{"device": "cpu"}], timeout=300.0, progress=progress,
                     command=(sys.executable, "-c", child, str(pidfile)))
    assert any(m.startswith("smoke child on cpu: asleep") for m in said), said
    assert list(tmp_path.iterdir()) == []
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):   # killed and reaped
        os.kill(pid, 0)
