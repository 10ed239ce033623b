"""Test-session settings shared by the whole suite.

Under CI (``CI`` set, as .ci/run's environment has it) hypothesis runs derandomized: the same
examples every run, so CI is reproducible and a rare example found by chance cannot turn a
landing red. Locally it stays random, which is where new counter-examples are found.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
