"""SkyRL read from its public launch scripts (fixtures/configs/skyrl, README cites repository and
commit): rollout FP8, KV cache, TIS correction, training engine and Megatron FP8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "skyrl"


def _read(path: Path | str) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read


def _line(source: str) -> tuple[str, int]:
    path, _, line = source.rpartition(":")
    return Path(path).name, int(line)


def _variant(tmp_path: Path, base: str, *extra: str, replace: tuple[str, str] = ("", "")) -> Path:
    text = (FIX / base).read_text()
    if replace[0]:
        text = text.replace(*replace)
    text = text.replace("  $@", "".join(f"  {e} \\\n" for e in extra) + "  $@")
    out = tmp_path / "run.sh"
    out.write_text(text)
    return out


def test_sql_fp8_rollout_with_sequence_tis() -> None:
    intent, read = _read(FIX / "run_skyrl_sql_fp8.sh")
    assert [k for _, k in read.files] == ["skyrl"]
    assert intent["rollout.fp8"][0] is True
    assert _line(intent["rollout.fp8"][1]) == ("run_skyrl_sql_fp8.sh", 62)
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.recipe"][0] == "tensorwise"
    assert intent["rollout.is_correction"][0] is True     # tis_ratio_type=$TIS_TYPE (sequence)
    assert _line(intent["rollout.is_correction"][1])[1] == 29
    assert intent["rollout.kv_cache_fp8"][0] is False
    assert intent["fp8"][0] is False and intent["precision"][0] == "bf16"
    assert intent["distributed"][0] == "fsdp2"
    assert intent["stack"][0] == ["skyrl"]
    assert intent["num_gpus"][0] == 8 and intent["micro_batch"][0] == 1
    assert intent["seq_len"][0] == 6000 + 3000


def test_megatron_bf16_runs_on_megatron() -> None:
    intent, _ = _read(FIX / "run_megatron.sh")
    assert intent["distributed"][0] == "megatron"
    assert "megatron" in intent["stack"][0]
    assert intent["fp8"][0] is False
    assert intent["rollout.fp8"][0] is False
    assert intent["rollout.is_correction"][0] is False
    assert intent["tp"][0] == 2 and intent["cp"][0] == 1


def test_megatron_fp8_training_from_transformer_config_kwargs(tmp_path: Path) -> None:
    path = _variant(tmp_path, "run_megatron.sh",
                    "trainer.policy.megatron_config.transformer_config_kwargs.fp8=hybrid",
                    "trainer.policy.megatron_config.transformer_config_kwargs.fp8_recipe=blockwise",
                    "generator.inference_engine.engine_init_kwargs.kv_cache_dtype=fp8_e4m3",
                    "trainer.algorithm.use_tis=true")
    intent, _ = _read(path)
    assert intent["fp8"][0] is True and intent["backend"][0] == "te"
    assert intent["format"][0] == "hybrid" and intent["recipe"][0] == "blockwise"
    assert intent["rollout.kv_cache_fp8"][0] is True
    assert intent["rollout.is_correction"][0] is True     # deprecated use_tis still counts


def test_fp8_kwargs_on_fsdp_are_not_fp8_training(tmp_path: Path) -> None:
    path = _variant(tmp_path, "run_skyrl_sql_fp8.sh",
                    "trainer.policy.megatron_config.transformer_config_kwargs.fp8=e4m3")
    intent, _ = _read(path)
    assert intent["fp8"][0] is False
    assert "Megatron" in intent["fp8"][1]


def test_quantization_from_the_environment_is_unknown(tmp_path: Path) -> None:
    path = _variant(tmp_path, "run_megatron.sh",
                    "generator.inference_engine.engine_init_kwargs.quantization=$QUANT")
    intent, _ = _read(path)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_old_skyrl_train_layout() -> None:
    """skyrl-train (bffec2a5): engine keys under generator., strategy fsdp2; the backend comes
    from ${INFERENCE_BACKEND:=vllm}, which the environment may change."""
    intent, read = _read(FIX / "run_gsm8k_skyrl_train.sh")
    assert [k for _, k in read.files] == ["skyrl"]
    assert intent["distributed"][0] == "fsdp2"
    assert intent["rollout.fp8"][0] is False
    assert intent["fp8"][0] is False


def test_old_layout_fp8_and_own_config_name(tmp_path: Path) -> None:
    path = _variant(tmp_path, "run_gsm8k_skyrl_train.sh",
                    "+generator.engine_init_kwargs.quantization=fp8")
    intent, _ = _read(path)
    assert intent["rollout.fp8"][0] is True
    own = _variant(tmp_path, "run_gsm8k_skyrl_train.sh",
                   replace=("skyrl_train.entrypoints.main_base",
                            "skyrl_train.entrypoints.main_base --config-name my_exp"))
    intent, _ = _read(own)
    # what the job's own config sets is not known: never answered from the packaged defaults
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert isinstance(intent["precision"][0], Unknown)
    assert intent["distributed"][0] == "fsdp2"     # the launch line's override still wins


@pytest.mark.parametrize("line", [
    "python -m skyrl.train.entrypoints.main_base trainer.strategy=fsdp",
    "uv run --isolated --extra fsdp -m skyrl.train.entrypoints.main_base trainer.bf16=false",
    "python skyrl/train/entrypoints/main_base.py trainer.strategy=fsdp",
])
def test_launch_detected(tmp_path: Path, line: str) -> None:
    path = tmp_path / "go.sh"
    path.write_text(line + "\n")
    intent, read = _read(path)
    assert [k for _, k in read.files] == ["skyrl"]
    assert intent["rollout.fp8"][0] is False


def test_record_is_one_module() -> None:
    fw = BY_KIND["skyrl"]
    assert fw.launch is not None and fw.rule_area == "SKYRL"
    assert set(fw.distributions) == {"skyrl", "skyrl-train"}
    assert fw.derive.__module__ == "preflight.frameworks.skyrl"


def test_plus_prefix_is_refused_by_the_new_layout_only(tmp_path: Path) -> None:
    path = _variant(tmp_path, "run_megatron.sh",
                    "+generator.inference_engine.engine_init_kwargs.quantization=fp8")
    _, read = _read(path)
    bad = [p for p in read.problems if p.path == str(path) and p.code != "runtime_args"]
    assert len(bad) == 1 and bad[0].level == "error"
    assert bad[0].line == (FIX / "run_megatron.sh").read_text().count("\n", 0, (
        FIX / "run_megatron.sh").read_text().index("  $@")) + 1
    old = _variant(tmp_path, "run_gsm8k_skyrl_train.sh",
                   "+generator.engine_init_kwargs.quantization=fp8")
    _, read = _read(old)
    assert not [p for p in read.problems if p.path == str(old) and p.code != "runtime_args"]


# a job's own entry point on SkyRL's, as SkyRL's examples/train/algorithms/dapo/main_dapo.py at
# 19b0e132 (reduced: the BasePPOExp subclass and its from_cli_overrides) and skyrl-train's
# examples/algorithms/dapo/main_dapo.py at bffec2a5 (@hydra.main over ppo_base_config)
NEW_MAIN = """import sys
from skyrl.train.config import AlgorithmConfig, make_config
from skyrl.train.entrypoints.main_base import BasePPOExp

DAPOConfig = make_config(algorithm_cls=AlgorithmConfig)

class DAPOExp(BasePPOExp):
    pass

def main() -> None:
    cfg = DAPOConfig.from_cli_overrides(sys.argv[1:])
"""
OLD_MAIN = """import hydra
from skyrl_train.entrypoints.main_base import BasePPOExp, config_dir, validate_cfg

@hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
def main(cfg) -> None:
    pass
"""


@pytest.mark.parametrize(("main", "key", "old"), [
    (NEW_MAIN, "generator.inference_engine.engine_init_kwargs.quantization", False),
    (OLD_MAIN, "generator.engine_init_kwargs.quantization", True),
])
def test_a_jobs_own_entry_point_on_main_base(tmp_path: Path, main: str, key: str,
                                              old: bool) -> None:
    pkg = tmp_path / "examples" / "algorithms" / "dapo"
    pkg.mkdir(parents=True)
    (pkg / "main_dapo.py").write_text(main)
    run = tmp_path / "run_dapo.sh"
    run.write_text("uv run --isolated --extra fsdp -m examples.algorithms.dapo.main_dapo \\\n"
                   "  trainer.policy.model.path=Qwen/Qwen2.5-7B \\\n"
                   f"  {key}=fp8 \\\n  trainer.strategy=fsdp2\n")
    intent, read = _read(run)
    assert [k for _, k in read.files] == ["skyrl"]
    assert read.facts["config.skyrl.entry"] == "examples.algorithms.dapo.main_dapo"
    assert read.facts["config.skyrl.entry_base"].startswith("skyrl_train" if old else "skyrl.")
    assert read.provenance["config.skyrl.entry_base"].line == (3 if not old else 2)
    assert intent["rollout.fp8"][0] is True and intent["fp8"][0] is False
    assert _line(intent["rollout.fp8"][1]) == ("run_dapo.sh", 3)


def test_an_entry_point_that_is_not_skyrls_is_not_read_as_skyrl(tmp_path: Path) -> None:
    pkg = tmp_path / "mine"
    pkg.mkdir()
    (pkg / "main_x.py").write_text("import verl\n")
    run = tmp_path / "run.sh"
    run.write_text("python -m mine.main_x trainer.policy.model.path=Qwen/Qwen2.5-7B "
                   "generator.backend=vllm\n")
    read = read_paths([str(run)], None)
    assert "skyrl" not in [k for _, k in read.files]
    # not found here (readfix7, holdout5): the SkyRL-only overrides are SkyRL's, over the
    # layout they belong to (generator.backend: skyrl-train), the base it builds on Unknown
    (pkg / "main_x.py").unlink()
    intent, read = _read(run)
    assert [k for _, k in read.files] == ["skyrl"]
    assert isinstance(read.facts["config.skyrl.entry_base"], Unknown)
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["distributed"][0] == "fsdp2"               # skyrl-train's default strategy
    assert "not in the job" in intent["distributed"][1]


# SkyRL's own example entries are run from the checkout's top (`uv run ... -m
# examples.train.algorithms.dapo.main_dapo`, examples/train/megatron/run_megatron_dapo_qwen3.5_9b.sh
# @ 6ec5417e); holdout5 ships the launch script only.
DAPO_LINE = ("uv run --isolated --extra megatron -m examples.train.algorithms.dapo.main_dapo \\\n"
             "  trainer.policy.model.path=Qwen/Qwen3.5-9B \\\n"
             "  trainer.strategy=megatron \\\n"
             "  generator.inference_engine.backend=vllm \\\n")


def test_an_entry_module_not_in_the_job_keeps_the_lines_settings(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(DAPO_LINE + "  trainer.policy.megatron_config.tensor_model_parallel_size=4\n")
    intent, read = _read(run)
    assert [k for _, k in read.files] == ["skyrl"]
    assert [p for p in read.problems if p.level == "error"] == []
    base = read.facts["config.skyrl.entry_base"]
    assert isinstance(base, Unknown) and "not in the job" in base.reason
    assert intent["fp8"][0] is False and intent["rollout.fp8"][0] is False
    assert intent["tp"][0] == 4 and intent["distributed"][0] == "megatron"


def test_an_entry_module_is_found_from_the_job_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()                      # a clone: its top is a job root
    pkg = tmp_path / "examples" / "train" / "algorithms" / "dapo"
    pkg.mkdir(parents=True)
    (pkg / "main_dapo.py").write_text(NEW_MAIN)
    run = tmp_path / "examples" / "train" / "megatron" / "run.sh"
    run.parent.mkdir(parents=True)
    run.write_text(DAPO_LINE + "  trainer.algorithm.use_kl_loss=false\n")
    _, read = _read(run)
    assert read.facts["config.skyrl.entry_base"] == "skyrl.train.entrypoints.main_base"
    assert read.provenance["config.skyrl.entry_base"].path == str(pkg / "main_dapo.py")


def test_an_entry_module_not_in_the_job_whose_layout_is_unknown(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("python -m mine.main_x trainer.policy.model.path=Qwen/Qwen2.5-7B\n")
    intent, _ = _read(run)
    assert isinstance(intent["distributed"][0], Unknown)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


@pytest.mark.parametrize(("sync", "recipe"), [("blockwise", "blockwise"), ("mxfp8", "mxfp8")])
def test_top_level_megatron_fp8_fields_and_fp8_weight_sync(tmp_path: Path, sync: str,
                                                           recipe: str) -> None:
    # SkyRL adcfcead (holdout5 run_fp8_hopper_blockwise_fp8param_qwen35_9b.sh): megatron_config.fp8*
    # fold into transformer_config_kwargs; serialized_weight_sync_mode serves FP8 in vLLM
    run = tmp_path / "run.sh"
    run.write_text(DAPO_LINE + "  trainer.policy.megatron_config.fp8=e4m3 \\\n"
                   "  trainer.policy.megatron_config.fp8_recipe=blockwise \\\n"
                   "  trainer.policy.megatron_config.fp8_param=true \\\n"
                   f"  generator.inference_engine.serialized_weight_sync_mode={sync}\n")
    intent, _ = _read(run)
    assert intent["fp8"][0] is True and intent["format"][0] == "e4m3"
    assert intent["recipe"][0] == "blockwise" and intent["fp8_params"][0] is True
    assert intent["rollout.fp8"][0] is True and intent["rollout.recipe"][0] == recipe
    assert _line(intent["rollout.fp8"][1]) == ("run.sh", 8)


def test_fp8_recipe_auto_is_decided_by_the_gpu(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(DAPO_LINE + "  trainer.policy.megatron_config.fp8=e4m3 \\\n"
                   "  trainer.policy.megatron_config.fp8_recipe=auto \\\n"
                   "  trainer.policy.megatron_config.transformer_config_kwargs.fp8=hybrid\n")
    intent, _ = _read(run)
    assert intent["fp8"][0] is True and intent["format"][0] == "hybrid"   # the kwarg wins
    assert isinstance(intent["recipe"][0], Unknown) and "SM100" in intent["recipe"][0].reason
