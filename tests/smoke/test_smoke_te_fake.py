"""Transformer Engine through fakes of its documented API (no TE on CPU machines or the H200):
a correct fake and one with the stale-backward-scale bug of TE issue 1190; 1.x and 2.x APIs."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from preflight.smoke import SmokeOptions, run  # noqa: E402


@pytest.mark.parametrize("api", [1, 2])
def test_drift_detector_tells_fixed_from_buggy(fake_te_path, api: int) -> None:
    fake_te_path(bug=False, api=api)
    import transformer_engine.pytorch as te_pt

    from preflight.smoke import te_check

    ok = te_check.drift(te_pt, "cpu")
    assert ok["ckpt_scale_drift"] is False and ok["ckpt_bwd_scales_updated"] is True
    assert ok["ckpt_agree_sqnr_db"] == 999.0                       # bit-equal runs

    fake_te_path(bug=True, api=api)
    import transformer_engine.pytorch as te_pt

    bad = te_check.drift(te_pt, "cpu")
    assert bad["ckpt_scale_drift"] is True and bad["ckpt_bwd_scales_updated"] is False
    assert bad["ckpt_bwd_scale"][0] == 1.0
    # with 1e-6 gradients the stale unit scale flushes them to zero in E5M2
    assert bad["ckpt_xgrad_sqnr_db"] < 10 <= ok["ckpt_xgrad_sqnr_db"]


def test_full_te_check_on_a_correct_fake(fake_te_path) -> None:
    fake_te_path(bug=False, api=2)
    from preflight.smoke import te_check

    ok = te_check.run_all("cpu", None)
    assert ok["api"] == "autocast" and ok["available"] is True
    assert ok["engaged"] and ok["accurate"] and ok["fwd_scales_updated"] and ok["train_ok"]
    assert 27.5 < ok["sqnr_db"] < 29.5 and 23.5 < ok["xgrad_sqnr_db"] < 25.5
    assert set(ok["recipe_sqnr_db"]) == {"delayed", "current"}
    assert ok["converted"] == ["fc1", "fc2"] and ok["unconverted"][0].startswith("head:")
    assert 0.96 < ok["gemm_flops_share"] < 0.97          # fc1 + fc2 of fc1, fc2 and the head
    assert ok["ckpt_scale_drift"] is False


def test_recipes_by_version(fake_te_path) -> None:
    fake_te_path(bug=False, api=2)
    from preflight.smoke import te_check

    assert set(te_check.extra_recipes((9, 0))) == {"current"}
    assert set(te_check.extra_recipes((10, 0))) == {"current", "mxfp8"}


def test_te_silently_in_bf16_is_caught_by_the_engaged_check(fake_te_path) -> None:
    fake_te_path(bug=False, api=2, bypass=True)
    from preflight.smoke import te_check

    res = te_check.run_all("cpu", None)
    assert res["engaged"] is False
    assert res["sqnr_db"] > 40
    assert res["fwd_scales_updated"] is False


def test_buggy_te_in_the_child_becomes_drift_facts(fake_te) -> None:
    env = fake_te(bug=True, api=1)
    out = run({}, SmokeOptions(device="cpu", backends=("te",), env=env, timeout=90))
    f = out.facts
    assert f["smoke.status"] == "failed", f.get("smoke.error")
    assert f["smoke.backends"] == ["te"]
    assert f["smoke.te.version"] == "1.11.0" and f["smoke.te.api"] == "fp8_autocast"
    assert f["smoke.te.ckpt_scale_drift"] is True
    assert f["smoke.te.ckpt_bwd_scales_updated"] is False
    assert "ckpt_agree_sqnr_db" in out.details["backends"]["te"]
