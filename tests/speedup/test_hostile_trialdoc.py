"""A trial child's document that cannot be computed with (speedup/trialdoc.py; redteam8): no
verdict, no traceback, a reason. The child is replaced by a fake of our own ``_both`` returning
the document (the real child runs in test_trial.py and on the GPU)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from preflight.speedup import ModelShape, trial

TINY = ModelShape(hidden=64, ffn=128, heads=4, kv_heads=2, layers=6, vocab=256, seq=32,
                  micro_batch=2)


def _run(precision: str, depth: Any, median: Any, **more: Any) -> dict[str, Any]:
    return {"precision": precision, "depth": depth, "median_s": median, "busy_pct": [],
            **more}


def _good() -> list[dict[str, Any]]:
    return [_run("bf16", 2, 0.02), _run("bf16", 4, 0.04), _run("fp8", 2, 0.015),
            _run("fp8", 4, 0.03)]


def _trial(monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> trial.TrialReport:
    monkeypatch.setattr(trial, "_both", lambda _req, _t: doc)
    return trial.trial(TINY, backend="torchao", recipe="tensorwise", compiled=False,
                       device="cuda", depths=(2, 4))


def test_a_good_document_gives_a_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _trial(monkeypatch, {"status": "ok", "depths": [2, 4], "runs": _good()})
    assert report.speedup is not None and report.verdict and not report.why_not


def _swap(n: int, **change: Any) -> list[Any]:
    runs: list[Any] = _good()
    runs[n] = {**runs[n], **change}
    return runs


@pytest.mark.parametrize("runs, said", [
    (_swap(3, median_s=math.nan), "no positive finite step time"),
    (_swap(1, median_s=math.inf), "no positive finite step time"),
    (_swap(2, median_s=0.0), "no positive finite step time"),
    (_swap(3, median_s=-1.0), "no positive finite step time"),
    (_swap(3, median_s="0.1"), "no positive finite step time"),
    (_swap(3, median_s=True), "no positive finite step time"),
    (_swap(3, busy_pct=[97, math.nan]), "GPU-busy readings"),
    (_swap(3, busy_pct=[math.inf]), "GPU-busy readings"),
    (_swap(3, busy_pct=True), "GPU-busy readings"),
    (_swap(3, busy_pct=5), "GPU-busy readings"),
    (_swap(3, busy_pct=[101]), "GPU-busy readings"),
    (_swap(3, twin_s=math.nan), "host-twin time"),
    (_swap(3, peak_bytes=-5), "peak memory"),
    (_swap(0, depth="x"), "positive whole depth"),
    (_swap(0, depth=True), "positive whole depth"),
    (_swap(0, precision="fp4"), "no known precision"),
    ([*_good()[:2]], "not timed at the same depths"),
    ([*_good()[:3]], "not timed at the same depths"),
    ([*_good(), _run("bf16", 4, 0.04), _run("fp8", 4, 0.03)], "timed twice"),
    ([*_good()[:3], "not a dict"], "not a document"),
    ([], "no timed runs"),
    ("runs", "no timed runs"),
])
def test_an_unusable_document_is_a_reason(monkeypatch: pytest.MonkeyPatch, runs: Any,
                                           said: str) -> None:
    report = _trial(monkeypatch, {"status": "ok", "depths": [2, 4], "runs": runs})
    assert report.speedup is None and not report.verdict
    assert report.why_not.startswith("no trial: the trial child's result is not usable")
    assert said in report.why_not


@pytest.mark.parametrize("depths", [["x"], [0, 4], [], None, [2.5, 4], "2,4"])
def test_depths_that_are_not_whole_numbers(monkeypatch: pytest.MonkeyPatch, depths: Any) -> None:
    report = _trial(monkeypatch, {"status": "ok", "depths": depths, "runs": _good()})
    assert report.speedup is None and "not usable" in report.why_not


def test_a_failed_child_with_hostile_fields_is_still_a_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    report = _trial(monkeypatch, {"status": "failed", "depths": ["x"], "reason": {"a": 1}})
    assert report.why_not.startswith("no trial: ") and report.depths == (2, 4)


def test_an_extrapolation_that_is_not_positive_is_inconclusive(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # trained deeper than the model (depths asked for), a steep slope extrapolated back below zero
    runs = [_run("bf16", 8, 0.02), _run("bf16", 16, 0.18), _run("fp8", 8, 0.02),
            _run("fp8", 16, 0.15)]
    shape = ModelShape(**{**TINY.__dict__, "layers": 2})
    monkeypatch.setattr(trial, "_both", lambda _req, _t: {"status": "ok", "depths": [8, 16],
                                                          "runs": runs})
    report = trial.trial(shape, backend="torchao", recipe="tensorwise", compiled=False,
                         device="cuda", depths=(8, 16))
    assert report.speedup is None and not report.verdict
    assert report.why_not.startswith("inconclusive: extrapolated to 2 layers")
