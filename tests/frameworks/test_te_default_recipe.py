"""A Transformer Engine loop that names no recipe runs TE's per-GPU default (issue 23 item 3):
the PyTorch reader states intent.recipe_by_backend for ``te.autocast()`` / ``fp8_autocast()``
without one, and FP8D-TE-0050 says which recipe that is on the GPU planned."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight

LOOP = """import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling

model = te.Linear(4096, 4096).cuda()
x = torch.randn(4096, 4096, device="cuda")
for step in range(10):
    with {autocast}:
        y = model(x)
    y.sum().backward()
"""


@pytest.mark.parametrize("autocast", ["te.fp8_autocast(enabled=True)", "te.autocast()"])
@pytest.mark.parametrize(("gpu", "recipe"), [("B200", "mxfp8"), ("H100", "delayed")])
def test_no_recipe_in_the_script_names_the_one_te_picks(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        autocast: str, gpu: str,
                                                        recipe: str) -> None:
    (tmp_path / "train.py").write_text(LOOP.format(autocast=autocast))
    monkeypatch.chdir(tmp_path)
    report = preflight.check(["train.py"], smoke=False, assume={
        "gpu": gpu, "pkg.transformer-engine": "2.8.0", "pkg.torch": "2.8.0+cu128"})
    assert report.facts["intent.recipe_by_backend"] is True
    [finding] = [f for f in report.findings if f.rule_id == "FP8D-TE-0050"]
    assert f" {recipe} on this " in finding.message
    assert str(finding.location).endswith("train.py:8")


def test_a_recipe_in_the_script_is_no_default(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.py").write_text(LOOP.format(
        autocast="te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling())"))
    monkeypatch.chdir(tmp_path)
    report = preflight.check(["train.py"], smoke=False, assume={
        "gpu": "B200", "pkg.transformer-engine": "2.8.0", "pkg.torch": "2.8.0+cu128"})
    assert "intent.recipe_by_backend" not in report.facts
    assert "FP8D-TE-0050" not in {f.rule_id for f in report.findings}
