"""OpenRLHF read from its public launch scripts (fixtures/configs/openrlhf, README cites
repository and commit): precision, ZeRO stage, packing, checkpointing, vLLM rollout, and FP8
"not asked" (OpenRLHF has no FP8 switch at 3c3be62 / v0.11.0)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "openrlhf"


def _read(path: Path | str) -> dict[str, Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def _script(tmp_path: Path, text: str) -> Path:
    out = tmp_path / "run.sh"
    out.write_text(text)
    return out


def test_dotted_ppo_ray_hybrid_engine() -> None:
    got = _read(FIX / "train_dapo_ray_hybrid_engine.sh")
    assert got["fp8"][0] is False and "no FP8 training switch" in got["fp8"][1]
    assert got["precision"][0] == "bf16" and got["precision"][1].endswith(":36")
    assert got["zero_stage"][0] == 3 and got["distributed"][0] == "deepspeed"
    assert got["packing"][0] is True and got["activation_checkpointing"][0] is True
    assert (got["seq_len"][0], got["micro_batch"][0], got["num_gpus"][0]) == (2048, 8, 8)
    assert got["rollout.engine"][0] == "vllm" and got["rollout.fp8"][0] is False
    assert got["rollout.is_correction"][0] is True
    assert got["stack"][0] == ["openrlhf", "deepspeed"]


def test_flat_flags_of_v0_8() -> None:
    got = _read(FIX / "train_ppo_llama_ray_v0.8.11.sh")
    assert got["fp8"][0] is False
    assert got["precision"][0] == "bf16" and got["zero_stage"][0] == 3
    assert got["packing"][0] is True and got["activation_checkpointing"][0] is True
    assert got["micro_batch"][0] == 16 and got["num_gpus"][0] == 2
    assert got["rollout.engine"][0] == "vllm" and got["rollout.is_correction"][0] is False


def test_deepspeed_module_sft_fp16(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, (
        "deepspeed --module openrlhf.cli.train_sft \\\n  --ds.zero_stage 2 --ds.param_dtype fp16"
        " --ds.packing_samples --model.gradient_checkpointing_enable --train.micro_batch_size 2\n"
    )))
    assert got["precision"] == ("fp16", f"{tmp_path / 'run.sh'}:2")
    assert got["zero_stage"][0] == 2 and got["micro_batch"][0] == 2
    assert "rollout.engine" not in got or isinstance(got["rollout.engine"][0], Unknown)


def test_defaults_when_unstated(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, "python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 0 "
                                  "--actor.model_name_or_path m\n"))
    assert got["precision"][0] == "bf16" and got["zero_stage"][0] == 2
    assert got["packing"][0] is False and got["activation_checkpointing"][0] is False
    assert "rollout.engine" not in got or isinstance(got["rollout.engine"][0], Unknown)


def test_dynamic_batch_forces_packing(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, "python3 -m openrlhf.cli.train_ppo_ray "
                                  "--train.dynamic_batch_enable\n"))
    assert got["packing"][0] is True


def test_hostile_runtime_values_are_unknown(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, (
        'python3 -m openrlhf.cli.train_ppo_ray --ds.zero_stage "$Z" --ds.param_dtype $(x)'
        ' --vllm.num_engines 2 --actor.model_name_or_path "$MODEL;rm -rf /"\n')))
    for name in ("zero_stage", "precision", "rollout.fp8"):
        assert isinstance(got[name][0], Unknown), name
    assert got["fp8"][0] is False


def test_fp8_checkpoint_or_unknown_fp8_flag_is_undetermined(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, (
        "python3 -m openrlhf.cli.train_ppo_ray --ds.fp8_enable --vllm.num_engines 2 "
        "--actor.model_name_or_path Qwen/Qwen3-8B-FP8\n")))
    assert isinstance(got["fp8"][0], Unknown) and "fp8_enable" in got["fp8"][0].reason
    assert isinstance(got["rollout.fp8"][0], Unknown)


def test_param_dtype_outside_choices(tmp_path: Path) -> None:
    got = _read(_script(tmp_path, "python3 -m openrlhf.cli.train_sft --ds.param_dtype fp8\n"))
    assert isinstance(got["precision"][0], Unknown)
    assert isinstance(got["fp8"][0], Unknown)     # a value naming fp8 is not "no"


def test_no_fp8_rule_fires_on_the_example(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(FIX / "train_dapo_ray_hybrid_engine.sh", tmp_path / "run.sh")
    monkeypatch.chdir(tmp_path)
    report = preflight.check([str(tmp_path / "run.sh")], smoke=False,
                             assume={"gpu": "H100", "pkg.deepspeed": "0.18.4",
                                     "pkg.vllm": "0.17.0"})
    fired = {f.rule_id for f in report.findings}
    assert not fired & {"FP8D-RL-0001", "FP8D-DS-0004", "FP8D-ACC-0001"}


def test_record() -> None:
    rec = BY_KIND["openrlhf"]
    assert rec.runs_on == ("deepspeed",) and "ds.packing_samples" in rec.bool_keys
