"""Test-session settings shared by the whole suite.

Hypothesis's own wall-clock limits are off everywhere: its 200 ms deadline per example and its
``too_slow`` health check depend on the machine's load, which a test here must not (17 files of
hypothesis tests set no ``deadline=None`` of their own); runaway work is bounded by the tests'
CPU-time limits instead (tests/cputime.py).

Under CI (``CI`` set, as .ci/run's environment has it) hypothesis runs derandomized: the same
examples every run, so CI is reproducible and a rare example found by chance cannot turn a
landing red. Locally it stays random, which is where new counter-examples are found.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("fp8d", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("fp8d"), derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "fp8d")
