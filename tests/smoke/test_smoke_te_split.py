"""TE's checks shared by two children (``te`` and ``te2``, smoke/parallel.py): which machines split,
that the two halves folded give what one child gives (in-process on the fake TE, then through real
children on the CPU), and that a half's failure is not lost in the fold."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")

from preflight.smoke import SmokeOptions, parallel, run, te_check  # noqa: E402

VOLATILE = {"timings", "seconds"}


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert set(a) - VOLATILE == set(b) - VOLATILE
    for key in set(a) - VOLATILE:
        assert a[key] == b[key], key


@pytest.mark.parametrize(("cpus", "device", "split"), [
    (16, "cuda", True), (6, "cuda:1", True), (5, "cuda", False), (2, "cuda", False),
    (64, "cpu", False), (None, "cuda", False),
])
def test_which_machines_split(monkeypatch: pytest.MonkeyPatch, cpus: int | None, device: str,
                              split: bool) -> None:
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: cpus)
    assert parallel.split_te(device) is split
    parts = parallel.parts_for(("te",), None, device, False)
    assert parts == (["te", "te2"] if split else ["te"])


def test_no_te_no_second_half(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 16)
    assert "te2" not in parallel.parts_for(("scaled_mm",), None, "cuda", True)
    assert "te2" not in parallel.parts_for(("auto",), (), "cuda", True)


def test_the_halves_folded_are_one_childs_result(fake_te_path) -> None:
    fake_te_path(bug=False, api=2)
    whole = te_check.run_all("cpu", None)
    first = te_check.run_all("cpu", None, half="first")
    second = te_check.run_all("cpu", None, half="second")
    assert "train_ok" not in first and "sqnr_db" not in second
    folded = te_check.fold(first, second)
    _same(folded, whole)
    assert {"numerics", "drift", "train", "resume", "second_half"} <= set(folded["timings"])


def test_the_buggy_te_is_caught_in_the_first_half(fake_te_path) -> None:
    fake_te_path(bug=True, api=1)
    whole = te_check.run_all("cpu", None)
    folded = te_check.fold(te_check.run_all("cpu", None, half="first"),
                           te_check.run_all("cpu", None, half="second"))
    assert folded["ckpt_scale_drift"] is True
    _same(folded, whole)


def test_a_recipe_that_failed_the_first_half_stays_out_of_the_resume_check() -> None:
    first = {"available": True, "recipe_errors": {"current": "RuntimeError: no"},
             "timings": {"numerics": 0.1}, "seconds": 0.2}
    second = {"available": True, "resume": {"delayed": {}, "current": {"torch_save": {}}},
              "resume_stateless_recipes": ["current"], "timings": {"import": 0.0, "train": 0.3},
              "seconds": 0.4}
    out = te_check.fold(first, second)
    assert out["resume"] == {"delayed": {}}
    assert out["resume_stateless_recipes"] == []
    assert out["timings"] == {"numerics": 0.1, "train": 0.3, "second_half": 0.4}


def test_a_second_half_that_failed_makes_the_te_result_fail() -> None:
    first = {"available": True, "engaged": True, "timings": {}}
    out = te_check.fold(first, {"error": "RuntimeError: boom", "traceback": "..."})
    assert out["engaged"] is True and out["error"] == "RuntimeError: boom"


def test_two_real_children_give_one_childs_facts(fake_te, monkeypatch: pytest.MonkeyPatch) -> None:
    env = fake_te(bug=False, api=2)
    opts = SmokeOptions(device="cpu", backends=("te",), env=env, timeout=120, speed=False)
    one = run({}, opts)
    assert set(one.details["children"]) == {"te"}
    monkeypatch.setattr(parallel, "split_te", lambda device: True)
    two = run({}, opts)
    assert set(two.details["children"]) == {"te", "te2"}
    drop = {"smoke.duration_s"}
    assert {k: v for k, v in two.facts.items() if k not in drop} == \
        {k: v for k, v in one.facts.items() if k not in drop}
    assert two.facts["smoke.status"] == "ok" and two.facts["smoke.te.train_ok"] is True
