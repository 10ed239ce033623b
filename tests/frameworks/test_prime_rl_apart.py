"""prime-rl's split launch (holdout23, aghyad-deeb/prime-rl @ 063ad2d5): the trainer run alone
(``torchrun src/prime_rl/trainer/rl/train.py @ trainer.toml``) and its vLLM server as another
launch (``uv run inference @ infer.toml``) that nothing of the trainer's names. The trainer
alone reads the rollout at vLLM's defaults over the model it trains and sends (a script beside
it is not read: the job is what the user named; session 43 replaced the Unknown of session 42,
``frameworks/rollout_apart.py``); named too, the inference launch gives the rollout and its
model's weights, not the trainer's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

TRAIN = ("uv run torchrun \\\n    --nproc-per-node 8 \\\n    src/prime_rl/trainer/rl/train.py "
         "@ trainer.toml \\\n        --model.name \"Qwen/Qwen3-32b\" \\\n"
         "        --output-dir $OUTPUT_DIR\n")
TRAINER = ("max_async_level = 8\n[model]\nname = \"Qwen/Qwen3-32B\"\n"
           "optimization_dtype = \"bfloat16\"\nreduce_dtype = \"bfloat16\"\n")
INFER = "uv run inference @ infer.toml \\\n    --api-key $KEY\n"


def _job(tmp_path: Path, infer_toml: str) -> Path:
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    (job / "run_train.sh").write_text(TRAIN)
    (job / "trainer.toml").write_text(TRAINER)
    (job / "run_inference_head.sh").write_text(INFER)
    (job / "infer.toml").write_text(infer_toml)
    return job


def _intent(*paths: Path) -> tuple[dict[str, Any], dict[str, str]]:
    read = read_paths([str(p) for p in paths])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, {k[7:]: str(v) for k, v in prov.items()}


@pytest.mark.parametrize("infer", [
    "[model]\nname = \"Qwen/Qwen3-32b\"\n",
    # fwrl9's trade-off (session 44): the servers' launch beside the trainer asks for FP8, and
    # the user did not name it: no confident "no" (nothing stated: that launch decides)
    "[model]\nname = \"Qwen/Qwen3-32b\"\n[vllm]\nquantization = \"fp8\"\n",
    "[model]\nname = \"Qwen/Qwen3-32b\"\n[vllm]\nkv_cache_dtype = \"fp8\"\n",
])
def test_the_trainer_alone_over_bf16_weights_states_no_rollout_precision(
        tmp_path: Path, infer: str) -> None:
    job = _job(tmp_path, infer)
    intent, prov = _intent(job / "run_train.sh")
    assert intent["fp8"] is False
    assert intent["rollout.engine"] == "vllm"
    assert intent.get("rollout.fp8") is not False and "rollout.fp8" not in intent
    assert "rollout.kv_cache_fp8" not in intent
    # the engine's provenance says the servers' own launch was not read
    assert "launched apart" in prov["rollout.engine"]
    # named too, that launch decides
    both, _ = _intent(job / "run_train.sh", job / "run_inference_head.sh")
    fp8 = "quantization" in infer
    assert both["rollout.fp8"] is fp8
    assert both["rollout.kv_cache_fp8"] is ("kv_cache" in infer)


def test_the_trainer_alone_over_an_fp8_model_is_an_fp8_rollout(tmp_path: Path) -> None:
    job = _job(tmp_path, "")
    (job / "run_train.sh").write_text(TRAIN.replace("Qwen/Qwen3-32b", "Qwen/Qwen3-32B-FP8"))
    intent, _ = _intent(job / "run_train.sh")
    assert intent["rollout.fp8"] is True and intent["fp8"] is False


def test_the_trainer_alone_over_a_model_of_unknown_weights_stays_unknown(
        tmp_path: Path) -> None:
    # hostile: a folder outside the job with a name that says nothing
    job = _job(tmp_path, "")
    (job / "run_train.sh").write_text(TRAIN.replace("Qwen/Qwen3-32b", "/data/ckpt/step_900"))
    intent, prov = _intent(job / "run_train.sh")
    assert isinstance(intent["rollout.fp8"], Unknown)
    assert prov["rollout.fp8"].startswith(str(job / "run_train.sh"))


def test_fp8_weight_transfer_over_a_bf16_model_is_unknown(tmp_path: Path) -> None:
    # hostile: FP8 kernel-format weights sent to a server that serves no FP8 layers
    job = _job(tmp_path, "")
    (job / "trainer.toml").write_text(TRAINER + "[weight_broadcast]\n"
                                                "quantize_in_weight_transfer = true\n")
    intent, _ = _intent(job / "run_train.sh")
    assert isinstance(intent["rollout.fp8"], Unknown)


def test_the_inference_launch_named_too_gives_the_rollout(tmp_path: Path) -> None:
    job = _job(tmp_path, "[model]\nname = \"Qwen/Qwen3-32b\"\n")
    intent, prov = _intent(job / "run_train.sh", job / "run_inference_head.sh")
    assert intent["rollout.engine"] == "vllm" and intent["rollout.fp8"] is False
    assert prov["rollout.fp8"].startswith(str(job / "infer.toml"))   # its model, not a default


def test_an_fp8_inference_launch_is_an_fp8_rollout(tmp_path: Path) -> None:
    job = _job(tmp_path, "[model]\nname = \"Qwen/Qwen3-32b\"\n[vllm]\nquantization = \"fp8\"\n")
    intent, _ = _intent(job / "run_train.sh", job / "run_inference_head.sh")
    assert intent["rollout.fp8"] is True and intent["fp8"] is False
    job2 = _job(tmp_path / "b", "[model]\nname = \"Qwen/Qwen3-32B-FP8\"\n")
    intent, _ = _intent(job2 / "run_train.sh", job2 / "run_inference_head.sh")
    assert intent["rollout.fp8"] is True
