"""The cache filler lowers its session's autogroup only when the session is its own alone
(redteam2, issue 21: "a child given a process group it does not expect"). Leading the session
was the test, so a filler exec'd into a session with another process in it (``setsid sh -c
'job & exec filler'``) set that process's autogroup to nice 19 too. Checked on the real kernel
through ``/proc``; no timing involved (the other process exists before the filler starts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/autogroup") or shutil.which("setsid") is None
    or shutil.which("sleep") is None, reason="Linux autogroups and setsid(1)")

CODE = ("import json, os; from preflight.smoke.cache import lowest_priority; "
        "done = lowest_priority(); other = int(os.environ['OTHER']); "
        "nice = open(f'/proc/{other}/autogroup').read(); os.kill(other, 9); "
        "print(json.dumps([done, nice]))")


def test_a_filler_exec_d_into_a_shared_session_leaves_its_group_alone() -> None:
    # the shell starts `sleep` in the new session, then becomes the filler (same pid, leader)
    script = f'sleep 60 </dev/null >/dev/null 2>&1 & OTHER=$! exec "{sys.executable}" -c "$CODE"'
    proc = subprocess.run(["setsid", "-w", "sh", "-c", script], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, env={**os.environ, "CODE": CODE})
    assert proc.returncode == 0 and proc.stdout.strip(), (proc.returncode, proc.stderr[-2000:])
    done, other_nice = json.loads(proc.stdout)
    assert "nice 19" in done                      # itself: still lowest
    assert "autogroup nice 19" not in done
    # "" for the default autogroup (a container's first session: sched/autogroup.c prints nothing)
    assert other_nice.split()[-1:] in ([], ["0"])


def test_a_filler_alone_in_its_session_still_lowers_it() -> None:
    code = ("import json, os; from preflight.smoke.cache import lowest_priority; "
            "print(json.dumps(lowest_priority()))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, start_new_session=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "autogroup nice 19" in json.loads(proc.stdout)
