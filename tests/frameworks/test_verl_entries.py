"""verl's trainer entry points beyond ``verl.trainer.main_ppo`` (verl-recipe's
``recipe.<x>.main_<x>``, ``verl.experimental.*``), the configs they ship, explicit overrides
over a base that is not in the job, and FP8 rollout spellings (holdout2 misses, issue 22).

The launch lines are reductions of verl-project/verl-recipe low_precision/ scripts:
run_dapo_qwen3_moe_30b_megatron_fp8e2e.sh and run_dapo_qwen3_moe_30b_fsdp_fp8_rollout.sh @
4da0651ebfc7ddbf240e41bace809e05911a5526, run_dapo_qwen3_moe_30b_mxfp8e2e.sh @
cb5a12ed5cfdfaefba7e9b55b254f1cacdcdeefa, run_dapo_asyncrl_qwen3_moe_30b_fp8rollout.sh @
a7a17b6e03f1d79755707eb73c08ef16cae37641. The shipped configs' defaults were read in
verl-recipe 4da0651e dapo/config/ and volcengine/verl b178a3cd
verl/experimental/fully_async_policy/config/ (see preflight/frameworks/verl_shipped.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks.verl_shipped import ENTRY, module_path
from preflight.intent import derive
from preflight.jobs.read import read_paths

TFC = "+actor_rollout_ref.actor.megatron.override_transformer_config"


def _intent(tmp_path: Path, line: str) -> tuple[dict[str, Any], Any]:
    run = tmp_path / "run.sh"
    run.write_text(f"#!/usr/bin/env bash\nset -xeuo pipefail\n{line}\n")
    read = read_paths([str(run)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


def test_dapo_recipe_megatron_fp8_end_to_end(tmp_path: Path) -> None:
    intent, read = _intent(tmp_path, (
        "FP8=(\n"
        f"    {TFC}.fp8=\"hybrid\"\n"
        f"    {TFC}.fp8_recipe=\"blockwise\"\n"
        "    +actor_rollout_ref.rollout.quantization=fp8\n)\n"
        "RAY_ADDRESS=$RAY_ADDRESS ray job submit --runtime-env=\"${RUNTIME_ENV}\" \\\n"
        "    -- python3 -m recipe.dapo.main_dapo \\\n"
        "    --config-path=config \\\n"
        "    --config-name='dapo_megatron_trainer.yaml' \\\n"
        "    actor_rollout_ref.rollout.name=vllm \\\n"
        "    algorithm.rollout_correction.rollout_is=token \\\n"
        "    \"${FP8[@]}\""))
    assert [k for _, k in read.files] == ["verl"]
    # dapo_megatron_trainer.yaml stands on ppo_megatron_trainer: the Megatron engine
    assert intent["distributed"] == "megatron"
    assert intent["fp8"] is True and intent["format"] == "hybrid"
    assert intent["recipe"] == "blockwise"
    assert intent["rollout.fp8"] is True and intent["rollout.is_correction"] is True
    assert "config.verl.base_config" not in read.facts      # nothing left undetermined


def test_dapo_recipe_default_config_is_fsdp_with_an_fp8_rollout(tmp_path: Path) -> None:
    # no --config-name: @hydra.main(config_name="dapo_trainer") over ppo_trainer (FSDP)
    intent, _ = _intent(tmp_path, (
        "python3 -m recipe.dapo.main_dapo actor_rollout_ref.rollout.name=vllm "
        "+actor_rollout_ref.rollout.quantization=fp8 "
        "actor_rollout_ref.model.use_remove_padding=True"))
    assert intent["fp8"] is False and intent["distributed"] == "fsdp1"
    assert intent["rollout.fp8"] is True and intent["rollout.recipe"] == "blockwise"


def test_fully_async_shipped_megatron_config_trains_in_bf16(tmp_path: Path) -> None:
    intent, read = _intent(tmp_path, (
        "ray job submit -- python3 -m verl.experimental.fully_async_policy.fully_async_main "
        "--config-path=config --config-name='fully_async_ppo_megatron_trainer.yaml' "
        "actor_rollout_ref.rollout.name=vllm +actor_rollout_ref.rollout.quantization=fp8"))
    assert intent["distributed"] == "megatron"
    assert intent["fp8"] is False                      # determined: no FP8 key on the line
    assert intent["rollout.fp8"] is True


def test_unknown_recipe_config_leaves_what_the_base_decides_undetermined(
        tmp_path: Path) -> None:
    # a recipe whose @hydra.main config fp8-doctor does not know, not in the job
    intent, read = _intent(tmp_path, (
        f"python3 -m recipe.qat.main_qat {TFC}.fp8=e4m3 "
        "actor_rollout_ref.rollout.quantization=mxfp8 actor_rollout_ref.rollout.name=sglang"))
    assert [k for _, k in read.files] == ["verl"]
    assert isinstance(intent["fp8"], Unknown)          # the engine is the base's
    assert intent["format"] == "e4m3"                  # the line's own value stands
    assert intent["rollout.fp8"] is True and intent["rollout.recipe"] == "mxfp8"
    # the engine given on the line too: the line decides FP8 training
    intent, _ = _intent(tmp_path, (
        f"python3 -m recipe.qat.main_qat {TFC}.fp8=e4m3 "
        "actor_rollout_ref.actor.strategy=megatron actor_rollout_ref.rollout.name=vllm"))
    assert intent["fp8"] is True and intent["distributed"] == "megatron"
    assert isinstance(intent["rollout.fp8"], Unknown)  # quantization is the base's


@pytest.mark.parametrize(("value", "fp8", "recipe"), [
    ("fp8", True, "blockwise"), ("mxfp8", True, "mxfp8"), ("MXFP8", True, "mxfp8"),
    ("null", False, None), ("torchao", None, None)])
def test_rollout_quantization_spellings(tmp_path: Path, value: str, fp8: bool | None,
                                        recipe: str | None) -> None:
    intent, _ = _intent(tmp_path, (
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang "
        f"+actor_rollout_ref.rollout.quantization={value}"))
    if fp8 is None:
        assert isinstance(intent["rollout.fp8"], Unknown)
    else:
        assert intent["rollout.fp8"] is fp8
    assert intent.get("rollout.recipe") == recipe


@pytest.mark.parametrize(("word", "entry"), [
    ("recipe.dapo.main_dapo", True), ("recipe/dapo/main_dapo.py", True),
    ("recipe.gkd.megatron.main_gkd", True), ("recipe.spo.spo_main_ppo", True),
    ("verl.experimental.one_step_off_policy.main_ppo", True), ("verl.trainer.main_ppo", True),
    ("recipe.r1.main_eval", False), ("verl.trainer.main_generation", False),
    ("verl/recipe/dapo/main_dapo.py", True), ("examples/recipe/llama/main.py", False),
    ("examples/recipe/train.py", False), ("run_recipe.py", False)])
def test_entry_points_as_a_class(word: str, entry: bool) -> None:
    assert bool(ENTRY.search(word)) is entry


def test_module_path() -> None:
    assert module_path("recipe.dapo.main_dapo") == "recipe/dapo/main_dapo"
    assert module_path("verl/recipe/dapo/main_dapo.py") == "recipe/dapo/main_dapo"
    assert module_path("/opt/verl/verl/trainer/main_ppo.py") == "verl/trainer/main_ppo"


def test_evaluation_main_is_not_a_training_launch(tmp_path: Path) -> None:
    _, read = _intent(tmp_path, "python3 -m recipe.r1.main_eval data.path=x")
    assert "verl" not in [k for _, k in read.files]


def test_recipe_run_as_a_script_reads_the_jobs_own_copy_else_the_shipped_one(
        tmp_path: Path) -> None:
    line = ("python3 recipe/dapo/main_dapo.py --config-path=config "
            "--config-name=dapo_megatron_trainer actor_rollout_ref.rollout.name=vllm")
    intent, _ = _intent(tmp_path, line)
    assert intent["distributed"] == "megatron" and intent["fp8"] is False
    # the job is a checkout holding that config: it is read (here it asks for FP8)
    conf = tmp_path / "recipe" / "dapo" / "config"
    conf.mkdir(parents=True)
    (conf / "dapo_megatron_trainer.yaml").write_text(
        "actor_rollout_ref:\n  actor:\n    strategy: megatron\n    megatron:\n"
        "      override_transformer_config:\n        fp8: e4m3\n")
    intent, read = _intent(tmp_path, line)
    assert intent["fp8"] is True and intent["format"] == "e4m3"
