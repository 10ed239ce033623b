"""The RL-stack and NeMo-Automodel rules fire on real public files changed by the one setting
each rule is about (fixtures cite repository and commit; the rest is tests/scenarios/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import preflight

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
NRL = FIX / "nemo_rl" / "examples" / "configs"
H100 = {"gpu": "H100", "pkg.transformer-engine": "2.8.0", "pkg.megatron-core": "0.14.0"}


def _fired(paths: list[Path], assume: dict[str, str]) -> set[str]:
    report = preflight.check([str(p) for p in paths], smoke=False, assume=assume)
    return {f.rule_id for f in report.findings}


def test_nemo_rl_fp8_kv_cache_over_bf16_weights_is_named(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(NRL, tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "configs" / "kv_only.yaml"
    cfg.write_text("defaults: grpo_math_1B.yaml\npolicy:\n  generation:\n    vllm_cfg:\n"
                   "      kv_cache_dtype: fp8\n")
    assert "FP8D-NRL-0001" in _fired([cfg], {**H100, "pkg.nemo-rl": "0.7.0"})
    recipe = tmp_path / "configs" / "recipes" / "llm" / \
        "grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml"
    assert "FP8D-NRL-0001" not in _fired([recipe], {**H100, "pkg.nemo-rl": "0.7.0"})


def test_automodel_te_fp8_with_torch_linear_layers(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    src = FIX / "automodel" / "deepseek_v3_te_mxfp8_gb200.yaml"
    cfg = tmp_path / src.name
    text = src.read_text()
    cfg.write_text(text.replace("    linear: te\n", "    linear: torch\n", 1)
                   .replace("    dispatcher: hybridep", "    dispatcher: torch", 1))
    monkeypatch.chdir(tmp_path)
    assume = {"gpu": "B200", "pkg.transformer-engine": "2.12.0", "pkg.nemo-automodel": "0.5.0"}
    assert "FP8D-AUTOMODEL-0001" in _fired([cfg], assume)
    # as published: TE Linear layers (and TE experts with the HybridEP dispatcher)
    assert "FP8D-AUTOMODEL-0001" not in _fired([src], assume)
