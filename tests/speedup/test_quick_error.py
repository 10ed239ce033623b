"""The modelled speed-up estimate (``--quick``) says how far it was from real training (issue 26
item 2: the model stays only as ``--quick``, "with its measured error stated in the output")."""

from __future__ import annotations

import json

import pytest

from preflight.speedup import ModelShape
from preflight.speedup.render import render_text
from preflight.speedup.run import speedup

SHAPE = ModelShape(hidden=4096, ffn=14336, heads=32, kv_heads=8, layers=32, vocab=128256,
                   seq=4096, micro_batch=1)


def test_the_quick_estimate_states_its_measured_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 item 2: the modelled estimate stays only as ``--quick``, "with its measured error
    stated in the output". A GPU timing child is faked (our own ``proc.run``: this box has no
    GPU); the estimate's text and JSON carry the measured error (acceptance audit, main eafd747:
    no test held it)."""
    from preflight.base import proc
    from preflight.speedup.render import render_json
    from preflight.speedup.run import QUICK_ERROR

    lin = {"d_in": 1, "d_out": 1, "bf16": {"fwd": 1e-3, "dgrad": 1e-3, "wgrad": 1e-3},
           "fp8": {"fwd": 5e-4, "dgrad": 5e-4, "wgrad": 5e-4}, "cast_model_s": 3e-4}
    child = {"status": "ok", "backend": "torchao",
             "linears": [{**lin, "name": n} for n in ("qkv", "attn_out", "fc1", "fc2")],
             "other": {"attention_s": 0.0}}
    monkeypatch.setattr(proc, "run", lambda *a, **k: proc.ProcResult(0, json.dumps(child), ""))
    report = speedup({}, SHAPE)
    assert report.prediction is not None
    assert "--quick" in QUICK_ERROR and "+10%" in QUICK_ERROR and "measured" in QUICK_ERROR
    text = " ".join(render_text(report).split())
    assert " ".join(QUICK_ERROR.split()) in text
    assert QUICK_ERROR in json.loads(render_json(report))["prediction"]["notes"]
