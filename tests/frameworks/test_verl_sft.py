"""verl's SFT trainer (frameworks/verl_sft.py, read at verl v0.9.0 483b8a00):
``-m verl.trainer.sft_trainer`` composes sft_trainer_engine.yaml (engine@engine: fsdp);
``engine=automodel engine.enable_fp8=true`` is asked and dropped (verl passes NeMo-Automodel
``FP8Config()``, enabled False: BF16 training, intent.fp8 false with fp8_overridden_by);
``engine=megatron engine.override_transformer_config.fp8=e4m3`` is Transformer Engine FP8. No
rollout is stated. Hostile: an engine only the run knows, an engine verl does not ship."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths


def _run(tmp_path: Path, args: str, entry: str = "-m verl.trainer.sft_trainer",
         before: str = "") -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    run = tmp_path / "run.sh"
    run.write_text(f"#!/bin/bash\n{before}\ntorchrun --standalone --nnodes=1 "
                   f"--nproc_per_node=8 \\\n     {entry} \\\n"
                   "    model=hf_model model.path=Qwen/Qwen3-8B \\\n"
                   f"    {args} \\\n    trainer.nnodes=1\n")
    read = read_paths([str(run)])
    values, prov = derive(Facts(dict(read.facts), read.provenance))
    return dict(read.facts), values, prov


@pytest.mark.parametrize("entry", ["-m verl.trainer.sft_trainer",
                                   "-m verl.trainer.sft_trainer_ray"])
def test_automodel_enable_fp8_is_asked_and_dropped(tmp_path: Path, entry: str) -> None:
    facts, values, prov = _run(tmp_path, "engine=automodel engine.distributed_strategy=fsdp2 "
                               "engine.tp_size=2 engine.enable_fp8=true", entry)
    assert facts["config.verl.engine.enable_fp8"] is True
    assert facts["config.verl.engine_group"] == "automodel"
    assert values["intent.fp8"] is False
    assert values["intent.fp8_source"].endswith("run.sh:6")
    assert "FP8Config()" in values["intent.fp8_overridden_by"]
    assert values["intent.backend"] == "none"
    assert values["intent.distributed"] == "fsdp2" and values["intent.tp"] == 2
    assert not any(k.startswith("intent.rollout.") for k in values)


def test_automodel_without_the_switch(tmp_path: Path) -> None:
    _, values, _ = _run(tmp_path, "engine=automodel")
    assert values["intent.fp8"] is False
    assert "intent.fp8_overridden_by" not in values


def test_the_megatron_engine_trains_fp8(tmp_path: Path) -> None:
    _, values, _ = _run(tmp_path, "engine=megatron engine.tensor_model_parallel_size=2 "
                        "engine.override_transformer_config.fp8=e4m3 "
                        "engine.override_transformer_config.fp8_recipe=blockwise")
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.recipe"] == "blockwise" and values["intent.format"] == "e4m3"
    assert "megatron" in values["intent.stack"] and values["intent.tp"] == 2


@pytest.mark.parametrize("args", ["data.max_length=2048", "engine=fsdp", "engine=veomni"])
def test_engines_without_fp8(tmp_path: Path, args: str) -> None:
    _, values, prov = _run(tmp_path, args)
    assert values["intent.fp8"] is False
    assert not any(k.startswith("intent.rollout.") for k in values)


@pytest.mark.parametrize(("args", "before"), [
    ("engine=$ENGINE engine.enable_fp8=true", "ENGINE=$(cat engine.txt)"),   # only the run knows
    ("engine=my_engine engine.enable_fp8=true", ""),                         # not verl's
])
def test_an_engine_not_known_is_unknown(tmp_path: Path, args: str, before: str) -> None:
    _, values, _ = _run(tmp_path, args, before=before)
    assert isinstance(values["intent.fp8"], Unknown)


def test_main_ppo_is_not_sft(tmp_path: Path) -> None:
    _, values, _ = _run(tmp_path, "actor_rollout_ref.rollout.name=vllm",
                        entry="-m verl.trainer.main_ppo")
    assert "intent.rollout.engine" in values
