"""The child-process runner with real children: a hang, a crash, an exception, a CUDA error."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from preflight.smoke import SmokeOptions, run
from preflight.smoke.child import Results, _run_stage
from preflight.smoke.runner import run_children

CHILDREN = Path(__file__).parent / "children"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); read its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_hang_is_killed_with_its_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    # The child must start, write its stage and start the grandchild (its pid file last) before
    # the timeout: 10 s first; where a loaded machine did not get that far in it, once more with
    # 60 s, so the load does not decide the outcome. The bounds stay far under its 300 s sleep.
    for timeout in (10, 60):
        t0 = time.monotonic()
        [res] = run_children([{"device": "cpu", "pidfile": str(pidfile)}], timeout=timeout,
                             command=(sys.executable, str(CHILDREN / "hang.py")))
        if pidfile.exists():
            break
    assert time.monotonic() - t0 < timeout + 50
    assert res.status == "timeout"
    assert f"no answer within {timeout} s" in res.error and "speed" in res.error
    assert res.doc["scaled_mm"]["identity_ok"] is True   # finished stages survive
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild)


def test_hang_becomes_timeout_facts() -> None:
    out = run({}, SmokeOptions(device="cpu", timeout=2.0,
                               command=(sys.executable, "-c", "import time; time.sleep(60)")))
    assert out.facts["smoke.status"] == "timeout"
    assert out.facts["smoke.stage"] == "start"
    assert out.details["status"] == "timeout"


def test_segfault_becomes_crash_with_stage_and_partial_results() -> None:
    out = run({}, SmokeOptions(device="cpu", timeout=30,
                               command=(sys.executable, str(CHILDREN / "crash.py"))))
    f = out.facts
    assert f["smoke.status"] == "crash"
    assert "SIGSEGV" in f["smoke.error"] and "torchao" in f["smoke.error"]
    assert f["smoke.stage"] == "torchao"
    assert f["smoke.scaled_mm.identity_ok"] is True
    assert "about to crash" in out.details["stderr_tail"]


def test_uncaught_exception_becomes_crash_with_its_message() -> None:
    out = run({}, SmokeOptions(device="cpu", timeout=30,
                               command=(sys.executable, str(CHILDREN / "raises.py"))))
    assert out.facts["smoke.status"] == "crash"
    assert "exited with code 1" in out.facts["smoke.error"]
    assert "CUDA driver version is insufficient" in out.facts["smoke.error"]


def test_unstartable_child_never_raises() -> None:
    out = run({}, SmokeOptions(device="cpu", command=("/nonexistent/python",)))
    assert out.facts["smoke.status"] == "crash"
    assert "could not start" in out.facts["smoke.error"]


def test_cuda_error_in_a_stage_stops_the_run(tmp_path: Path) -> None:
    res = Results(str(tmp_path / "r.json"))
    assert _run_stage(res, "scaled_mm", lambda: {"identity_ok": True}) is True

    def boom() -> dict:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    assert _run_stage(res, "torchao", boom) is False
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["fatal"]["kind"] == "cuda_error" and doc["fatal"]["stage"] == "torchao"
    # an ordinary exception is recorded and the run goes on
    assert _run_stage(res, "te", lambda: 1 / 0) is True
    assert "ZeroDivisionError" in res.doc["te"]["error"]


# Each child announces itself and waits until all have (120 s at most), then ends well: children
# run one after another would leave the first alone until its timeout. An event, not a clock
# ("n x 2 s timeouts in < 10 s" could not tell n = 3 in turn from at once, and a loaded machine
# could break it).
_TOGETHER = ("import json, os, sys, time\nreq = json.load(open(sys.argv[1]))\n"
             "folder, n = req['folder'], req['n']\n"
             "open(os.path.join(folder, str(os.getpid())), 'w').close()\n"
             "end = time.monotonic() + 120\n"
             "while len(os.listdir(folder)) < n and time.monotonic() < end:\n"
             "    time.sleep(0.02)\n"
             "json.dump({'stage': 'done', 'done': len(os.listdir(folder)) >= n}, "
             "open(sys.argv[2], 'w'))\n")


@pytest.mark.parametrize("n", [3])
def test_children_run_concurrently(tmp_path: Path, n: int) -> None:
    runs = run_children([{"device": "cpu", "folder": str(tmp_path), "n": n}] * n, timeout=60,
                        command=(sys.executable, "-c", _TOGETHER))
    assert [r.status for r in runs] == ["ok"] * n, [r.error for r in runs]


def test_children_each_end_at_their_own_timeout() -> None:
    t0 = time.monotonic()
    runs = run_children([{"device": "cpu"}] * 3, timeout=2.0,
                        command=(sys.executable, "-c", "import time; time.sleep(600)"))
    assert [r.status for r in runs] == ["timeout"] * 3
    assert time.monotonic() - t0 < 60     # far under the children's 600 s sleep


def test_a_result_that_is_not_an_object_is_a_crash_not_an_exception() -> None:
    [res] = run_children([{"device": "cpu"}], timeout=30, command=(
        sys.executable, "-c", "import sys; open(sys.argv[2], 'w').write('[1, 2]')"))
    assert res.status == "crash" and res.doc == {}
    assert "during: start" in res.error


def test_a_flooding_child_writes_nothing_and_ends_at_its_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 13 item 2: a child flooding stderr wrote 4.3 GB to the temp folder in 10 s. Its
    # output now goes through a pipe of which only the tail is kept; the flood ends with the
    # timeout, like a hang, naming the stage it was in.
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    # The child must start and write its stage before the timeout (the flood itself never
    # ends): 10 s first; where a loaded machine did not get that far, once more with 60 s.
    for timeout in (10, 60):
        t0 = time.monotonic()
        [res] = run_children([{"device": "cpu"}], timeout=timeout,
                             command=(sys.executable, str(CHILDREN / "flood.py")))
        if "W flood" in res.stderr_tail:   # it wrote its stage first
            break
    assert time.monotonic() - t0 < timeout + 50
    assert res.status == "timeout" and "scaled_mm" in res.error
    assert "W flood" in res.stderr_tail and len(res.stderr_tail) <= 4000
    leftovers = list(tmp_path.rglob("*"))
    assert leftovers == [], leftovers  # nothing written to (or left in) the temp folder


def test_a_verbose_child_that_finishes_is_ok_not_failed_for_its_output(tmp_path: Path) -> None:
    # 20 MiB of logs (TORCH_LOGS=+dynamo is this chatty) and then a result: no false crash.
    code = ("import json, sys\nfor _ in range(320): sys.stderr.write('I log ' * 11000)\n"
            "json.dump({'stage': 'done', 'done': True, 'device': 'cpu'}, open(sys.argv[2], 'w'))\n"
            "print('last line')\n")
    script = tmp_path / "verbose.py"
    script.write_text(code)
    [res] = run_children([{"device": "cpu"}], timeout=60.0, command=(sys.executable, str(script)))
    assert res.status == "ok", res.error
    assert res.stderr_tail.rstrip().endswith("last line")


def test_the_child_leaves_without_the_interpreters_teardown(tmp_path: Path) -> None:
    """Once its result is written the smoke child ends with os._exit: the teardown after torch
    was imported (0.6-1.2 s on the dev box, benchmarks/child_exit.py) decides nothing. An atexit
    hook of something it imported (here a sitecustomize on PYTHONPATH) therefore never runs;
    the result is complete all the same."""
    site = tmp_path / "site"
    site.mkdir()
    mark = tmp_path / "teardown-ran"
    (site / "sitecustomize.py").write_text(
        f"import atexit\natexit.register(lambda: open({str(mark)!r}, 'w').close())\n")
    old = os.environ.get("PYTHONPATH", "")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(site), old) if p)}
    out = run({}, SmokeOptions(device="cpu", backends=("scaled_mm",), timeout=120, speed=False,
                               env=env, cache=False))
    assert out.facts["smoke.status"] == "ok", out.facts
    assert out.facts["smoke.scaled_mm.identity_ok"] is True
    assert not mark.exists()
