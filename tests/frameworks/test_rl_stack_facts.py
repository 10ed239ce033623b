"""Facts of the RL stacks that their FP8 rules read (issue 23 follow-ups): FP32 block scales as
each job sets them, and NeMo-RL's FP8 KV cache, which exists only with FP8 weights."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
NRL = FIX / "nemo_rl" / "examples" / "configs"
VERL_FP8 = FIX / "verl" / "run_nemotron_nano_v3_30b_a3b_megatron_fp8.sh"


def _intent(*paths: Path) -> dict[str, tuple[Any, str]]:
    read = read_paths([str(p) for p in paths])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def test_verl_export_in_the_launch_script_is_the_trainers_block_scales(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    text = VERL_FP8.read_text()
    run.write_text(text.replace("set -xeuo pipefail\n",
                                "set -xeuo pipefail\nexport NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1\n",
                                1))
    intent = _intent(run)
    assert intent["block_scales_fp32"][0] is True
    assert intent["block_scales_fp32"][1] == f"{run}:3"
    # without it the job says nothing: this machine's environment decides (env.*)
    assert "block_scales_fp32" not in _intent(VERL_FP8)


def test_verl_prefix_assignment_on_the_launch_line(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("NVTE_FP8_BLOCK_SCALING_FP32_SCALES=0 python3 -m verl.trainer.main_ppo "
                   "model_engine=megatron actor_rollout_ref.rollout.name=vllm\n")
    assert _intent(run)["block_scales_fp32"][0] is False


def test_nemo_rl_env_vars_and_slime_default() -> None:
    nrl = _intent(NRL / "grpo_math_8B_megatron_fp8.yaml")
    assert nrl["block_scales_fp32"][0] is True
    assert nrl["block_scales_fp32"][1].endswith("grpo_math_8B_megatron_fp8.yaml:22")
    slime = _intent(FIX / "slime" / "low_precision" / "run-qwen3-30b-a3b-fp8.sh")
    assert slime["block_scales_fp32"][0] is True          # its --runtime-env-json
    assert slime["block_scales_fp32"][1].endswith("run-qwen3-30b-a3b-fp8.sh:160")


def test_slime_without_the_runtime_env_value_takes_its_actor_default(tmp_path: Path) -> None:
    src = FIX / "slime" / "low_precision" / "run-qwen3-30b-a3b-fp8.sh"
    (tmp_path / "low_precision").mkdir()
    shutil.copytree(FIX / "slime" / "scripts", tmp_path / "scripts")
    run = tmp_path / "low_precision" / src.name
    run.write_text(src.read_text().replace('\\"NVTE_FP8_BLOCK_SCALING_FP32_SCALES\\": \\"1\\",',
                                           ""))
    intent = _intent(run)
    assert intent["recipe"][0] == "blockwise"
    # the script names neither slime nor miles, and no GPU is known: slime's actors get 1,
    # miles' since 7e7926b13 0 on compute capability >= 10 (frameworks/slime_env.py)
    assert isinstance(intent["block_scales_fp32"][0], Unknown)
    assert "miles" in intent["block_scales_fp32"][0].reason
    read = read_paths([str(run)])
    for cc, want in (("9.0", True), ("10.0", None)):
        values, prov = derive(Facts({**read.facts, "gpu.max_cc": cc}, read.provenance))
        got = values["intent.block_scales_fp32"]
        assert got is want if want is not None else isinstance(got, Unknown)
        assert "actor_group.py" in prov["intent.block_scales_fp32"] or want is None
    # named as slime's (its checkout's path on the launch line): slime's default, any GPU
    run.write_text(run.read_text().replace("python3 train.py", "python3 /root/slime/train.py"))
    intent = _intent(run)
    assert intent["block_scales_fp32"][0] is True
    assert "actor_group.py" in intent["block_scales_fp32"][1]


def test_nemo_rl_fp8_kv_cache_needs_fp8_weights(tmp_path: Path) -> None:
    # the kvcache recipe sets precision fp8 too: FP8 KV cache
    kv = _intent(NRL / "recipes" / "llm" / "grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml")
    assert kv["rollout.kv_cache_fp8"][0] is True
    # kv_cache_dtype fp8 over BF16 weights is dropped by NeMo-RL's vLLM worker (FP8D-NRL-0001)
    shutil.copytree(NRL, tmp_path / "configs")
    cfg = tmp_path / "configs" / "kv_only.yaml"
    cfg.write_text("defaults: grpo_math_1B.yaml\npolicy:\n  generation:\n    vllm_cfg:\n"
                   "      kv_cache_dtype: fp8\n")
    intent = _intent(cfg)
    assert intent["rollout.fp8"][0] is False and intent["rollout.kv_cache_fp8"][0] is False


def test_nemo_rl_recipe_whose_base_file_is_not_here_is_undetermined_not_bf16(
        tmp_path: Path) -> None:
    # NeMo-RL recipes keep policy.megatron_cfg.enabled in the file their defaults: names; read
    # without it, fp8_cfg.enabled: true decides nothing (it applies to the Megatron path only)
    recipe = tmp_path / "recipe-fp8.yaml"
    recipe.write_text('defaults: "./recipe-megatron.yaml"\nloss_fn:\n'
                      "  use_importance_sampling_correction: true\npolicy:\n  generation:\n"
                      '    vllm_cfg:\n      precision: "fp8"\n  megatron_cfg:\n    fp8_cfg:\n'
                      '      enabled: true\n      fp8: "e4m3"\n      fp8_recipe: "blockwise"\n')
    intent = _intent(recipe)
    fp8 = intent["fp8"][0]
    assert not isinstance(fp8, bool) and "recipe-megatron.yaml" in fp8.reason
    # vllm_cfg.precision is the job's own: vLLM generation in FP8, with the IS correction
    assert intent["rollout.fp8"][0] is True and intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.fp8"][1] == f"{recipe}:7"
    assert intent["rollout.is_correction"][0] is True
    # with its base file there, the chain decides
    (tmp_path / "recipe-megatron.yaml").write_text(
        (NRL / "grpo_math_8B_megatron.yaml").read_text().replace(
            "defaults: ", "# defaults: "))
    assert _intent(recipe)["fp8"][0] is True


def test_verl_and_nemo_rl_run_on_megatron_core_only_when_the_job_says(tmp_path: Path) -> None:
    # Megatron rules reach an RL job through intent.stack (issue 22 item 3)
    verl = _intent(VERL_FP8)                                   # model_engine=megatron
    assert verl["stack"][0] == ["verl", "megatron"]
    assert verl["fp8_attention"][0] is False
    # +...override_transformer_config.recompute_granularity=full (line 119)
    assert verl["recompute_granularity"][0] == "full" and verl["activation_checkpointing"][0]
    assert verl["recompute_granularity"][1].endswith(":119")
    fsdp = tmp_path / "fsdp.sh"
    fsdp.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
                    "actor_rollout_ref.actor.strategy=fsdp2\n")
    assert _intent(fsdp)["stack"][0] == ["verl"]
    nrl = _intent(NRL / "grpo_math_8B_megatron_fp8.yaml")     # megatron_cfg.enabled: true
    assert nrl["stack"][0] == ["nemo_rl", "megatron"]
    assert _intent(NRL / "grpo_math_1B.yaml")["stack"][0] == ["nemo_rl"]   # DTensor policy
