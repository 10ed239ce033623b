"""verl's rollout KV-cache precision (``intent.rollout.kv_cache_fp8``): read from the engine's
``engine_kwargs.<engine>.kv_cache_dtype`` and, where that is not given, from a
``rollout.kv_cache_dtype`` the job states (FlashRL issue 20's job, holdout19: the tool read the
KV cache as the engine default, so FP8D-RL-0004 could not fire)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

RO = "actor_rollout_ref.rollout"


def _line(tmp_path: Path, *overrides: str) -> dict[str, Any]:
    run = tmp_path / "run.sh"
    run.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.strategy=fsdp2 "
                   + " ".join(overrides) + "\n")
    read = read_paths([str(run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return {k.removeprefix("intent."): v for k, v in values.items()}


@pytest.mark.parametrize("value", ["fp8", "fp8_e4m3", "FP8"])
def test_rollout_kv_cache_dtype_fp8_is_read(tmp_path: Path, value: str) -> None:
    got = _line(tmp_path, f"{RO}.name=vllm", f"{RO}.quantization=fp8",
                f"{RO}.kv_cache_dtype={value}")
    assert got["rollout.kv_cache_fp8"] is True
    assert got["rollout.kv_cache_format"] == "e4m3"
    assert got["rollout.fp8"] is True


def test_rollout_kv_cache_dtype_in_a_trainer_yaml(tmp_path: Path) -> None:
    path = tmp_path / "ppo.yaml"
    path.write_text("actor_rollout_ref:\n  actor:\n    strategy: fsdp\n  rollout:\n"
                    "    name: sglang\n    kv_cache_dtype: fp8_e5m2\ntrainer:\n  nnodes: 1\n")
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.rollout.kv_cache_fp8"] is True
    assert values["intent.rollout.kv_cache_format"] == "e5m2"


@pytest.mark.parametrize("over", [(), (f"{RO}.kv_cache_dtype=auto",),
                                  (f"{RO}.kv_cache_dtype=bfloat16",)])
def test_quiet_without_an_fp8_kv_cache(tmp_path: Path, over: tuple[str, ...]) -> None:
    got = _line(tmp_path, f"{RO}.name=vllm", *over)
    assert got["rollout.kv_cache_fp8"] is False
    assert "rollout.kv_cache_format" not in got


def test_the_engines_own_kwarg_wins(tmp_path: Path) -> None:
    """What verl hands the engine decides; a rollout-level key beside it does not."""
    got = _line(tmp_path, f"{RO}.name=vllm", f"{RO}.kv_cache_dtype=fp8",
                f"+{RO}.engine_kwargs.vllm.kv_cache_dtype=auto")
    assert got["rollout.kv_cache_fp8"] is False
    got = _line(tmp_path, f"{RO}.name=vllm", f"{RO}.kv_cache_dtype=auto",
                f"+{RO}.engine_kwargs.vllm.kv_cache_dtype=fp8")
    assert got["rollout.kv_cache_fp8"] is True


def test_a_runtime_value_stays_unknown(tmp_path: Path) -> None:
    got = _line(tmp_path, f"{RO}.name=vllm", f"{RO}.kv_cache_dtype=$KV")
    assert isinstance(got["rollout.kv_cache_fp8"], Unknown)


def test_an_odd_value_is_not_fp8(tmp_path: Path) -> None:
    got = _line(tmp_path, f"{RO}.name=vllm", f"{RO}.kv_cache_dtype='x'*9999")
    assert got["rollout.kv_cache_fp8"] is False
