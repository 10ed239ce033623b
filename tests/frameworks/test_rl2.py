"""RL2 read from a public launch script (fixtures/configs/rl2, README cites repository and
commit): the flat layout's BF16 SGLang rollout and FSDP actor, the grouped layout's
``rollout.server_args`` pass-through and Megatron ``tf_config.fp8``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "rl2"


def _read(path: Path | str) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read


def _script(tmp_path: Path, *overrides: str) -> Path:
    out = tmp_path / "run.sh"
    out.write_text("torchrun --nproc_per_node=8 -m RL2.trainer.ppo \\\n"
                   + "".join(f"    {o} \\\n" for o in overrides)
                   + "    actor.model_name=Qwen/Qwen3-8B\n")
    return out


def test_flat_fork_reads_no_fp8() -> None:
    intent, read = _read(FIX / "orz_reinforce_turn2.sh")
    assert [k for _, k in read.files] == ["rl2"]
    assert intent["fp8"][0] is False and intent["precision"][0] == "bf16"
    assert intent["distributed"][0] == "fsdp1"
    assert intent["rollout.engine"][0] == "sglang"
    assert intent["rollout.fp8"][0] is False and "3c0e3e65" in intent["rollout.fp8"][1]
    assert intent["rollout.kv_cache_fp8"][0] is False


def test_grouped_server_args_quantization_is_fp8_rollout(tmp_path: Path) -> None:
    intent, _ = _read(_script(tmp_path, "rollout.server_args.quantization=fp8",
                              "rollout.server_args.kv_cache_dtype=fp8_e4m3"))
    assert intent["rollout.fp8"][0] is True
    assert intent["rollout.recipe"][0] == "tensorwise"
    assert intent["rollout.kv_cache_fp8"][0] is True
    assert intent["fp8"][0] is False


def test_grouped_without_quantization_is_model_dtype(tmp_path: Path) -> None:
    intent, _ = _read(_script(tmp_path, "rollout.server_args.tp_size=2"))
    assert intent["rollout.fp8"][0] is False and "9161ede5" in intent["rollout.fp8"][1]


def test_megatron_tf_config_fp8_is_te_training(tmp_path: Path) -> None:
    intent, _ = _read(_script(tmp_path, "actor=megatron", "actor.tf_config.fp8=hybrid"))
    assert intent["distributed"][0] == "megatron"
    assert intent["fp8"][0] is True and intent["format"][0] == "hybrid"
    quiet, _ = _read(_script(tmp_path, "actor.tf_config.fp8=hybrid"))   # FSDP: not read
    assert quiet["fp8"][0] is False


def test_config_name_of_the_jobs_own_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_script(tmp_path, "--config-name=mine"))
    assert type(intent["rollout.fp8"][0]).__name__ == "Unknown"


def test_record() -> None:
    fw = BY_KIND["rl2"]
    assert fw.launch is not None and fw.formats == ("text",)


def test_the_jobs_own_packaged_config_is_read(tmp_path: Path) -> None:
    cfg = tmp_path / "RL2" / "trainer" / "config"
    cfg.mkdir(parents=True)
    (cfg / "ppo.yaml").write_text("actor:\n  model_name: null\n  dtype: bfloat16\n"
                                  "rollout:\n  server_args:\n    dtype: ${actor.dtype}\n"
                                  "    quantization: fp8\n")
    intent, _ = _read(_script(tmp_path, "rollout.server_args.tp_size=2"))
    assert intent["rollout.fp8"][0] is True and "ppo.yaml" in intent["rollout.fp8"][1]


def _model(tmp_path: Path, model: str, *overrides: str) -> Path:
    out = tmp_path / "run.sh"
    out.write_text("torchrun --nproc_per_node=8 -m RL2.trainer.ppo \\\n"
                   + "".join(f"    {o} \\\n" for o in overrides)
                   + f"    actor.model_name={model}\n")
    return out


def test_an_fp8_checkpoint_without_quantization_is_not_a_confident_no(tmp_path: Path) -> None:
    """SGLang given no quantization serves an FP8 checkpoint's quantization_config: not BF16."""
    intent, _ = _read(_model(tmp_path, "Qwen/Qwen3-8B-FP8", "rollout.server_args.tp_size=2"))
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert intent["rollout.fp8"][1].endswith("run.sh:3")


def test_a_bf16_checkpoint_or_an_explicit_quantization_decides(tmp_path: Path) -> None:
    intent, _ = _read(_model(tmp_path, "Qwen/Qwen3-8B", "rollout.server_args.tp_size=2"))
    assert intent["rollout.fp8"][0] is False
    intent, _ = _read(_model(tmp_path, "Qwen/Qwen3-8B-FP8",
                             "rollout.server_args.quantization=fp8"))
    assert intent["rollout.fp8"][0] is True


def test_a_kv_cache_dtype_given_at_run_time_stays_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_model(tmp_path, "Qwen/Qwen3-8B", "rollout.server_args.kv_cache_dtype=$KV"))
    assert isinstance(intent["rollout.kv_cache_fp8"][0], Unknown)
