"""NeMo-RL ``generation.backend: dynamo``: BF16 only (its validator refuses the rest,
nemo_rl/models/generation/dynamo/config.py l.168-191 at 7ea279ab): a BF16 config is a BF16 rollout;
one asking for FP8 is Unknown, never a quiet FP8 rollout (holdout15 nanov3 dynamo control)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

BASE = ("policy:\n  precision: bfloat16\n  megatron_cfg:\n    enabled: true\n"
        "  generation:\n    backend: dynamo\n    vllm_cfg:\n      kv_cache_dtype: auto\n")


def _intent(folder: Path, vllm_cfg: str) -> dict[str, Any]:
    (folder / "base.yaml").write_text(BASE)
    recipe = folder / "recipe.yaml"
    recipe.write_text("defaults: base.yaml\nloss_fn:\n  use_importance_sampling_correction: "
                      "false\npolicy:\n  generation:\n    vllm_cfg:\n" + vllm_cfg)
    read = read_paths([str(recipe)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k)) for k, v in values.items()}


@pytest.mark.parametrize("precision", ["bfloat16", "BF16", '"bf16"'])
def test_a_bf16_dynamo_rollout_is_not_fp8(tmp_path: Path, precision: str) -> None:
    intent = _intent(tmp_path, f"      precision: {precision}\n")
    assert intent["rollout.fp8"][0] is False
    assert intent["rollout.fp8"][1].endswith("recipe.yaml:7")
    assert intent["rollout.kv_cache_fp8"][0] is False


@pytest.mark.parametrize("vllm_cfg", [
    "      precision: fp8\n",                                   # refused: BF16 only
    "      precision: float16\n",
    "      precision: bfloat16\n      kv_cache_dtype: fp8\n",     # kv cache refused
    "      precision: bfloat16\n      is_mx: true\n",            # MXFP8 refused
    "      precision: [1, 2]\n",                                 # hostile: not a string
])
def test_what_the_dynamo_validator_refuses_is_unknown(tmp_path: Path, vllm_cfg: str) -> None:
    intent = _intent(tmp_path, vllm_cfg)
    assert any(isinstance(intent[k][0], Unknown) for k in ("rollout.fp8", "rollout.kv_cache_fp8")
               if k in intent)
    assert intent["rollout.fp8"][0] is not True


def test_the_vllm_backend_still_reads_fp8(tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text(BASE.replace("dynamo", "vllm")
                                     + "      precision: fp8\n")
    read = read_paths([str(tmp_path / "v.yaml")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.rollout.fp8"] is True
