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

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"),
                                reason="Linux autogroups")

CODE = ("import json, os; from preflight.smoke.cache import lowest_priority; "
        "done = lowest_priority(); other = int(os.environ['OTHER']); "
        "nice = open(f'/proc/{other}/autogroup').read(); os.kill(other, 9); "
        "print(json.dumps([done, nice]))")


@pytest.mark.skipif(shutil.which("setsid") is None or shutil.which("sleep") is None,
                    reason="needs setsid(1) and sleep(1)")
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


# Without CAP_SYS_ADMIN (an ordinary user, or root in a container, which Docker starts without
# it) the kernel takes one autogroup nice write per 100 ms on the whole machine and refuses the
# others with EAGAIN (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice: `if
# (!capable(CAP_SYS_ADMIN) && time_before(jiffies, next)) return -EAGAIN;`). Here the child takes
# that window itself just before the filler's write, as the filler of another rank on the node
# would; root drops CAP_SYS_ADMIN from its bounding set and exec's, so the exec'd child lacks it.
LIMITED = ("import ctypes, os, sys\n"
           "ctypes.CDLL(None, use_errno=True).prctl(24, 21, 0, 0, 0)  # PR_CAPBSET_DROP, SYS_ADMIN\n"
           "os.execv(sys.executable, [sys.executable, '-c', os.environ['CODE']])\n")
TAKES_THE_WINDOW = """\
import json, os, time
from preflight.smoke.cache import lowest_priority
status = open('/proc/self/status').read()
eff = int(status.split('CapEff:')[1].split()[0], 16)
for _ in range(100):        # another writer on the machine may hold the window: wait it out
    try:
        with open('/proc/self/autogroup', 'w') as fh:
            fh.write('10')
        break
    except BlockingIOError:
        time.sleep(0.11)
done = lowest_priority()    # within 100 ms of the write above
print(json.dumps([bool(eff >> 21 & 1), done, open('/proc/self/autogroup').read()]))
"""


def test_a_filler_right_after_another_autogroup_write_still_lowers_its_session() -> None:
    proc = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, start_new_session=True,
                          env={**os.environ, "CODE": TAKES_THE_WINDOW})
    assert proc.returncode == 0 and proc.stdout.strip(), (proc.returncode, proc.stderr[-2000:])
    sys_admin, done, group = json.loads(proc.stdout)
    if sys_admin:
        pytest.skip("the child kept CAP_SYS_ADMIN (no CAP_SETPCAP to drop it): no rate limit")
    assert "autogroup nice 19" in done, done
    assert group.split()[-1:] == ["19"]
