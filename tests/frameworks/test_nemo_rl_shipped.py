"""NeMo-RL recipes whose base config is one NeMo-RL ships, not in the job (issue 22; held-out
and tuning benchmark jobs nemo-rl-qwen3-8b-fp8-kvcache, nemo-rl-dapo-qwen35-9b-fp8,
nemo-rl-1551-fp8-tp4-packing): what the shipped base sets alike at every release read
(preflight/data/nemo_rl_shipped.json, tools/nemo_rl_shipped.py over NVIDIA-NeMo/RL v0.4.0 ..
7ea279ab) is taken, with that provenance; what changed between releases, and every base the table
does not know, stays undetermined."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks.nemo_rl import BASE_DECIDES
from preflight.frameworks.nemo_rl_shipped import _DATA, lookup
from preflight.intent import derive
from preflight.jobs.read import read_paths

# reduced from NVIDIA-NeMo/RL 50972b9c examples/configs/recipes/llm/
# grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml: FP8 rollout and KV cache, Megatron on,
# fp8_cfg left to grpo_math_1B.yaml (enabled false at every release)
KV = """defaults: ../../grpo_math_1B.yaml
loss_fn:
  use_importance_sampling_correction: true
policy:
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 4
  generation:
    vllm_cfg:
      precision: fp8
      kv_cache_dtype: fp8
"""
# as NeMo-RL issue 1551 quotes it (cut after fp8: "e4m3"): the recipe is in the base
ISSUE = """defaults: "grpo_math_8B_megatron.yaml"
policy:
  generation:
    vllm_cfg:
      precision: "fp8"
  megatron_cfg:
    tensor_model_parallel_size: 4
    fp8_cfg:
      enabled: true
      fp8: "e4m3"
"""


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k)) for k, v in values.items()}


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A recipe under examples/configs/recipes/llm/, its base two folders up (outside the job
    root the recipe gives), run from an empty folder beside it."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    llm = tmp_path / "repo" / "examples" / "configs" / "recipes" / "llm"
    llm.mkdir(parents=True)
    return llm


def test_a_shipped_base_outside_the_job_decides_training_precision(outside: Path) -> None:
    recipe = outside / "grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml"
    recipe.write_text(KV)
    # the base outside the job holds a secret-free FP8 switch the table does not rely on: never
    # read (the boundary), the table decides
    (outside.parents[1] / "grpo_math_1B.yaml").write_text(
        "policy:\n  megatron_cfg:\n    fp8_cfg:\n      enabled: true\n")
    intent = _intent(recipe)
    assert intent["fp8"][0] is False
    assert "NeMo-RL's shipped examples/configs/grpo_math_1B.yaml" in intent["fp8"][1]
    assert intent["rollout.fp8"][0] is True and intent["rollout.kv_cache_fp8"][0] is True
    assert intent["tp"] == (4, f"{recipe}:7")                  # the recipe's own wins
    assert intent["packing"][0] is True                        # the shipped base's


def test_a_shipped_base_not_found_keeps_what_changed_between_releases_unknown(
        tmp_path: Path) -> None:
    recipe = tmp_path / "grpo_fp8.yaml"
    recipe.write_text(ISSUE)
    intent = _intent(recipe)
    assert intent["fp8"][0] is True and intent["backend"][0] == "te"
    assert "grpo_math_8B_megatron.yaml" in intent["distributed"][1]
    assert intent["packing"][0] is True
    # fp8_cfg.fp8_recipe: absent before v0.6.0, "blockwise" since: not taken from the table, and
    # the packed-row multiple that depends on it is no default 16
    assert isinstance(intent["recipe"][0], Unknown)
    assert isinstance(intent["pad_multiple"][0], Unknown)


def test_a_base_nemo_rl_does_not_ship_stays_unknown(tmp_path: Path) -> None:
    recipe = tmp_path / "mine-fp8.yaml"
    recipe.write_text(ISSUE.replace("grpo_math_8B_megatron.yaml", "my_own_base.yaml"))
    intent = _intent(recipe)
    assert isinstance(intent["fp8"][0], Unknown)       # megatron_cfg.enabled is the base's
    assert lookup("my_own_base.yaml") is None


def test_the_table_holds_only_settings_the_reader_asks_for() -> None:
    doc = json.loads(_DATA.read_text("utf-8"))
    assert len(doc["configs"]) > 20
    for path, entry in doc["configs"].items():
        assert path.startswith("examples/configs/") and entry["read_at"], path
        assert set(entry["values"]) <= set(BASE_DECIDES), path
    assert lookup("/x/examples/configs/grpo_math_1B.yaml") is not None
    shipped = lookup("somewhere/grpo_math_8B_megatron.yaml")
    assert shipped is not None and shipped.values["policy.megatron_cfg.enabled"] is True


def test_is_mx_is_an_mxfp8_rollout(tmp_path: Path) -> None:
    # NeMo-RL 7ea279ab examples/configs/recipes/llm/performance/
    # grpo-qwen3-30ba3b-4n4g-mxfp8-rollout.yaml (reduced): precision fp8 with is_mx true swaps
    # in ModelOpt's MXFP8 methods (nemo_rl/models/generation/vllm/quantization/fp8.py l.147-212)
    base = tmp_path / "base.yaml"
    base.write_text("policy:\n  precision: bfloat16\n  megatron_cfg:\n    enabled: true\n"
                    "  generation:\n    backend: vllm\n")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("defaults: base.yaml\npolicy:\n  generation:\n    vllm_cfg:\n"
                      '      precision: "fp8"\n      is_mx: true\n')
    intent = _intent(recipe)
    assert intent["rollout.fp8"][0] is True
    assert intent["rollout.recipe"] == ("mxfp8", f"{recipe}:6")
    recipe.write_text("defaults: base.yaml\npolicy:\n  generation:\n    vllm_cfg:\n"
                      '      precision: "fp8"\n')
    assert _intent(recipe)["rollout.recipe"][0] == "blockwise"


# NVIDIA-NeMo/RL PR 1175 (2025-09-21): the e2e FP8 usage, overrides of a shipped --config that
# the job does not hold (benchmarks/realjobs/holdout7-nemo-rl-1175-*)
PR_1175 = """#!/bin/bash
uv run examples/run_grpo_math.py \\
--config {config} \\
cluster.num_nodes=2 \\
policy.generation.vllm_cfg.precision="fp8" \\
loss_fn.use_importance_sampling_correction=True \\
+policy.megatron_cfg.fp8_cfg.enabled=true \\
+policy.megatron_cfg.fp8_cfg.fp8=e4m3 \\
+policy.megatron_cfg.fp8_cfg.fp8_recipe=blockwise \\
+policy.megatron_cfg.fp8_cfg.fp8_param=false
"""


def test_a_shipped_config_named_by_the_launch_line_decides_the_backend(tmp_path: Path) -> None:
    """megatron_cfg.enabled is true in examples/configs/grpo_math_qwen30ba3b_megatron.yaml at
    every release read (v0.4.0 .. v0.7.0): the explicit fp8_cfg overrides apply."""
    path = tmp_path / "run.sh"
    path.write_text(PR_1175.format(config="examples/configs/grpo_math_qwen30ba3b_megatron.yaml"))
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert (values["intent.backend"], values["intent.recipe"]) == ("te", "blockwise")
    assert values["intent.distributed"] == "megatron"
    assert "grpo_math_qwen30ba3b_megatron.yaml" in str(prov["intent.distributed"])


@pytest.mark.parametrize("config", ["my_base.yaml",
                                    # a shipped file's name outside examples/configs/: not taken
                                    "configs/grpo_math_qwen30ba3b_megatron.yaml"])
def test_fp8_overrides_on_a_base_not_known_stay_unknown_naming_the_switch(
        tmp_path: Path, config: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text(PR_1175.format(config=config))
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    fp8 = values["intent.fp8"]
    assert isinstance(fp8, Unknown)
    assert "policy.megatron_cfg.enabled" in fp8.reason and config in fp8.reason
