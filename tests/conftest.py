"""Test-session settings shared by the whole suite.

Hypothesis's own wall-clock limits are off everywhere: its 200 ms deadline per example and its
``too_slow`` health check depend on the machine's load, which a test here must not (17 files of
hypothesis tests set no ``deadline=None`` of their own); runaway work is bounded by the tests'
CPU-time limits instead (tests/cputime.py).

Under CI (``CI`` set, as .ci/run's environment has it) hypothesis runs derandomized: the same
examples every run, so CI is reproducible and a rare example found by chance cannot turn a
landing red. Locally it stays random, which is where new counter-examples are found.

The interrupt tests send Ctrl-C (SIGINT) to this process and to children: a suite started with
SIGINT ignored (``cmd &`` in a script without job control, some CI runners) passes the ignore on
to every child across exec, and Python then installs no KeyboardInterrupt handler at all, so
those tests failed (all 10 SIGINT cases in a run started that way) or skipped as "finished before
the signal". The session restores the interactive disposition first. A signal *blocked* in the
mask is passed on the same way (the mask survives fork and exec): started with SIGINT, SIGTERM
and SIGHUP blocked, the first interrupt test failed (the child finished its check, exit 1 for
130). The session unblocks them.

The colour and width of text output follow FORCE_COLOR, NO_COLOR and COLUMNS (and rich reads
LINES, TTY_COMPATIBLE, TTY_INTERACTIVE), which CI systems and shells often export: with
FORCE_COLOR=1 COLUMNS=60, 10 tests that read text reports failed. They are removed for the
session; the tests of those settings set them themselves.
"""

from __future__ import annotations

import os
import signal

from hypothesis import HealthCheck, settings

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)   # children: SIG_DFL after exec
if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
if hasattr(signal, "pthread_sigmask"):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
for _name in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_name, None)

settings.register_profile("fp8d", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("fp8d"), derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "fp8d")
