"""The TE smoke path on real Transformer Engine (GPU only; CI runs the fake-TE tests instead):
the healthy case, the recompute check's negative control (TE 1.6-1.11 emulated by te_prefix.py),
and the resume check's three verdicts (refused by default, restored with the variable set,
drifted with ``_extra_state`` dropped)."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(importlib.util.find_spec("transformer_engine") is None,
                       reason="needs Transformer Engine"),
]

from preflight.smoke import SmokeOptions, run  # noqa: E402

VAR = "NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE"


@pytest.fixture(scope="module")
def te_outcome():  # noqa: ANN201
    return run({}, SmokeOptions(backends=("te",), timeout=300, speed=False, env={VAR: "0"}))


def test_te_smoke_is_healthy(te_outcome) -> None:
    f = te_outcome.facts
    assert f["smoke.status"] == "ok", f.get("smoke.error") or f
    assert f["smoke.te.engaged"] and f["smoke.te.accurate"] and f["smoke.te.finite"]
    assert f["smoke.te.ckpt_scale_drift"] is False and f["smoke.te.ckpt_bwd_scales_updated"]
    assert f["smoke.te.converted"] == ["fc1", "fc2"] and f["smoke.te.unconverted_count"] == 1
    # fc1 + fc2 of fc1, fc2, head, at the GPU's sizes (train.sizes: 1024-wide FP8 layers)
    from preflight.smoke import train as tr

    n_in, hidden, _ = tr.sizes("cuda")
    fp8 = 2 * n_in * hidden
    assert f["smoke.te.gemm_flops_share"] == pytest.approx(fp8 / (fp8 + n_in * tr.OUT), abs=1e-4)
    assert f["smoke.te.train_ok"] and f["smoke.te.loss_decreased"]


def test_te_resume_verdicts(te_outcome) -> None:
    f = te_outcome.facts
    te = te_outcome.details["backends"]["te"]["resume"]["delayed"]
    assert te["stateful"] is True and te["extra_state_keys"]
    version = tuple(int(p) for p in str(f["smoke.te.version"]).split("+")[0].split(".")[:3])
    # TE PR 3123 (2.18, backported to 2.16.1 and 2.17.1): pickled extra state refused by default
    if version >= (2, 18) or (2, 16, 1) <= version < (2, 17) or (2, 17, 1) <= version < (2, 18):
        assert f["smoke.te.resume_status"] == "refused"
        assert VAR in f["smoke.te.resume_error"] and VAR in f["smoke.te.resume_fix"]
    assert f["smoke.te.resume_unsafe_env_status"] == "restored"
    assert f["smoke.te.resume_unsafe_env_max_abs_diff"] == 0.0
    assert f["smoke.te.resume_dropped_status"] == "drifted"
    assert f["smoke.te.resume_dropped_max_abs_diff"] > 0.0
    assert te["dropped"]["state_after_load"] == "none"      # no state until the next FP8 step
    assert f["smoke.te.resume_dcp_status"] in ("refused", "restored")   # TE issue 1860: refused
    assert "current" in f["smoke.te.resume_stateless_recipes"]


def test_recompute_check_fires_on_emulated_pre_1254_te() -> None:
    import transformer_engine.pytorch as te_pt
    from te_prefix import pre_1254_recompute

    from preflight.smoke import te_check

    with pre_1254_recompute():
        bad = te_check.drift(te_pt, "cuda")
    good = te_check.drift(te_pt, "cuda")
    assert bad["ckpt_bwd_scales_updated"] is False and bad["ckpt_scale_drift"] is True
    assert good["ckpt_bwd_scales_updated"] is True and good["ckpt_scale_drift"] is False


def test_inspect_sees_unrestored_te_state() -> None:
    import transformer_engine.pytorch as te_pt

    from preflight import inspect
    from preflight.smoke.te_check import autocast, delayed_recipe

    def build():  # noqa: ANN202
        torch.manual_seed(0)
        return torch.nn.Sequential(te_pt.Linear(64, 64, params_dtype=torch.bfloat16)).cuda()

    m = build()
    opt = torch.optim.AdamW(m.parameters())
    for _ in range(3):
        with autocast(te_pt, delayed_recipe()):
            y = m(torch.randn(32, 64, device="cuda", dtype=torch.bfloat16))
        y.float().sum().backward()
        opt.step()
    assert inspect(m, opt).facts["runtime.fp8.te_state_modules"] == 1
    fresh = build()
    fresh.load_state_dict({k: v for k, v in m.state_dict().items()
                           if not k.endswith("_extra_state")}, strict=False)
    fopt = torch.optim.AdamW(fresh.parameters())
    fopt.load_state_dict(opt.state_dict())
    with autocast(te_pt, delayed_recipe()):   # one step after the resume: history has 1 row
        y = fresh(torch.randn(32, 64, device="cuda", dtype=torch.bfloat16))
    y.float().sum().backward()
    fopt.step()
    ids = {f.rule_id for f in inspect(fresh, fopt).findings}
    assert "FP8D-CKPT-0009" in ids
