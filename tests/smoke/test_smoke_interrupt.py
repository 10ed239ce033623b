"""Ctrl-C during the smoke step kills the child and removes its work folder (issue 13, item 7).

A real SIGINT is sent to this process while a real child sleeps: once the child has said it runs
(its pid file), not after a fixed second that a loaded machine may spend starting it."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from preflight.smoke.runner import run_children


def test_interrupt_removes_the_work_folder_and_kills_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # where mkdtemp puts the folder
    pidfile = tmp_path.parent / f"{tmp_path.name}.pid"
    child = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
             "time.sleep(600)")
    stop = threading.Event()

    def interrupt_once_running() -> None:
        end = time.monotonic() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < end:
            if stop.wait(0.02):
                return
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt_once_running, daemon=True)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_children([{"device": "cpu"}], timeout=300.0,
                         command=(sys.executable, "-c", child, str(pidfile)))
    finally:
        stop.set()
        sender.join()
    assert list(tmp_path.iterdir()) == []
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):   # killed and reaped
        os.kill(pid, 0)
