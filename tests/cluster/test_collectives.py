"""collectives.run with real child processes: bad output, a hang with a grandchild."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hostenv import require_exec

from preflight.cluster import collectives
from preflight.cluster.launch import RankInfo

INFO = RankInfo(rank=0, world_size=1, local_rank=0, launcher="none", master_addr="127.0.0.1",
                master_port=1, run_id="test", hostname="host")


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize("printed", ["{not json", '{"status": "ok"', "{} trailing"])
def test_unreadable_child_output_is_a_failure_not_an_exception(printed: str) -> None:
    code = f"print({printed!r})"
    res = collectives.run(INFO, timeout_s=30, backend="gloo", argv=(sys.executable, "-c", code))
    assert res["status"] == "failed" and res["backend"] == "gloo"
    assert "unreadable result" in res["error"]


def test_good_child_output_is_the_result() -> None:
    code = "import json; print('noise'); print(json.dumps({'status': 'ok', 'backend': 'gloo'}))"
    res = collectives.run(INFO, timeout_s=30, backend="gloo", argv=(sys.executable, "-c", code))
    assert res["status"] == "ok" and res["seconds"] >= 0


def test_hang_is_a_timeout_and_kills_the_childs_children(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    require_exec(tmp_path)
    monkeypatch.setattr(collectives, "MARGIN_S", 0.0)
    pidfile = tmp_path / "grandchild.pid"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    script.chmod(0o755)
    try:
        # The script must write its pid file before the kill: 5 s first; where a loaded machine
        # did not start it in that time, once more with 60 s, so the load does not decide the
        # outcome. The bounds stay far under its 300 s sleep.
        for timeout in (5.0, 60.0):
            t0 = time.monotonic()
            res = collectives.run(INFO, timeout_s=timeout, backend="gloo", argv=(str(script),))
            if pidfile.exists():
                break
        assert time.monotonic() - t0 < timeout + 55
        assert res["status"] == "timeout" and "no result within" in res["error"]
        grandchild = int(pidfile.read_text())
        deadline = time.monotonic() + 30
        while _alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(grandchild)
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_crashed_child_is_one_line_and_its_traceback_is_the_detail() -> None:
    code = "def f():\n    raise RuntimeError('boom\\nsecond line')\nf()"
    res = collectives.run(INFO, timeout_s=30, backend="gloo", argv=(sys.executable, "-c", code))
    assert res["status"] == "failed"
    assert res["error"] == "child exited with 1: RuntimeError: boom"
    assert "Traceback" in res["detail"] and "File " in res["detail"]


def test_a_store_that_never_answers_is_one_line_from_the_real_child(
        free_port: Callable[[], int], monkeypatch: pytest.MonkeyPatch) -> None:
    # The real child, 2 ranks, nothing listening on the port: the exception it ends with is
    # summarized to its last line; the traceback stays in ``detail`` (logged, never reported).
    # The child's own 2 s store timeout ends it; the margin for its start (import torch) is
    # made generous, so a loaded machine cannot turn the failure into a timeout.
    monkeypatch.setattr(collectives, "MARGIN_S", 200.0)
    info = RankInfo(rank=1, world_size=2, local_rank=1, launcher="torchrun",
                    master_addr="127.0.0.1", master_port=free_port(), run_id="t", hostname="h")
    res = collectives.run(info, timeout_s=2, backend="gloo", mib=1)
    assert res["status"] == "failed", res
    assert "\n" not in res["error"] and "Traceback" not in res["error"]
    assert "^^^" not in res["error"] and "File " not in res["error"]
    assert "Error" in res["error"] and len(res["error"]) <= collectives.ERROR_CHARS
    assert "Traceback" in res.get("detail", "")


@pytest.mark.parametrize("stderr, line", [
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\n    y()\n    ^^^\n"
     "torch.distributed.DistNetworkError: timed out to (127.0.0.1, 29500).\n",
     "torch.distributed.DistNetworkError: timed out to (127.0.0.1, 29500)."),
    ("ValueError: bad\nextra context\n", "ValueError: bad"),
    ("just text\n\n  last words  \n", "last words"),
    ("", ""),
])
def test_summarize_error_keeps_the_exception_line(stderr: str, line: str) -> None:
    assert collectives.summarize_error(stderr) == line


def test_unstartable_child_is_a_failure(tmp_path: Path) -> None:
    res = collectives.run(INFO, timeout_s=5, backend="gloo", argv=(str(tmp_path / "nope"),))
    assert res["status"] == "failed" and "nope" in res["error"]
