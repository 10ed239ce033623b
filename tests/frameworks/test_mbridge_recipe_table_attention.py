"""tools/megatron_bridge_recipes.py ``scan_attention``: which library recipes end up with FP8
attention on their ``mixed_precision`` (the recipe table's ``fp8_attention`` list). Shapes of
Megatron-Bridge v0.6.0 (51885cf1): perf_recipes/deepseek/common.py l.52-75 (a helper given
``fp8_dot_product_attention=True``), perf_recipes/deepseek/gb300/deepseek_v3.py l.310-345 (a recipe
that starts from one and turns it off), recipes/qwen/gb200/qwen3_moe.py l.62 (set in the body)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("mbr_tool", ROOT / "tools/megatron_bridge_recipes.py")
assert SPEC is not None and SPEC.loader is not None
TOOL = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(TOOL)

COMMON = '''def _enable_mxfp8(cfg, fp8_dot_product_attention: bool = False):
    cfg.mixed_precision.fp8_dot_product_attention = fp8_dot_product_attention
'''
RECIPES = '''from x import _enable_mxfp8


def base_config():
    cfg = _common()
    cfg.mixed_precision = "bf16_mixed"
    return cfg


def a_fp8mx_config():
    cfg = base_config()
    cfg.mixed_precision = "bf16_with_mxfp8_mixed"
    _enable_mxfp8(cfg, fp8_dot_product_attention=True)
    return cfg


def b_hsdp_config():
    cfg = a_fp8mx_config()
    cfg.mixed_precision.fp8_dot_product_attention = False
    return cfg


def c_body_config():
    cfg = base_config()
    cfg.mixed_precision.fp8_dot_product_attention = True
    return cfg


def d_reset_config():
    cfg = c_body_config()
    cfg.mixed_precision = "bf16_with_mxfp8_mixed"
    return cfg


def e_mha_config():
    cfg = base_config()
    # cfg.mixed_precision.fp8_multi_head_attention = True  (a comment sets nothing)
    return cfg
'''


def test_scan_attention(tmp_path: Path) -> None:
    pkg = tmp_path / "src/megatron/bridge"
    (pkg / "recipes").mkdir(parents=True)
    (pkg / "perf_recipes").mkdir(parents=True)
    (pkg / "perf_recipes/common.py").write_text(COMMON)
    (pkg / "recipes/models.py").write_text(RECIPES)
    assert TOOL.scan_attention(tmp_path) == ["a_fp8mx_config", "c_body_config"]


def test_the_shipped_table_lists_the_v060_recipes() -> None:
    table = json.loads((ROOT / "preflight/data/megatron_bridge_recipes.json").read_text())
    v060 = next(r for r in table["releases"] if r["version"] == "v0.6.0")
    assert "qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config" in v060["fp8_attention"]
    assert "deepseek_v3_pretrain_128gpu_gb300_fp8mx_hsdp_config" not in v060["fp8_attention"]
    assert set(v060["fp8_attention"]) <= set(v060["fp8"])   # only FP8 recipes
