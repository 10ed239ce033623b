"""CPU time, for the tests that bound runaway work (a parser bomb, a quadratic scan, a flood).

A wall-clock bound depends on the machine's load: on a loaded 2-core CI box the same work waits
for a core and takes several times longer, and the test turns a landing red for nothing (the
guide: no test may depend on timing or machine load). The CPU time this process spent, with
the children it has waited for, does not grow with other processes' load, and runaway work
(seconds to minutes of CPU) still breaks the bound. A hang that burns no CPU (a blocked read of
a FIFO, a child that sleeps) is not caught by it: those tests keep a wall-clock bound set far
above the normal time and far below the hang's.

CPU time still stretches on a loaded box (shared caches, a slower clock): 2.3 s on a quiet box
was 5.1 s on a loaded 2-core CI box (session 43). Set each bound at least 8x the quiet-box time
and below the runaway's (which is minutes).
"""

from __future__ import annotations

import os


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and its reaped children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
