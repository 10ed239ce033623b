"""preflight/live/resume.py: the FP8 scaling state of Transformer Engine modules after a resume.

CI has no GPU, so no real TE: the modules here are plain torch modules whose class lives under
``transformer_engine.pytorch`` and whose ``fp8_meta`` has TE 2.x's shape (scaling_fwd /
scaling_bwd with ``scale`` and ``amax_history``). tests/smoke/test_smoke_te_real.py runs the same
inspection on real TE on the GPU machine.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from preflight.live import inspect  # noqa: E402
from preflight.live.resume import optimizer_steps, resume_facts, te_state  # noqa: E402


def te_like(state: str, hist_len: int = 4, rows: int = 0) -> torch.nn.Module:
    """A module TE-shaped enough for live_resume: state is 'none' | 'initial' | 'trained'."""
    cls = type("Linear", (torch.nn.Module,), {"__module__": "transformer_engine.pytorch.module.linear"})
    mod = cls()
    mod.weight = torch.nn.Parameter(torch.randn(16, 16))
    mod.fp8_meta = {}
    if state != "none":
        for which in ("scaling_fwd", "scaling_bwd"):
            hist = torch.zeros(hist_len, 3)
            hist[:rows] = 1.5
            scale = torch.ones(3) if state == "initial" else torch.full((3,), 120.0)
            mod.fp8_meta[which] = SimpleNamespace(scale=scale, amax_history=hist)
    return mod


def adam_after(steps: int, model: torch.nn.Module) -> torch.optim.Optimizer:
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(steps):
        sum(p.sum() for p in model.parameters()).backward()
        opt.step()
        opt.zero_grad()
    return opt


def test_state_kinds_are_counted() -> None:
    model = torch.nn.Sequential(te_like("trained", rows=3), te_like("initial"), te_like("none"),
                                torch.nn.Linear(4, 4))
    f = te_state(model.named_modules())
    assert f["runtime.fp8.te_state_modules"] == 2
    assert f["runtime.fp8.te_stateless_modules"] == 1
    assert f["runtime.fp8.te_state_initial"] == ["1"]
    assert f["runtime.fp8.te_history_rows_min"] == 0 and f["runtime.fp8.te_history_len"] == 4


@pytest.mark.parametrize(("rows", "steps", "short"), [
    (3, 6, False),    # a full history of 4 shows 3 filled rows (TE 2.20.2, H100)
    (2, 2, False),    # a fresh run after 2 steps
    (1, 8, True),     # resumed at step 7 with the state dropped, one step since
    (2, 8, True),
])
def test_history_short(rows: int, steps: int, short: bool) -> None:
    model = torch.nn.Sequential(te_like("trained", rows=rows))
    f = resume_facts(model, adam_after(steps, model))
    assert f["runtime.optimizer.steps"] == steps
    assert f["runtime.fp8.te_history_short"] is short


def test_a_module_that_skipped_steps_is_not_a_restart() -> None:
    # TE >= 1.7 does not roll the history of a module that did not run in a step (amax 0:
    # delayed_scaling.cu at v1.7, PR 825): an MoE expert chosen in 1 of 6 steps has 1 row while
    # the others have a full history. Only a restart empties every history (issue 23 item 5:
    # the rule read the emptiest history and warned falsely).
    model = torch.nn.Sequential(te_like("trained", rows=3), te_like("trained", rows=1))
    f = resume_facts(model, adam_after(6, model))
    assert f["runtime.fp8.te_history_rows_min"] == 1
    assert f["runtime.fp8.te_history_rows_max"] == 3
    assert f["runtime.fp8.te_history_short"] is False
    report = inspect(model, adam_after(6, model))
    assert "FP8D-CKPT-0009" not in {x.rule_id for x in report.findings}


def test_every_history_restarted_is_short() -> None:
    model = torch.nn.Sequential(te_like("trained", rows=2), te_like("trained", rows=1))
    f = resume_facts(model, adam_after(8, model))
    assert f["runtime.fp8.te_history_short"] is True


def test_no_step_yet_is_unknown_not_zero() -> None:
    model = torch.nn.Sequential(te_like("trained", rows=2))
    f = resume_facts(model, torch.optim.AdamW(model.parameters()))
    assert type(f["runtime.optimizer.steps"]).__name__ == "Unknown"
    assert "runtime.fp8.te_history_short" not in f


def test_inspect_warns_about_initial_scales_after_steps() -> None:
    model = torch.nn.Sequential(te_like("initial"))
    report = inspect(model, adam_after(5, model))
    assert "FP8D-CKPT-0008" in {f.rule_id for f in report.findings}


def test_inspect_on_resume_without_any_state() -> None:
    model = torch.nn.Sequential(te_like("none"), te_like("none"))
    quiet = inspect(model, adam_after(5, model))
    told = inspect(model, adam_after(5, model), extra_facts={"runtime.resumed": True})
    assert "FP8D-CKPT-0010" not in {f.rule_id for f in quiet.findings}
    assert "FP8D-CKPT-0010" in {f.rule_id for f in told.findings}


def test_a_healthy_trained_model_gets_no_checkpoint_finding() -> None:
    model = torch.nn.Sequential(te_like("trained", rows=3))
    report = inspect(model, adam_after(6, model), extra_facts={"runtime.resumed": True})
    assert not [f for f in report.findings if f.rule_id.startswith("FP8D-CKPT")]


def test_odd_objects_do_not_crash() -> None:
    class Odd:
        state = {"p": {"step": "not a number"}}

    steps = optimizer_steps(Odd())
    assert type(steps).__name__ == "Unknown"
    mod = te_like("trained", rows=1)
    mod.fp8_meta["scaling_fwd"] = SimpleNamespace(scale="garbage", amax_history=None)
    f = te_state([("x", mod)])
    assert f["runtime.fp8.te_state_unreadable"] == ["x"]
