"""The rows of the tensor a plain script feeds its TE modules are the GEMMs' token count
(:mod:`preflight.reading.pymodelrows` via :mod:`preflight.frameworks.pytorch_te`): TE issue 1571
(holdout20), ``te.Linear(256, 5120)`` fed ``torch.randn(1, 256)`` under ``te.fp8_autocast``."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.engine import evaluate, load_rules
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

SCRIPT = """
import torch
import torch.nn as nn
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

embed = nn.Sequential(te.Linear(256, 5120), nn.SiLU(), te.Linear(5120, 5120)).cuda()
t_freq = {tensor}
with te.fp8_autocast(enabled=True, fp8_recipe=recipe.DelayedScaling()):
    e = embed(t_freq)
e.sum().backward()
"""


def _check(folder: Path, tensor: str) -> tuple[dict[str, object], set[str]]:
    (folder / "train.py").write_text(SCRIPT.format(tensor=tensor))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False),
                                         Facts({**read.facts, **values})).findings}
    return values, fired


def test_one_row_fires_te_0012(tmp_path: Path) -> None:
    values, fired = _check(tmp_path, "torch.randn(1, 256, device='cuda')")
    assert values["intent.shapes.tokens"] == 1 and "FP8D-TE-0012" in fired


@pytest.mark.parametrize("tensor", ["torch.randn(16, 256)",
                                    "torch.zeros(4, 8, 256).view(-1, 256)"])
def test_aligned_rows_stay_quiet(tmp_path: Path, tensor: str) -> None:
    values, fired = _check(tmp_path, tensor)
    assert values["intent.shapes.tokens_align"] >= 8    # type: ignore[operator]
    assert "FP8D-TE-0012" not in fired


def test_rows_the_text_does_not_give_stay_unknown(tmp_path: Path) -> None:
    values, fired = _check(tmp_path, "load_batch()")
    assert isinstance(values["intent.shapes.tokens"], Unknown)
    assert "FP8D-TE-0012" not in fired
