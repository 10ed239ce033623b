"""The cache filler's CPU priority: the lowest on every scale the kernel has (nice, the
scheduling class, the session's autogroup), each best effort (smoke/cache.py runs it first)."""

from __future__ import annotations

import os
import sys
import time

from preflight.base.digits import ascii_digits

# Without CAP_SYS_ADMIN (an ordinary user; root in a Docker container) the kernel takes one
# autogroup nice write per 100 ms on the whole machine and refuses the others with EAGAIN
# (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice: `if (!capable(CAP_SYS_ADMIN) &&
# time_before(jiffies, next)) return -EAGAIN;`): the fillers of ranks starting together on one
# node stayed at full weight but one. The write is tried again after the window, a few times.
AUTOGROUP_WAIT_S = 0.11
AUTOGROUP_TRIES = 5


def lowest_priority() -> list[str]:
    """Make this process (the filler) yield the CPU to every other: nice 19, ``SCHED_IDLE``,
    and, where the kernel groups processes by session (``CONFIG_SCHED_AUTOGROUP``: children
    start in a session of their own, proc.start), the session's group too, or nice alone would
    weigh nothing against the checks' sessions. Each step is best effort; returns those taken."""
    done: list[str] = []
    try:
        os.nice(19 - os.nice(0))
        done.append("nice 19")
    except (AttributeError, OSError):
        pass
    if sys.platform == "linux":     # SCHED_IDLE is Linux's (and mypy checks per platform)
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            done.append("SCHED_IDLE")
        except (AttributeError, OSError):
            pass
    try:
        # Only as the leader of a session of its own: the group is the session's, and lowering
        # the caller's session would slow the user's shell (the filler starts in a new one).
        # Leading it is not enough: a session it was exec'd into with others in it (`setsid sh
        # -c 'job & exec filler'`) would slow them too (redteam2).
        if os.getsid(0) == os.getpid() and _alone_in_session():
            _autogroup_nice(19)
            done.append("autogroup nice 19")
    except (AttributeError, OSError):
        pass
    return done


def _alone_in_session() -> bool:
    """Whether no other process is in this process's session (``/proc/<pid>/stat`` field 6);
    False where that cannot be read."""
    sid, me = os.getsid(0), os.getpid()
    try:
        pids = [int(n) for n in os.listdir("/proc") if ascii_digits(n)]
    except OSError:
        return False
    for pid in pids:
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read(4096)
        except OSError:
            continue            # gone, or not ours to read
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3 and fields[3] == str(sid).encode():
            return False
    return True


def _autogroup_nice(nice: int) -> None:
    """Set this session's autogroup nice, again after the kernel's rate-limit window (above)."""
    for attempt in range(AUTOGROUP_TRIES):
        try:
            with open("/proc/self/autogroup", "w", encoding="ascii") as fh:
                fh.write(str(nice))
            return
        except BlockingIOError:         # EAGAIN: another write within the last 100 ms
            if attempt == AUTOGROUP_TRIES - 1:
                raise
            time.sleep(AUTOGROUP_WAIT_S)
