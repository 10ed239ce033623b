"""benchmarks/trial_validate.py's scoring of a trial's verdict against real training (the GPU
runs are on the device; here: the rule it scores by, over the validation's own numbers)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from preflight.speedup import HOST_BOUND_ERROR, TRIAL_ERROR

REPO = Path(__file__).resolve().parents[2]


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("trial_validate",
                                                  REPO / "benchmarks" / "trial_validate.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("trial_validate", mod)
    spec.loader.exec_module(mod)
    return mod


def test_a_verdict_is_scored_by_the_error_the_trial_stated() -> None:
    agrees = _module()._agrees
    # H100, 2026-11-28: trial 0.967x, real 1.0475x; host-limited: at the line, range holds it
    assert agrees(0.967, 1.0475, HOST_BOUND_ERROR)
    # with +-5% its range (0.92x-1.02x) reaches 1.0x: "will not pay", as the real 1.0475x says
    assert agrees(0.967, 1.0475, TRIAL_ERROR)
    assert not agrees(0.94, 1.0475, TRIAL_ERROR)      # "slower" vs a real 1.0475x
    # H200 host 1, 2026-11-27: trial 0.881x (0.77x-1.04x: "will not pay"), real 1.012x
    assert agrees(0.881, 1.012, HOST_BOUND_ERROR)
    assert not agrees(0.881, 1.012, TRIAL_ERROR)      # "slower" vs a real 1.012x
    # Qwen2.5-7B rowwise (H200): at the line with +-5%, the real 1.040x inside
    assert agrees(1.051, 1.040, TRIAL_ERROR)
    assert not agrees(1.30, 1.02, TRIAL_ERROR)
    # "will not pay" covers a real run that is slower
    assert agrees(0.98, 0.95, TRIAL_ERROR)
    assert not agrees(0.90, 1.02, TRIAL_ERROR)
