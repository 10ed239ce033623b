"""Real torch on the CPU: the raw _scaled_mm checks, and the negative controls each check is for
(a backend that silently returns BF16, scales applied the wrong way)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from preflight.smoke import numerics as nm  # noqa: E402
from preflight.smoke import scaled_mm as smm  # noqa: E402


def test_identity_and_scale_pass_on_the_real_kernel() -> None:
    assert smm.check_identity("cpu") is True
    assert smm.check_scale("cpu") is True
    assert smm.api_kind("cpu") in ("tensor", "tuple")


def _wrong_way(a8, b8, sa, sb, dt):  # noqa: ANN001, ANN202 - divides by the scales
    return smm.scaled_mm(a8, b8, 1.0 / sa, 1.0 / sb, dt)


def test_scale_applied_the_wrong_way_is_caught_by_the_scale_check() -> None:
    assert smm.check_scale("cpu", mm=_wrong_way) is False
    # the identity check uses unit scales: it cannot see this bug, which is why both exist
    assert smm.check_identity("cpu", mm=_wrong_way) is True


def test_transposed_layout_bug_is_caught_by_the_identity_check() -> None:
    def swapped(a8, b8, sa, sb, dt):  # noqa: ANN001, ANN202 - returns (A^T) @ B
        return smm.scaled_mm(a8.t().contiguous(), b8, sa, sb, dt)
    assert smm.check_identity("cpu", mm=swapped) is False


def test_fp8_fidelity_is_inside_the_band() -> None:
    res = smm.check_fidelity("cpu")
    assert nm.FWD_SQNR_MIN_DB <= res["sqnr_db"] <= nm.BYPASS_SQNR_DB
    assert 27.5 < res["sqnr_db"] < 29.5          # E4M3 x E4M3 ~ 28.5 dB (H200 and CPU)
    assert res["kernel_sqnr_db"] >= nm.KERNEL_SQNR_MIN_DB
    assert res["engaged"] and res["accurate"] and res["finite"]


def test_silent_bf16_backend_is_caught_by_the_engaged_check() -> None:
    res = smm.check_fidelity("cpu", gemm=lambda a, b: a @ b.t())
    assert res["sqnr_db"] > nm.BYPASS_SQNR_DB
    assert res["engaged"] is False and res["accurate"] is True


def test_nan_is_caught() -> None:
    res = smm.check_fidelity("cpu", gemm=lambda a, b: (a @ b.t()) * float("nan"))
    assert res["finite"] is False and res["engaged"] is False and res["accurate"] is False


def test_broken_scale_is_caught_by_the_accuracy_floor() -> None:
    def no_dequant(a, b):  # noqa: ANN001, ANN202 - forgets to apply the scales
        a8, _ = smm.quantize(a, torch.float8_e4m3fn)
        b8, _ = smm.quantize(b, torch.float8_e4m3fn)
        one = torch.ones((), dtype=torch.float32)
        return smm.scaled_mm(a8, b8.t(), one, one, torch.bfloat16)
    res = smm.check_fidelity("cpu", gemm=no_dequant)
    assert res["accurate"] is False


def test_e5m2_x_e5m2_is_accepted_on_cpu() -> None:
    # Documents why e5m2_refused is only checked on CUDA: the CPU kernel multiplies them.
    assert smm.check_e5m2_refused("cpu") is False


def test_sqnr_edge_cases() -> None:
    a = torch.ones(4)
    assert nm.sqnr_db(a, a) == math.inf
    assert math.isnan(nm.sqnr_db(a, a * float("inf")))
    assert nm.finite_or_none(math.inf) == 999.0 and nm.finite_or_none(math.nan) is None
    assert abs(nm.sqnr_db(a, a * 1.1) - 20.0) < 1e-4  # float32 1.1


@pytest.mark.parametrize("claims_converted", [False, True])
def test_torchao_that_silently_stays_bf16_is_caught(monkeypatch: pytest.MonkeyPatch,
                                                     claims_converted: bool) -> None:
    """The mission's first failure: an "FP8" run whose layers compute in BF16. Whether the
    conversion reports nothing converted, or reports a layer as converted while it still runs a
    BF16 GEMM, the torchao layer check must not call FP8 engaged (real torch and torchao;
    only our own conversion step is replaced)."""
    pytest.importorskip("torchao")
    from preflight.smoke import torchao_check as tc

    config, _ = tc.make_config(emulate=True)
    names = ["0"] if claims_converted else []
    monkeypatch.setattr(tc, "convert", lambda model, cfg: (model, names, []))
    res = tc.layer_numerics("cpu", config)
    assert res["sqnr_db"] > nm.BYPASS_SQNR_DB     # BF16 fidelity, not the FP8 band
    assert res["engaged"] is False
    assert res["finite"] is True
