"""The rollout KV cache's FP8 format (``intent.rollout.kv_cache_format``, frameworks/kvformat.py)
from the kv_cache_dtype a framework hands vLLM / SGLang, and FP8D-RL-0006 (an e4m3 KV cache in a
vLLM rollout below sm_89) on a real verl job (holdout9: engine_kwargs.vllm.kv_cache_dtype=fp8)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks.kvformat import of
from preflight.intent import derive
from preflight.jobs.read import read_paths

JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout9-verl-dsv4-flash-veomni-fp8-kvcache-control" / "files")
SCRIPT = "examples/grpo_trainer/run_deepseek_v4_veomni.sh"
A100 = {"gpu": "A100", "pkg.vllm": "0.16.0"}


@pytest.mark.parametrize(("kv", "want"), [("fp8", "e4m3"), ("FP8_E4M3", "e4m3"),
                                          ("fp8_e5m2", "e5m2"), ("fp8_ds_mla", "e4m3")])
def test_formats(kv: str, want: str) -> None:
    assert of(kv) == want


@pytest.mark.parametrize("kv", ["fp8_e3m4", "fp8" * 1000, 8, ["fp8"], None])
def test_other_values_are_unknown(kv: Any) -> None:
    assert isinstance(of(kv), Unknown)


def _job(tmp_path: Path, kv: str) -> Path:
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    path = job / SCRIPT
    path.write_text(path.read_text().replace("kv_cache_dtype=fp8", f"kv_cache_dtype={kv}"))
    return path


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}


def _fired(path: Path, assume: dict[str, str]) -> set[str]:
    return {f.rule_id for f in preflight.check([str(path)], smoke=False, assume=assume).findings}


def test_verl_fp8_kv_cache_is_e4m3_and_fires_below_sm89(tmp_path: Path) -> None:
    path = _job(tmp_path, "fp8")
    got = _intent(path)
    assert got["rollout.kv_cache_format"][0] == "e4m3"
    assert got["rollout.kv_cache_format"][1].endswith(f"{Path(SCRIPT).name}:117")
    assert "FP8D-RL-0006" in _fired(path, A100)
    assert "FP8D-RL-0006" not in _fired(path, {**A100, "gpu": "L40S"})
    assert "FP8D-RL-0006" not in _fired(path, {**A100, "pkg.vllm": "0.10.2"})


def test_verl_e5m2_is_quiet(tmp_path: Path) -> None:
    path = _job(tmp_path, "fp8_e5m2")
    assert _intent(path)["rollout.kv_cache_format"][0] == "e5m2"
    assert "FP8D-RL-0006" not in _fired(path, A100)


def test_verl_bf16_kv_cache_states_no_format(tmp_path: Path) -> None:
    path = _job(tmp_path, "auto")
    got = _intent(path)
    assert got["rollout.kv_cache_fp8"][0] is False and "rollout.kv_cache_format" not in got


def test_verl_format_set_at_run_time_is_undetermined(tmp_path: Path) -> None:
    path = _job(tmp_path, "${KV_DTYPE}")
    got = _intent(path)
    assert isinstance(got["rollout.kv_cache_fp8"][0], Unknown)
    report = preflight.check([str(path)], smoke=False, assume=A100)
    assert "FP8D-RL-0006" in {u.rule_id for u in report.undetermined}
