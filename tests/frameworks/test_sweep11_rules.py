"""Rules of sweep11 checked end to end on a job as written (read, derive, evaluate): the
Megatron-Bridge MXFP8 preset of releases before 0.1.0rc3 with the hybrid format (FP8D-MBR-0002,
mixed_precision.py at v0.1.0rc2 l.219-230) and Cosmos-RL's FP8 switched off on torch < 2.7
(FP8D-COSMOS-0001, cosmos_rl/utils/fp8/fp8_util.py l.32-38 at v0.4.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import api


def _fired(job: Path, monkeypatch: pytest.MonkeyPatch, path: str, assume: dict[str, str],
           rule: str) -> list[str]:
    monkeypatch.chdir(job)
    report = api.check([path], assume={"gpu": "H100", **assume})
    return [str(f.location) for f in report.findings if f.rule_id == rule]


@pytest.mark.parametrize("version, line, fires", [
    ("0.1.0rc2", "mixed_precision=bf16_with_mxfp8_mixed", True),
    ("0.1.0rc3", "mixed_precision=bf16_with_mxfp8_mixed", False),
    ("0.1.0rc2", "mixed_precision=bf16_with_mxfp8_mixed mixed_precision.fp8=e4m3", False),
    ("0.1.0rc2", "mixed_precision=bf16_with_fp8_current_scaling_mixed", False),
])
def test_bridge_mxfp8_preset_before_rc3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        version: str, line: str, fires: bool) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=8 scripts/training/run_recipe.py "
                                     f"--recipe llama3_8b_pretrain_config {line}\n")
    hits = _fired(tmp_path, monkeypatch, "run.sh", {"pkg.megatron-bridge": version,
                                                    "pkg.megatron-core": "0.14.0",
                                                    "pkg.transformer-engine": "2.8.0"},
                  "FP8D-MBR-0002")
    assert bool(hits) is fires
    if fires:
        assert hits[0].endswith("run.sh:1")


@pytest.mark.parametrize("torch, fires", [("2.6.0", True), ("2.7.1", False)])
def test_cosmos_fp8_on_old_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torch: str,
                                 fires: bool) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "cfg.toml").write_text(
        "redis = \"12800\"\n\n[train]\ntrain_batch_per_replica = 32\n\n"
        "[train.fp8]\nenable_fp8 = true\nquant_recipe = \"rowwise\"\n\n"
        "[policy]\nmodel_name_or_path = \"Qwen/Qwen3-8B\"\n")
    (tmp_path / "launch.sh").write_text("cosmos-rl --config cfg.toml grpo.py\n")
    hits = _fired(tmp_path, monkeypatch, "launch.sh", {"pkg.torch": torch, "pkg.torchao": "0.12.0",
                                                       "pkg.cosmos-rl": "0.4.4"},
                  "FP8D-COSMOS-0001")
    assert bool(hits) is fires
    if fires:
        assert hits[0].endswith("cfg.toml:7")           # enable_fp8 = true
