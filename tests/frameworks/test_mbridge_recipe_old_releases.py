"""The recipe table's 0.2.x and 0.3.x releases (holdout20: ``llama32_1b_pretrain_config`` on an
installed Megatron-Bridge 0.2.0rc5): each release's recipe precision is read, from the table
of that release or else its series' last one; a series the table has no release of stays
Unknown. And the tool's reading of the 0.2.x recipe shape: the recipe passes
``"precision_config": "<preset>"`` to a helper whose signature defaults it to ``"bf16_mixed"``
(v0.2.2 recipes/nemotronh/nemotron_nano_v2.py l.111-132, nemotronh.py l.220), and a recipe whose
preset is picked by its argument (llama3.py l.240-265) is not taken for the presets it checks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from preflight.frameworks.megatron_bridge_presets import for_recipe, releases

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("mbr_tool_old", ROOT / "tools/megatron_bridge_recipes.py")
assert SPEC is not None and SPEC.loader is not None
TOOL = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(TOOL)


@pytest.mark.parametrize(("installed", "table"), [
    ("0.2.0", "v0.2.0"), ("0.2.0rc5", "v0.2.2"), ("0.2.1", "v0.2.2"), ("0.2.2", "v0.2.2"),
    ("0.3.0", "v0.3.0"), ("0.3.1", "v0.3.1")])
def test_each_release_reads_its_recipes(installed: str, table: str) -> None:
    assert table in releases()
    got = for_recipe("llama32_1b_pretrain_config", installed)
    assert isinstance(got, tuple) and got[0]["fp8"] is None, installed
    assert f"{table} " in got[1]
    fp8 = for_recipe("nemotronh_47b_pretrain_config", installed)
    assert isinstance(fp8, tuple) and fp8[0]["fp8"] == "hybrid"
    assert fp8[0]["fp8_recipe"] == "tensorwise"


def test_a_series_without_a_table_stays_unknown() -> None:
    assert not any(v.startswith("v0.1.") for v in releases())
    assert isinstance(for_recipe("llama32_1b_pretrain_config", "0.1.0rc4"), str)


NANO = '''def _nemotronh_common(model, precision_config: str = "bf16_mixed", **kw):
    cfg = make(model)
    cfg.mixed_precision = precision_config
    return cfg
'''
RECIPES = '''from megatron.bridge.recipes.nemotronh.common import _nemotronh_common


def nano_pretrain_config(**user_kwargs):
    recommended = {"precision_config": "nanov2_bf16_with_fp8_current_scaling_mixed"}
    return _nemotronh_common(m, **{**recommended, **user_kwargs})


def plain_pretrain_config(**user_kwargs):
    return _nemotronh_common(m, **user_kwargs)


def low_pretrain_config(mixed_precision_recipe: str):
    assert mixed_precision_recipe in [
        "bf16_with_mxfp8_mixed",
        "bf16_with_nvfp4_mixed",
    ]
    if mixed_precision_recipe == "bf16_with_nvfp4_mixed":
        pass
    return _nemotronh_common(m)
'''


def test_a_helpers_signature_default_loses_to_the_recipes_keyword(tmp_path: Path) -> None:
    pkg = tmp_path / "src/megatron/bridge/recipes/nemotronh"
    pkg.mkdir(parents=True)
    (tmp_path / "src/megatron/bridge/perf_recipes").mkdir(parents=True)
    (pkg / "common.py").write_text(NANO)
    (pkg / "nano.py").write_text(RECIPES)
    got = TOOL.scan(tmp_path)
    assert got["nano_pretrain_config"] == "nanov2_bf16_with_fp8_current_scaling_mixed"
    assert got["plain_pretrain_config"] == "bf16_mixed"
    assert got["low_pretrain_config"] == "bf16_mixed"
