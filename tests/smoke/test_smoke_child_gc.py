"""The smoke child imports with the cyclic garbage collector paused, then freezes what the imports
made and runs its checks with the collector on (child.py ``_imports``; issue 26: the imports are
most of the child's seconds). Real torch, on the CPU."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from preflight.smoke import runner  # noqa: E402


def test_the_checks_run_with_the_collector_on_and_the_imports_frozen() -> None:
    run = runner.run_children([{"device": "cpu", "gemm_only": True, "speed": False}], 120)[0]
    assert run.status == "ok", run.error
    gc_state = run.doc["gc"]
    assert gc_state["enabled"] is True   # the checks see the collector as a training job does
    # torch's import alone leaves tens of thousands of objects; all of them are frozen
    assert gc_state["frozen"] > 10_000
    assert run.doc["scaled_mm"]["engaged"] is True
