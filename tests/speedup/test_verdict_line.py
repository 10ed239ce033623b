"""The verdict line near the break-even: a trial result within its measured error of NOT_WORTH is
hedged ("at the line") instead of picking a side; the range it states must contain the truth the
validation measured (docs/gpu-results.md, 2026-11-27: Qwen2.5-7B rowwise, trial 1.051x, real
1.040x)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from preflight.speedup import NOT_WORTH, TRIAL_ERROR, at_the_line, pays, speedup_range, verdict_for


def test_the_qwen_rowwise_cell_is_at_the_line_and_its_range_holds_the_real_run() -> None:
    assert at_the_line(1.051, TRIAL_ERROR)
    lo, hi = speedup_range(1.051, TRIAL_ERROR)
    assert lo <= 1.040 <= hi
    line = verdict_for(1.051, error=TRIAL_ERROR)
    assert line.startswith("FP8 is at the line") and "will not pay reliably" in line


def test_clear_results_keep_their_side() -> None:
    assert verdict_for(1.25, error=TRIAL_ERROR).startswith("FP8 should pay")
    assert verdict_for(0.93, error=TRIAL_ERROR).startswith("FP8 will be slower")
    assert verdict_for(1.051).startswith("FP8 should pay")      # no error given: as before
    assert verdict_for(1.04).startswith("FP8 will not pay")


@given(st.floats(min_value=0.5, max_value=3.0), st.floats(min_value=0.001, max_value=0.3))
def test_at_the_line_means_the_range_straddles_the_break_even(step: float, error: float) -> None:
    lo, hi = speedup_range(step, error)
    assert lo < step < hi
    assert at_the_line(step, error) == (step >= 1.0 and lo <= NOT_WORTH <= hi)
    line = verdict_for(step, error=error)
    assert pays(step, error) == line.startswith("FP8 should pay")   # the exit code follows it
    if at_the_line(step, error):
        assert line.startswith("FP8 is at the line")
    elif step < 1.0:
        assert line.startswith("FP8 will be slower")
    elif step < NOT_WORTH:
        assert line.startswith("FP8 will not pay")
    else:
        assert line.startswith("FP8 should pay")
