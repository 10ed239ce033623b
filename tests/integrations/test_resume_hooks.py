"""The callbacks' resume awareness: runtime.resumed at train start, one more inspection after the
first step of a resumed run (preflight/integrations/resume.py)."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from preflight.facts import Facts
from preflight.integrations.core import GateOptions
from preflight.integrations.resume import AfterResume, resumed_facts
from preflight.report import Report


def recorder():  # noqa: ANN201 - a fake of our own preflight.inspect
    calls: list[dict] = []

    def inspector(model, optimizer, accelerator, expect_fp8, **kwargs) -> Report:  # noqa: ANN001
        calls.append(kwargs)
        return Report(facts=Facts({"runtime.inspected": True}))

    inspector.calls = calls  # type: ignore[attr-defined]
    return inspector


@given(st.integers(min_value=-5, max_value=10_000))
def test_resumed_from_the_step_count(step: int) -> None:
    assert resumed_facts(step) == {"runtime.resumed": step > 0}


def test_resumed_cannot_tell_without_a_step_count() -> None:
    assert resumed_facts(None) == {}
    assert resumed_facts(True) == {}          # a bool is not a step count
    assert resumed_facts(None, "last.ckpt") == {"runtime.resumed": True}


@given(st.integers(min_value=1, max_value=10_000), st.integers(min_value=0, max_value=5))
def test_after_resume_is_due_once_one_step_later(start: int, later: int) -> None:
    ar = AfterResume()
    ar.arm(resumed_facts(start), start)
    assert not ar.due(start)
    assert ar.due(start + 1 + later)
    assert not ar.due(start + 2 + later)     # once only


def test_after_resume_never_due_on_a_fresh_run() -> None:
    ar = AfterResume()
    ar.arm(resumed_facts(0), 0)
    assert not any(ar.due(s) for s in range(5))


def test_hf_passes_resumed_to_inspect() -> None:
    from preflight.integrations.hf import on_train_begin

    inspector = recorder()
    on_train_begin(GateOptions(), SimpleNamespace(), {"model": "M"}, inspector=inspector,
                   state=SimpleNamespace(global_step=120))
    on_train_begin(GateOptions(), SimpleNamespace(), {"model": "M"}, inspector=inspector,
                   state=SimpleNamespace(global_step=0))
    on_train_begin(GateOptions(), SimpleNamespace(), {"model": "M"}, inspector=inspector)
    # (the callback also passes what the run asked for: runtime.expect_fp8_* facts)
    assert [c["extra_facts"].get("runtime.resumed") for c in inspector.calls] == [
        True, False, None]


def test_lightning_passes_resumed_with_precision() -> None:
    from preflight.integrations.lightning import on_train_start

    inspector = recorder()
    trainer = SimpleNamespace(precision="transformer-engine", optimizers=[], global_step=3,
                              ckpt_path="last.ckpt")
    on_train_start(GateOptions(), trainer, "MODULE", inspector=inspector)
    got = inspector.calls[0]["extra_facts"]
    assert got["runtime.lightning.precision"] == "transformer-engine"
    assert got["runtime.resumed"] is True
