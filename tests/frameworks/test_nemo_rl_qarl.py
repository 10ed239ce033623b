"""NeMo-RL QARL K/V recipes (frameworks/nemo_rl_qarl.py, read at NVIDIA-NeMo/RL d8850452):
``policy.generation.quant_cfg: .../kv_cache_fp8.yaml`` is simulated (fake-quantized) FP8 K/V in
vLLM, "This path does not enable vLLM's native FP8 KV-cache storage": a config fact
(``config.nemo_rl.rollout_kv_fake_quant``), never ``intent.rollout.kv_cache_fp8`` true. Firing
(the shipped name, a recipe YAML inside the job), quiet (no quant_cfg, NVFP4 weight recipes) and
hostile (a recipe outside the job, a YAML that is not a recipe, a path that names the shipped
file's basename elsewhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

KV_FP8 = """metadata:
  recipe_type: ptq
quantize:
  algorithm: max
  quant_cfg:
    - quantizer_name: '*'
      enable: false
    - quantizer_name: '*[kv]_bmm_quantizer'
      enable: true
      cfg:
        num_bits: e4m3
        use_constant_amax: true
"""


def _read(folder: Path, policy_cfg: str, generation_cfg: str, kv_dtype: str = "auto",
          precision: str = "bfloat16") -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    recipe = folder / "grpo.yaml"
    recipe.write_text(
        "policy:\n  precision: bfloat16\n"
        f"{policy_cfg}"
        "  megatron_cfg:\n    enabled: true\n"
        "  generation:\n    backend: vllm\n"
        f"{generation_cfg}"
        f"    vllm_cfg:\n      precision: {precision}\n      kv_cache_dtype: {kv_dtype}\n"
        "loss_fn:\n  use_importance_sampling_correction: false\n")
    read = read_paths([str(recipe)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return dict(read.facts), values, dict(read.provenance)


SHIPPED = "examples/modelopt/quant_configs/kv_cache_fp8.yaml"


def test_the_shipped_kv_recipe_is_simulated_fp8_kv(tmp_path: Path) -> None:
    facts, values, prov = _read(tmp_path, f"  quant_cfg: {SHIPPED}\n",
                                f"    quant_cfg: {SHIPPED}\n")
    assert facts["config.nemo_rl.rollout_kv_fake_quant"] == "fp8"
    assert facts["config.nemo_rl.policy_kv_fake_quant"] == "fp8"
    assert str(prov["config.nemo_rl.rollout_kv_fake_quant"]).endswith("grpo.yaml:8")
    # fake quantization: vLLM's KV cache keeps kv_cache_dtype auto, no FP8 compute anywhere
    assert values["intent.rollout.kv_cache_fp8"] is False
    assert values["intent.rollout.fp8"] is False
    assert values["intent.fp8"] is False


def test_a_recipe_inside_the_job_is_read(tmp_path: Path) -> None:
    (tmp_path / "my_kv.yaml").write_text(KV_FP8)
    facts, values, _ = _read(tmp_path, "", "    quant_cfg: my_kv.yaml\n")
    assert facts["config.nemo_rl.rollout_kv_fake_quant"] == "fp8"
    assert "config.nemo_rl.policy_kv_fake_quant" not in facts
    assert values["intent.rollout.kv_cache_fp8"] is False
    (tmp_path / "my_kv.yaml").write_text(KV_FP8.replace("e4m3", "e2m1"))
    facts, _, _ = _read(tmp_path, "", "    quant_cfg: my_kv.yaml\n")
    assert facts["config.nemo_rl.rollout_kv_fake_quant"] == "nvfp4"


@pytest.mark.parametrize(("value", "expected"), [
    ("examples/modelopt/quant_configs/nvfp4_a16.yaml", "none"),
    ("NVFP4_DEFAULT_CFG", "none"),
    ("general/ptq/nvfp4_default-fp8_kv", "fp8"),
    ("examples/modelopt/quant_configs/kv_cache_nvfp4.yaml", "nvfp4"),
])
def test_names_nemo_rl_and_modelopt_ship(tmp_path: Path, value: str, expected: str) -> None:
    facts, values, _ = _read(tmp_path, "", f"    quant_cfg: {value}\n")
    assert facts["config.nemo_rl.rollout_kv_fake_quant"] == expected
    assert values["intent.rollout.kv_cache_fp8"] is False


def test_no_quant_cfg_no_fact(tmp_path: Path) -> None:
    facts, _, _ = _read(tmp_path, "", "    quant_cfg: null\n")
    assert "config.nemo_rl.rollout_kv_fake_quant" not in facts


def test_a_native_fp8_kv_cache_is_still_read(tmp_path: Path) -> None:
    _, values, _ = _read(tmp_path, "", f"    quant_cfg: {SHIPPED}\n", kv_dtype="fp8",
                        precision="fp8")
    assert values["intent.rollout.kv_cache_fp8"] is True


@pytest.mark.parametrize("value", [
    "/absolute/path/to/my_recipe.yaml",          # outside the job: not read
    "/data/other/kv_cache_fp8.yaml",             # the shipped basename elsewhere: not the same
    "my_notes.txt",                              # no ModelOpt name, no YAML
    "not_a_recipe.yaml",                          # inside the job, no quantize block
    "[1, 2]",                                     # not a string
])
def test_what_is_not_read_is_unknown(tmp_path: Path, value: str) -> None:
    (tmp_path / "not_a_recipe.yaml").write_text("a: 1\n")
    facts, values, _ = _read(tmp_path, "", f"    quant_cfg: {value}\n")
    assert isinstance(facts["config.nemo_rl.rollout_kv_fake_quant"], Unknown)
    assert values["intent.rollout.kv_cache_fp8"] is False
