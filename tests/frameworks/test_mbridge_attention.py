"""Megatron-Bridge FP8 attention (issue 22 item 2): ``intent.fp8_attention`` as the precision
config decides it (frameworks/megatron_bridge_mp.attention).

Read at NVIDIA-NeMo/Megatron-Bridge v0.6.0 (51885cf132b2814188b6855c25a8588254274c2a):
MixedPrecisionConfig has ``fp8_dot_product_attention`` / ``fp8_multi_head_attention`` (False;
training/mixed_precision.py l.58-59) and ``update_config_with_precision_overrides`` copies every
field onto the model at start-up, so ``model.fp8_dot_product_attention=true`` alone is replaced.
Real files, reduced: recipes/qwen/gb200/qwen3_moe.py l.28-62 (a recipe body that sets it on its
``mixed_precision``, read in the job's own source and, for the library's recipe, from the recipe
table's ``fp8_attention`` list); examples/quantization/pretrain_quantized_llama3_8b.py's shape
(a run script's ``cfg.x = ...``). Hostile: set under a condition, through a helper, replaced by
a launch-line preset, an unknown recipe, a run-time value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

# recipes/qwen/gb200/qwen3_moe.py @ v0.6.0, reduced (lines 28-62, the settings that matter here)
QWEN3_MOE_GB200 = '''from megatron.bridge.recipes.qwen.h100.qwen3_moe import (
    qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config,
)
from megatron.bridge.training.mixed_precision import bf16_with_mxfp8_mixed


def {name}():
    cfg = qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config()
    cfg.mixed_precision = bf16_with_mxfp8_mixed()
    cfg.mixed_precision.grad_reduce_in_fp32 = False
    cfg.model.expert_model_parallel_size = 8
{attention}
    return cfg
'''
ATTENTION = "    cfg.mixed_precision.fp8_dot_product_attention = True"
RECIPE = "qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config"
RUN = "torchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe {recipe} {extra}\n"
ASSUME = {"pkg.megatron-bridge": "0.6.0", "pkg.megatron-core": "0.15.0",
          "pkg.transformer-engine": "2.5.0", "pkg.torch": "2.8.0", "gpu": "H100"}


def _intent(path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return read.facts, {k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()}


def _source_job(tmp_path: Path, attention: str, name: str = "my_qwen3_moe_config") -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    recipes = tmp_path / "src/megatron/bridge/recipes/qwen"
    recipes.mkdir(parents=True, exist_ok=True)
    (recipes / "mine.py").write_text(QWEN3_MOE_GB200.format(name=name, attention=attention))
    run = tmp_path / "scripts/training/run.sh"
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text(RUN.format(recipe=name, extra=""))
    return run


def test_a_recipe_body_in_the_job_source(tmp_path: Path) -> None:
    facts, got, prov = _intent(_source_job(tmp_path, ATTENTION))
    assert got["fp8"] is True and got["recipe"] == "mxfp8"
    assert got["fp8_attention"] is True
    assert prov["fp8_attention"].endswith("mine.py:12")


def test_the_body_without_it_is_false(tmp_path: Path) -> None:
    _, got, _ = _intent(_source_job(tmp_path, "    pass"))
    assert got["fp8"] is True and got["fp8_attention"] is False


@pytest.mark.parametrize(("attention", "why"), [
    ("    if os.environ.get('FP8_ATTN'):\n        cfg.mixed_precision.fp8_dot_product_attention"
     " = True", "under a condition"),
    ("    cfg.mixed_precision.fp8_dot_product_attention = flag", "value not written"),
    ("    _enable(cfg, fp8_dot_product_attention=True)", "not followed"),
])
def test_what_the_body_does_not_decide_is_unknown(tmp_path: Path, attention: str,
                                                  why: str) -> None:
    _, got, _ = _intent(_source_job(tmp_path, attention))
    assert isinstance(got["fp8_attention"], Unknown) and why in got["fp8_attention"].reason


def test_a_launch_line_preset_replaces_the_recipe_own(tmp_path: Path) -> None:
    run = _source_job(tmp_path, ATTENTION)
    run.write_text(RUN.format(recipe="my_qwen3_moe_config",
                              extra="mixed_precision=bf16_with_mxfp8_mixed"))
    _, got, _ = _intent(run)
    assert got["fp8"] is True and got["fp8_attention"] is False


def test_the_library_recipe_from_the_table(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(recipe=RECIPE, extra=""))
    _, got, prov = _intent(run)
    assert got["fp8_attention"] is True and "bf16_with_mxfp8_mixed" in prov["fp8_attention"]
    run.write_text(RUN.format(recipe="qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config", extra=""))
    assert _intent(run)[1]["fp8_attention"] is True     # perf_recipes/qwen/common.py l.55
    run.write_text(RUN.format(recipe="llama3_8b_pretrain_config", extra=""))
    assert _intent(run)[1]["fp8_attention"] is False


@pytest.mark.parametrize(("extra", "want"), [
    ("mixed_precision=bf16_with_fp8_current_scaling_mixed model.fp8_dot_product_attention=true",
     False),      # replaced by mixed_precision's False at start-up
    ("mixed_precision.fp8_dot_product_attention=true", True),
    ("mixed_precision.fp8_multi_head_attention=true", True),
    ("mixed_precision.fp8_dot_product_attention=false", False),
    ("mixed_precision.fp8_dot_product_attention=$ATTN", None),
])
def test_the_launch_line(tmp_path: Path, extra: str, want: bool | None) -> None:
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(recipe="llama3_8b_pretrain_config", extra=extra))
    _, got, prov = _intent(run)
    if want is None:
        assert isinstance(got["fp8_attention"], Unknown)
    else:
        assert got["fp8_attention"] is want
    if "model." in extra:
        assert "replaced by mixed_precision" in prov["fp8_attention"]


def test_an_unknown_recipe_leaves_it_unknown(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(recipe="somebody_elses_config", extra=""))
    _, got, _ = _intent(run)
    assert isinstance(got["fp8_attention"], Unknown)
    run.write_text(RUN.format(recipe="somebody_elses_config",
                              extra="mixed_precision.fp8_dot_product_attention=true"))
    assert _intent(run)[1]["fp8_attention"] is True


SCRIPT = '''from megatron.bridge.recipes.llama import llama3_8b_pretrain_config as pretrain_config
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.mixed_precision import bf16_with_fp8_current_scaling_mixed
from megatron.bridge.training.pretrain import pretrain

cfg = pretrain_config()
{body}
pretrain(cfg, forward_step)
'''


@pytest.mark.parametrize(("body", "fp8", "want"), [
    ("cfg.mixed_precision = bf16_with_fp8_current_scaling_mixed()\n"
     "cfg.mixed_precision.fp8_dot_product_attention = True", True, True),
    ("cfg.mixed_precision = 'bf16_with_fp8_current_scaling_mixed'\n"
     "cfg.model.fp8_dot_product_attention = True", True, False),
    ("cfg.mixed_precision.fp8 = 'hybrid'\n"
     "cfg.mixed_precision.fp8_dot_product_attention = True", True, True),
])
def test_a_run_script(tmp_path: Path, body: str, fp8: bool, want: bool) -> None:
    script = tmp_path / "pretrain.py"
    script.write_text(SCRIPT.format(body=body))
    _, got, _ = _intent(script)
    assert got["fp8"] is fp8 and got["fp8_attention"] is want


def test_meg_0051_fires_on_fp8_attention_with_current_scaling(tmp_path: Path) -> None:
    # FP8 attention + tensorwise on TE 2.4-2.7: Float8CurrentScaling refuses fp8_dpa
    script = tmp_path / "pretrain.py"
    script.write_text(SCRIPT.format(
        body="cfg.mixed_precision = bf16_with_fp8_current_scaling_mixed()\n"
             "cfg.mixed_precision.fp8_dot_product_attention = True"))
    fired = {f.rule_id for f in preflight.check([str(script)], smoke=False,
                                                assume=ASSUME).findings}
    assert "FP8D-MEG-0051" in fired
    script.write_text(SCRIPT.format(
        body="cfg.mixed_precision = bf16_with_fp8_current_scaling_mixed()\n"
             "cfg.model.fp8_dot_product_attention = True"))
    fired = {f.rule_id for f in preflight.check([str(script)], smoke=False,
                                                assume=ASSUME).findings}
    assert "FP8D-MEG-0051" not in fired


@pytest.mark.parametrize(("dtype", "extra", "want"), [
    ("fp8_mx", "", None),          # the flat perf recipe may set it (qwen/common.py l.55)
    ("bf16", "", False),
    ("fp8_mx", " mixed_precision.fp8_dot_product_attention=false", False),
])
def test_the_performance_launcher(tmp_path: Path, dtype: str, extra: str,
                                  want: bool | None) -> None:
    run = tmp_path / "run.sh"
    run.write_text("python scripts/performance/setup_experiment.py -m qwen3 -mr qwen3_30b_a3b "
                   f"-g gb200 -c {dtype}{extra}\n")
    _, got, _ = _intent(run)
    if want is None:
        assert isinstance(got["fp8_attention"], Unknown)
    else:
        assert got["fp8_attention"] is want
