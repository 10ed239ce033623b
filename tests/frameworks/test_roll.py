"""ROLL read from its public pipeline YAML (fixtures/configs/roll, README cites the repository
and tag) and its launch line: the worker strategies, Megatron FP8 handed to the Megatron rules,
the vLLM / SGLang FP8 rollout (per tensor, per block), IS correction, and ROLL's rules firing
on the files (FP8 variants written as ROLL's fp8_rollout.md and mcore_adapter's
training_args.py say at v0.3.0)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import detect
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "roll"
MOE = FIX / "rlvr_config_moe.yaml"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.6.0",
        "pkg.megatron-core": "0.13.0", "pkg.torch": "2.8.0+cu128", "cuda.torch_build": "12.8",
        "pkg.vllm": "0.10.2"}
SC = "actor_train:\n  strategy_args:\n    strategy_name: megatron_train\n    strategy_config:\n"
INFER = "actor_infer:\n  strategy_args:\n    strategy_name: vllm\n    strategy_config:\n"


def _read(*paths: Path | str) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts


def _fired(paths: list[Path], assume: dict[str, str] | None = None) -> set[str]:
    report = preflight.check([str(p) for p in paths], smoke=False, assume=assume or H100)
    return {f.rule_id for f in report.findings}


def _variant(tmp_path: Path, old: str, new: str, name: str = "rlvr.yaml") -> Path:
    text = MOE.read_text()
    assert old in text
    out = tmp_path / name
    out.write_text(text.replace(old, new, 1))
    return out


def _fp8_rollout(tmp_path: Path, extra: str = "") -> Path:
    return _variant(tmp_path, "      sleep_level: 2", "      sleep_level: 2\n"
                    "      quantization: fp8\n" + extra)


def test_detected_as_roll_and_not_as_hf_trainer() -> None:
    data = parse_yaml(MOE.read_text()).data
    assert detect("yaml", data)[0] == "roll"
    # ROLL's top-level names without a worker section are no ROLL file (and no HF Trainer)
    top = {k: v for k, v in data.items() if k not in ("actor_train", "actor_infer",
                                                      "reference")}
    assert detect("yaml", top)[0] is None


def test_bf16_megatron_moe_read_and_handed_to_megatron() -> None:
    got, facts = _read(MOE)
    assert got["fp8"][0] is False and "training_args.py:263-268" in got["fp8"][1]
    assert got["distributed"][0] == "megatron" and got["stack"][0] == ["roll", "megatron"]
    assert (got["tp"][0], got["cp"][0], got["ep"][0]) == (1, 4, 4)
    assert got["sequence_parallel"][0] is True and got["precision"][0] == "bf16"
    assert facts["config.megatron.args_of"] == "roll"
    assert facts["config.megatron.pipeline_model_parallel_size"] == 2
    assert facts["config.megatron.use_distributed_optimizer"] is True
    assert facts["config.megatron.bf16"] is True and "config.megatron.fp8_format" not in facts
    # the rollout serves Qwen/Qwen3-30B-A3B-Base (published in BF16), no quantization
    assert got["rollout.engine"][0] == "vllm" and got["rollout.fp8"][0] is False
    assert got["rollout.is_correction"][0] is False
    assert facts["config.roll.moe"] is True


def test_megatron_fp8_training_hands_fp8_to_megatron(tmp_path: Path) -> None:
    path = _variant(tmp_path, "      moe_layer_recompute: true",
                    "      moe_layer_recompute: true\n      fp8: e4m3\n"
                    "      fp8_recipe: blockwise\n      fp8_param: true")
    got, facts = _read(path)
    assert got["fp8"][0] is True and got["fp8"][1].endswith("rlvr.yaml:66")
    assert (got["backend"][0], got["format"][0], got["recipe"][0]) == ("te", "e4m3",
                                                                        "blockwise")
    assert got["fp8_params"][0] is True
    assert facts["config.megatron.fp8_format"] == "e4m3"
    assert facts["config.megatron.fp8_recipe"] == "blockwise"
    assert facts["config.megatron.fp8_param_gather"] is True


def test_blockwise_fp8_training_meets_the_existing_rules(tmp_path: Path) -> None:
    path = _variant(tmp_path, "      moe_layer_recompute: true",
                    "      moe_layer_recompute: true\n      fp8: e4m3\n"
                    "      fp8_recipe: blockwise\n      fp8_param: true")
    # Float8BlockScaling needs torch built for CUDA 12.9: torch 2.8.0+cu128 here
    assert "FP8D-CUDA-0002" in _fired([path])
    assert "FP8D-CUDA-0002" not in _fired([path], {**H100, "pkg.torch": "2.9.1+cu129",
                                                   "cuda.torch_build": "12.9"})


def test_fp8_without_recipe_is_megatrons_delayed(tmp_path: Path) -> None:
    path = _variant(tmp_path, "      moe_layer_recompute: true",
                    "      moe_layer_recompute: true\n      fp8: hybrid")
    got, facts = _read(path)
    assert (got["fp8"][0], got["format"][0], got["recipe"][0]) == (True, "hybrid", "delayed")
    assert facts["config.megatron.fp8_recipe"] == "delayed"


def test_fsdp2_training_has_no_fp8_path(tmp_path: Path) -> None:
    path = _variant(tmp_path, "strategy_name: megatron_train", "strategy_name: fsdp2_train")
    got, facts = _read(path)
    assert got["fp8"][0] is False and got["distributed"][0] == "fsdp2"
    assert "config.megatron.args_of" not in facts and got["stack"][0] == ["roll"]


def test_unknown_strategy_is_unknown(tmp_path: Path) -> None:
    path = _variant(tmp_path, "strategy_name: megatron_train", "strategy_name: megatron_trian")
    got, _ = _read(path)
    assert isinstance(got["fp8"][0], Unknown) and "factory.py" in got["fp8"][0].reason


def test_fp8_rollout_per_tensor_of_moe_fires_roll_0001(tmp_path: Path) -> None:
    path = _fp8_rollout(tmp_path)
    got, _ = _read(path)
    assert (got["rollout.fp8"][0], got["rollout.recipe"][0]) == (True, "tensorwise")
    assert got["rollout.fp8"][1].endswith("rlvr.yaml:87")
    fired = _fired([path])
    assert "FP8D-ROLL-0001" in fired and "FP8D-RL-0001" in fired
    assert "FP8D-ROLL-0002" not in fired


def test_fp8_rollout_per_block_is_quiet_and_blockwise(tmp_path: Path) -> None:
    block = ("      hf_overrides:\n        quantization_config:\n"
             "          activation_scheme: dynamic\n          fmt: e4m3\n"
             "          quant_method: fp8\n          weight_block_size: [128, 128]\n")
    path = _fp8_rollout(tmp_path, block)
    got, _ = _read(path)
    assert got["rollout.recipe"][0] == "blockwise"
    fired = _fired([path])
    assert not fired & {"FP8D-ROLL-0001", "FP8D-ROLL-0002"}


def test_block_config_with_static_activations_fires_roll_0002(tmp_path: Path) -> None:
    block = ("      hf_overrides:\n        quantization_config:\n"
             "          activation_scheme: static\n          quant_method: fp8\n"
             "          weight_block_size: [128, 128]\n")
    assert "FP8D-ROLL-0002" in _fired([_fp8_rollout(tmp_path, block)])


def test_is_correction_quiets_rl_0001(tmp_path: Path) -> None:
    path = _fp8_rollout(tmp_path)
    text = path.read_text() + ("\ntrain_infer_correction:\n  is_weight:\n    enabled: true\n")
    path.write_text(text)
    got, _ = _read(path)
    assert got["rollout.is_correction"][0] is True
    assert "FP8D-RL-0001" not in _fired([path])


def test_ratio_filter_is_a_correction(tmp_path: Path) -> None:
    path = _fp8_rollout(tmp_path)
    path.write_text(path.read_text() + "\ntrain_infer_correction:\n  filters:\n"
                    "    - enabled: true\n      ratio_low: 0.8\n")
    got, _ = _read(path)
    assert got["rollout.is_correction"][0] is True


def test_sglang_kv_cache_fp8(tmp_path: Path) -> None:
    path = _variant(tmp_path, "strategy_name: vllm", "strategy_name: sglang")
    path.write_text(path.read_text().replace("      sleep_level: 2",
                                             "      sleep_level: 2\n      kv_cache_dtype: fp8_e4m3"))
    got, _ = _read(path)
    assert (got["rollout.engine"][0], got["rollout.kv_cache_fp8"][0]) == ("sglang", True)


def test_sglang_before_0_4_6_post4_fires_roll_0003(tmp_path: Path) -> None:
    path = _variant(tmp_path, "strategy_name: vllm", "strategy_name: sglang")
    path.write_text(path.read_text().replace("      sleep_level: 2",
                                             "      sleep_level: 2\n      quantization: fp8"))
    assert "FP8D-ROLL-0003" in _fired([path], {**H100, "pkg.sglang": "0.4.6.post1"})
    assert "FP8D-ROLL-0003" not in _fired([path], {**H100, "pkg.sglang": "0.5.2"})


def test_interpolation_resolved(tmp_path: Path) -> None:
    path = _variant(tmp_path, "pretrain: Qwen/Qwen3-30B-A3B-Base",
                    "model_dir: Qwen/Qwen3-30B-A3B-FP8\npretrain: ${model_dir}")
    got, _ = _read(path)
    assert got["rollout.fp8"][0] is True      # the FP8 release, by its name


def _job(tmp_path: Path) -> Path:
    """The fixtures where ROLL's checkout holds them: examples/<dir>/, the start script beside."""
    folder = tmp_path / "examples" / "qwen3-30BA3B-rlvr_megatron"
    folder.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    shutil.copy(MOE, folder / MOE.name)
    shutil.copy(FIX / "run_rlvr_pipeline.sh", folder / "run_rlvr_pipeline.sh")
    (tmp_path / "examples" / "start_rlvr_pipeline.py").write_text(
        "from roll.pipeline.rlvr.rlvr_pipeline import RLVRPipeline\n")
    return folder / "run_rlvr_pipeline.sh"


def test_launch_line_reads_the_config_beside_the_script(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    script = _job(tmp_path)
    monkeypatch.chdir(tmp_path)
    got, facts = _read(script)
    assert facts["config.roll.entry"] == "examples/start_rlvr_pipeline.py"
    assert str(facts["config.roll.base_config"]).endswith("rlvr_config_moe.yaml")
    assert got["fp8"][0] is False and got["ep"][0] == 4


def test_launch_line_config_not_found_is_unknown(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    script = _job(tmp_path)
    script.write_text(script.read_text().replace("rlvr_config_moe", "missing_config"))
    monkeypatch.chdir(tmp_path)
    got, facts = _read(script)
    assert isinstance(facts["config.roll.base_config"], Unknown)
    assert isinstance(got["fp8"][0], Unknown)      # never "no" from a config not read


def test_critic_alone_claims_nothing() -> None:
    # `critic` is in frameworks/_claim.py GENERIC: a verl-like file with a critic section and
    # ROLL-like top keys is not ROLL's without one of ROLL's own worker sections
    data = {"critic": {"strategy_args": {"strategy_name": "megatron_train"}},
            "exp_name": "x", "pretrain": "m", "rollout_batch_size": 8, "adv_estimator": "gae"}
    assert detect("yaml", data)[0] is None
