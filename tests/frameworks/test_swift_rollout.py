"""ms-swift GRPO's rollout precision (holdout21: ``swift rlhf --rlhf_type grpo --use_vllm true
--vllm_mode server`` with no quantization flag): vLLM in the model dtype unless
``--vllm_quantization`` says (ms-swift v3.10.0 swift/trainers/arguments.py l.205, l.236); without
vLLM the policy model generates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths


def _intent(tmp_path: Path, *flags: str) -> dict[str, Any]:
    run = tmp_path / "grpo.sh"
    run.write_text("NPROC_PER_NODE=2 swift rlhf --rlhf_type grpo --model Qwen/Qwen3-4B "
                   "--torch_dtype bfloat16 " + " ".join(flags) + "\n")
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def test_vllm_server_without_quantization_is_model_dtype(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--use_vllm true --vllm_mode server")
    assert got["rollout.engine"][0] == "vllm"
    assert got["rollout.fp8"][0] is False and "arguments.py:205" in got["rollout.fp8"][1]


def test_vllm_quantization_fp8_is_fp8_rollout(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--use_vllm true --vllm_quantization fp8")
    assert got["rollout.fp8"][0] is True and got["rollout.recipe"][0] == "tensorwise"
    assert _intent(tmp_path, "--use_vllm true --vllm_quantization awq")["rollout.fp8"][0] is False


def test_vllm_quantization_from_the_environment_is_unknown(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--use_vllm true --vllm_quantization $Q")
    assert isinstance(got["rollout.fp8"][0], Unknown)


def test_without_vllm_the_policy_generates(tmp_path: Path) -> None:
    got = _intent(tmp_path)
    assert got["rollout.engine"][0] == "hf" and got["rollout.fp8"][0] is False


def test_sft_has_no_rollout(tmp_path: Path) -> None:
    run = tmp_path / "sft.sh"
    run.write_text("swift sft --model Qwen/Qwen3-4B --torch_dtype bfloat16 --use_vllm true\n")
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert "intent.rollout.fp8" not in values


def test_an_fp8_checkpoint_is_unknown(tmp_path: Path) -> None:
    run = tmp_path / "grpo.sh"
    run.write_text("swift rlhf --rlhf_type grpo --model Qwen/Qwen3-8B-FP8 --use_vllm true\n")
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.rollout.fp8"], Unknown)
