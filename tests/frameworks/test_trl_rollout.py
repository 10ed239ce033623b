"""A TRL GRPO run's rollout read from its GRPOConfig flags (holdout21's TRL fork: the script is
not in the job, its flags are): model.generate by default, vLLM without FP8 quantization when
asked (trl v0.24.0 grpo_config.py l.399-406)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths


def _intent(tmp_path: Path, *flags: str) -> dict[str, Any]:
    (tmp_path / "train_grpo.py").write_text(
        "from trl import GRPOConfig, GRPOTrainer, TrlParser\n"
        "args = TrlParser((GRPOConfig,)).parse_args_and_config()[0]\n"
        "GRPOTrainer(model='m', args=args).train()\n")
    run = tmp_path / "run.sh"
    run.write_text("accelerate launch train_grpo.py --output_dir out --bf16 true "
                   + " ".join(flags) + "\n")
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def test_hf_generate_by_default(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--num_generations 8")
    assert got["rollout.engine"][0] == "hf" and got["rollout.fp8"][0] is False
    assert "grpo_config.py:399" in got["rollout.fp8"][1]


def test_vllm_server_and_colocate_are_not_fp8(tmp_path: Path) -> None:
    for mode in ("server", "colocate"):
        got = _intent(tmp_path, "--num_generations 8 --use_vllm true --vllm_mode", mode)
        assert got["rollout.engine"][0] == "vllm" and got["rollout.fp8"][0] is False


def test_use_vllm_from_the_environment_leaves_the_engine_unknown(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--num_generations 8 --use_vllm $USE_VLLM")
    assert isinstance(got["rollout.engine"][0], Unknown) and got["rollout.fp8"][0] is False


def test_a_plain_trainer_has_no_rollout(tmp_path: Path) -> None:
    assert "rollout.fp8" not in _intent(tmp_path, "--learning_rate 1e-5")


def test_an_fp8_checkpoint_is_unknown(tmp_path: Path) -> None:
    got = _intent(tmp_path, "--num_generations 8 --model_name_or_path Qwen/Qwen3-8B-FP8")
    assert isinstance(got["rollout.fp8"][0], Unknown)
