"""The smoke verdict rows (preflight/registry/smoke_verdict.py) and ``fp8-doctor smoke``'s exit
codes: each row judges the measured value against the smoke step's own thresholds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.commands.smoke import EXIT_CRASH, EXIT_FAILED, EXIT_OK, exit_code
from preflight.registry.smoke_verdict import (
    FAIL,
    NOT_MEASURED,
    NOTE,
    PASS,
    smoke_checks,
    smoke_headline,
)
from preflight.smoke import numerics as nm


def _row(facts: dict, name_part: str, group: str | None = None):
    return next(c for c in smoke_checks(facts) if name_part in c.name
                and (group is None or c.group == group))


@given(st.floats(min_value=-20, max_value=120, allow_nan=False))
def test_forward_sqnr_passes_exactly_inside_the_fp8_band(db: float) -> None:
    row = _row({"smoke.te.sqnr_db": db}, "forward SQNR")
    inside = nm.FWD_SQNR_MIN_DB <= db <= nm.BYPASS_SQNR_DB
    assert row.verdict == (PASS if inside else FAIL)
    assert row.threshold == "20-40 dB" and row.measured.endswith(" dB")
    assert ("bypassed" in row.name) == (db > nm.BYPASS_SQNR_DB)


@given(st.floats(min_value=0, max_value=100, allow_nan=False))
def test_gradient_and_kernel_rows_are_floors(db: float) -> None:
    facts = {"smoke.torchao.xgrad_sqnr_db": db, "smoke.scaled_mm.kernel_sqnr_db": db}
    assert _row(facts, "input-gradient").verdict == (PASS if db >= nm.GRAD_SQNR_MIN_DB else FAIL)
    assert _row(facts, "kernel").verdict == (PASS if db >= nm.KERNEL_SQNR_MIN_DB else FAIL)


def test_nan_sqnr_is_a_failure_not_a_pass() -> None:
    # The child stores a NaN / Inf SQNR as null (numerics.finite_or_none).
    row = _row({"smoke.scaled_mm.sqnr_db": None}, "forward SQNR")
    assert row.verdict == FAIL and row.measured == "NaN / Inf"


def test_boolean_checks_use_the_childs_verdict_and_drift_must_be_false() -> None:
    facts = {"smoke.te.ckpt_scale_drift": True, "smoke.te.fwd_scales_updated": True}
    assert _row(facts, "scale drift").verdict == FAIL
    assert _row(facts, "forward scales").verdict == PASS
    assert _row({"smoke.te.ckpt_scale_drift": False}, "scale drift").verdict == PASS


@pytest.mark.parametrize("speedup,verdict", [(0.73, FAIL), (1.0, PASS), (1.77, PASS)])
def test_speed_rows(speedup: float, verdict: str) -> None:
    row = _row({"smoke.speed.job_speedup_min": speedup}, "slowest job GEMM")
    assert row.verdict == verdict and row.threshold == f">= {nm.JOB_SPEEDUP_MIN:.2f}×"


def test_speed_not_measured_and_expected_unconverted_layers_are_not_judged() -> None:
    facts = {"smoke.ran": True, "smoke.status": "ok", "smoke.speed.skipped": "CUDA only",
             "smoke.torchao.unconverted_count": 1, "smoke.torchao.finite": True}
    rows = smoke_checks(facts)
    assert {c.verdict for c in rows} == {NOT_MEASURED, NOTE, PASS}
    assert smoke_headline(facts) == "ok (1 of 1 checks passed)"


def test_gemm_work_share_is_shown_not_judged() -> None:
    facts = {"smoke.ran": True, "smoke.status": "ok", "smoke.te.finite": True,
             "smoke.te.gemm_flops_share": 0.9624}
    row = _row(facts, "GEMM work in FP8")
    assert row.verdict == NOTE and row.measured == "96.2%" and row.group == "te"
    assert smoke_headline(facts) == "ok (1 of 1 checks passed)"


def test_a_backend_error_is_a_failed_row() -> None:
    row = _row({"smoke.te.error": "ImportError: libcudnn.so.9\nmore"}, "without an exception")
    assert row.verdict == FAIL and "\n" not in row.measured


@pytest.mark.parametrize("facts,strict,code", [
    ({"smoke.ran": True, "smoke.status": "ok"}, False, EXIT_OK),
    ({"smoke.ran": True, "smoke.status": "failed"}, False, EXIT_FAILED),
    ({"smoke.ran": True, "smoke.status": "crash"}, False, EXIT_CRASH),
    ({"smoke.ran": True, "smoke.status": "timeout"}, False, EXIT_CRASH),
    ({"smoke.ran": False, "smoke.skip_reason": "skipped: no GPU"}, False, EXIT_OK),
    ({"smoke.ran": False, "smoke.skip_reason": "skipped: no GPU"}, True, EXIT_FAILED),
    ({"smoke.ran": True, "smoke.status": "ok"}, True, EXIT_OK),
])
def test_smoke_exit_codes(facts: dict, strict: bool, code: int) -> None:
    assert exit_code(facts, strict=strict) == code


def test_rows_never_claim_a_pass_without_a_number_or_a_boolean() -> None:
    rows = smoke_checks({"smoke.scaled_mm.sqnr_db": "n/a", "smoke.scaled_mm.identity_ok": "yes"})
    assert [c.verdict for c in rows] == [NOT_MEASURED]
