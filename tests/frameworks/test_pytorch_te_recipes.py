"""What a plain Transformer Engine script's recipe objects ask for, and the rules they reach
(:mod:`preflight.frameworks.pytorch_te`): the autocast recipe's ``fp8_dpa`` / ``fp8_mha`` keywords
give ``intent.fp8_attention`` (holdout24 te-2080: a ``te.DotProductAttention`` under
``MXFP8BlockScaling(fp8_dpa=True, fp8_mha=True)`` on TE 2.6 asserts, FP8D-TE-0045), and
``fp8_model_init`` with an MXFP8 recipe on TE 2.0-2.2 (holdout24 te-1687, FP8D-TE-0063)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.engine import evaluate, load_rules
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

SCRIPT = """
import os
import sys
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import Format, MXFP8BlockScaling, DelayedScaling

{pre}
rec = {recipe}
attn = te.DotProductAttention(num_attention_heads=10, kv_channels=128)
q = torch.rand((1, 4096, 10, 128), dtype=torch.bfloat16).cuda()
with te.fp8_autocast(enabled=True, fp8_recipe=rec):
    out = attn(q, q, q)
"""


def _read(folder: Path, recipe: str, pre: str = "") -> tuple[dict[str, object], set[str]]:
    (folder / "train.py").write_text(SCRIPT.format(recipe=recipe, pre=pre))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    facts = {**read.facts, **values, "pkg.transformer-engine.version": "2.6.0"}
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False), Facts(facts)).findings}
    return values, fired


@pytest.mark.parametrize("recipe", [
    "MXFP8BlockScaling(fp8_format=Format.E4M3, fp8_dpa=True, fp8_mha=True)",
    "MXFP8BlockScaling(fp8_dpa=True)",
    # fp8_mha alone: DotProductAttention.forward forces fp8_dpa on
    "MXFP8BlockScaling(fp8_mha=True)",
])
def test_fp8_dpa_in_an_mxfp8_recipe_fires_te_0045(tmp_path: Path, recipe: str) -> None:
    values, fired = _read(tmp_path, recipe)
    assert values["intent.fp8_attention"] is True
    assert "FP8D-TE-0045" in fired


@pytest.mark.parametrize("recipe", [
    "MXFP8BlockScaling()",
    "MXFP8BlockScaling(fp8_dpa=False)",
    "MXFP8BlockScaling(fp8_dpa=False, fp8_mha=False)",
])
def test_no_fp8_attention_asked_stays_quiet(tmp_path: Path, recipe: str) -> None:
    values, fired = _read(tmp_path, recipe)
    assert values["intent.fp8_attention"] is not True
    assert "FP8D-TE-0045" not in fired


def test_a_per_tensor_recipe_with_fp8_dpa_is_not_the_mxfp8_failure(tmp_path: Path) -> None:
    values, fired = _read(tmp_path, "DelayedScaling(fp8_dpa=True)")
    assert values["intent.fp8_attention"] is True
    assert "FP8D-TE-0045" not in fired


@pytest.mark.parametrize("pre, recipe", [
    ("", "MXFP8BlockScaling(fp8_dpa=os.environ.get('DPA') == '1')"),
    ("", "MXFP8BlockScaling(fp8_dpa=len(sys.argv) > 1)"),
    ("", "MXFP8BlockScaling(fp8_dpa='yes')"),
])
def test_a_value_the_script_does_not_decide_is_unknown(tmp_path: Path, pre: str,
                                                       recipe: str) -> None:
    values, fired = _read(tmp_path, recipe, pre)
    assert isinstance(values["intent.fp8_attention"], Unknown)
    assert "FP8D-TE-0045" not in fired


def test_a_recipe_class_of_the_job_sets_nothing(tmp_path: Path) -> None:
    pre = "class MXFP8BlockScaling:\n    def __init__(self, **kw):\n        self.kw = kw\n"
    (tmp_path / "train.py").write_text(SCRIPT.replace(
        "from transformer_engine.common.recipe import Format, MXFP8BlockScaling, DelayedScaling",
        "from transformer_engine.common.recipe import Format").format(
            recipe="MXFP8BlockScaling(fp8_dpa=True)", pre=pre))
    read = read_paths([str(tmp_path / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8_attention"] is not True


INIT = """
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling, DelayedScaling
import os

{pre}
with te.fp8_model_init({init}):
    model = te.Linear(4096, 4096)
with te.fp8_autocast(enabled=True, fp8_recipe=MXFP8BlockScaling()):
    y = model(torch.randn(2048, 4096, device="cuda"))
"""


def _fired_init(folder: Path, init: str, te_version: str = "2.2.0", pre: str = "") -> set[str]:
    (folder / "train.py").write_text(INIT.format(init=init, pre=pre))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    facts = {**read.facts, **values, "pkg.transformer-engine.version": te_version}
    return {f.rule_id for f in evaluate(load_rules(with_tests=False), Facts(facts)).findings}


@pytest.mark.parametrize("init, pre", [
    ("enabled=True, recipe=MXFP8BlockScaling()", ""),
    ("recipe=MXFP8BlockScaling()", ""),             # enabled defaults to True
    ("enabled=True, recipe=r", "r = MXFP8BlockScaling()"),
])
def test_fp8_model_init_with_mxfp8_on_te_2_2_fires_te_0063(tmp_path: Path, init: str,
                                                          pre: str) -> None:
    assert "FP8D-TE-0063" in _fired_init(tmp_path, init, pre=pre)


@pytest.mark.parametrize("init, te_version", [
    ("enabled=True, recipe=MXFP8BlockScaling()", "2.3.0"),
    ("enabled=True, recipe=DelayedScaling()", "2.2.0"),
    ("enabled=False, recipe=MXFP8BlockScaling()", "2.2.0"),
    # a value the script does not decide: never a confident finding
    ("enabled=os.environ.get('FP8_PARAMS') == '1', recipe=MXFP8BlockScaling()", "2.2.0"),
])
def test_other_weights_or_releases_stay_quiet(tmp_path: Path, init: str, te_version: str) -> None:
    assert "FP8D-TE-0063" not in _fired_init(tmp_path, init, te_version)
