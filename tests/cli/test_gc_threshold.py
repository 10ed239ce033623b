"""The collector stays out of a check's way (issue 26 item 4): the console script raises its
thresholds from its first line on, and the run's end does not collect the whole run's young
objects just before the process exits (``main()`` restored the default 700 on its way out, so
the next allocation did, 7-12 ms on the 2-core box). Counted with ``gc.callbacks`` in a child,
never timed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from preflight import _startup, cli

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """\
import gc, os, sys
runs = []
gc.callbacks.append(lambda phase, info: phase == "stop" and runs.append(info["generation"]))
from preflight.base import signals
real_finish = signals.finish
def finish(code):
    os.write(2, f"@@collections {len(runs)}\\n".encode())
    real_finish(code)
signals.finish = finish
sys.argv = ["fp8-doctor", "check", "--no-smoke", "--format", "json"]
from preflight._startup import entry
entry()
"""


def test_the_thresholds_are_one() -> None:
    assert _startup.GC_THRESHOLD == cli.GC_THRESHOLD


def test_a_check_run_barely_collects(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path)})
    assert res.returncode in (0, 1), res.stderr[-2000:]
    counts = [line.split()[1] for line in res.stderr.splitlines()
              if line.startswith("@@collections ")]
    assert counts, res.stderr[-2000:]
    # ~15 before: every ~700 objects during the imports, and once more at the end. The few
    # left are those of the interpreter's own start-up, before fp8-doctor's first line.
    assert int(counts[0]) <= 3, counts
