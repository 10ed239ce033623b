"""The verdict line near the break-even: a trial result within its measured error of NOT_WORTH is
hedged ("at the line") instead of picking a side; the range it states must contain the truth the
validation measured (docs/gpu-results.md, 2026-11-27: Qwen2.5-7B rowwise, trial 1.051x, real
1.040x)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from preflight.speedup import (
    HOST_BOUND_ERROR,
    NOT_WORTH,
    TRIAL_ERROR,
    at_the_line,
    pays,
    speedup_range,
    verdict_for,
    verdict_kind,
)


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
    assert at_the_line(step, error) == (lo <= NOT_WORTH <= hi)
    line = verdict_for(step, error=error)
    assert pays(step, error) == line.startswith("FP8 should pay")   # the exit code follows it
    kind = verdict_kind(step, error)
    if at_the_line(step, error):
        assert kind == "at the line" and line.startswith("FP8 is at the line")
    elif hi < 1.0:
        assert kind == "slower" and line.startswith("FP8 will be slower")
    elif step < NOT_WORTH:
        assert kind == "not worth" and line.startswith("FP8 will not pay")
    else:
        assert kind == "pays" and line.startswith("FP8 should pay")


# Host-limited trials of the 1B TE eager cell against the real runs' median (trial, real):
# H200 host 1 (2026-11-27: three runs), H100 (2026-11-27, 2026-11-28).
HOST_LIMITED = [(1.099, 1.024), (1.067, 0.997), (1.110, 0.983), (0.881, 1.012), (1.055, 0.922),
                (0.967, 1.0475)]


def test_the_host_limited_range_holds_every_real_run_measured() -> None:
    for step, real in HOST_LIMITED:
        lo, hi = speedup_range(step, HOST_BOUND_ERROR)
        assert lo <= real <= hi, (step, real)
        assert not pays(step, HOST_BOUND_ERROR)
        # at the line, or (0.881x: 0.77x-1.04x) "will not pay", as the real 1.012x says
        assert verdict_kind(step, HOST_BOUND_ERROR) in ("at the line", "not worth")
        assert verdict_kind(step, HOST_BOUND_ERROR) == "at the line" or \
            verdict_kind(real) == "not worth"


def test_a_host_limited_slower_result_is_at_the_line_and_says_why() -> None:
    line = verdict_for(0.967, error=HOST_BOUND_ERROR, why="a host-limited FP8 step's")
    assert line.startswith("FP8 is at the line here: about 0.97x")
    assert "a host-limited FP8 step's +-15% is anywhere from 0.84x to 1.14x" in line
    # with the trial's usual error its range (0.92x-1.02x) reaches 1.0x: "will not pay"
    line = verdict_for(0.967, error=TRIAL_ERROR)
    assert line.startswith("FP8 will not pay at these shapes (step 0.97x, anywhere from 0.92x")
    assert verdict_for(0.90, error=TRIAL_ERROR).startswith("FP8 will be slower")
