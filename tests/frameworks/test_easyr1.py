"""EasyR1 (hiyouga/EasyR1 @ b44b311b): ``python3 -m verl.trainer.main config=X.yaml`` plus an
OmegaConf dotlist over its own schema (holdout22 control: examples/qwen3_4b_math_grpo_lora.sh),
told apart from verl's ``main_ppo`` Hydra tree; its precision keys (actor
``fsdp.mp_param_dtype``, rollout ``dtype``, no quantization option); hostile launch lines."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_CONFIG = """\
data:
  max_prompt_length: 2048
  max_response_length: 2048
algorithm:
  adv_estimator: grpo
worker:
  actor:
    global_batch_size: 128
    model:
      model_path: Qwen/Qwen2.5-7B-Instruct
      lora:
        rank: 0
    optim:
      strategy: adamw
    fsdp:
      enable_full_shard: true
  rollout:
    n: 5
    tensor_parallel_size: 2
trainer:
  nnodes: 1
  n_gpus_per_node: 8
"""
_RECORDING: list[list[str]] = []


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_easyr1_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_easyr1_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "job"
    (root / ".git").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "examples" / "config.yaml").write_text(_CONFIG)
    (tmp_path / "outside.yaml").write_text("worker:\n  rollout:\n    dtype: SECRET\n")
    monkeypatch.chdir(tmp_path)
    return root


def _run(job: Path, *words: str, head: str = "python3 -m verl.trainer.main \\\n"
         ) -> tuple[dict[str, Any], Any, str]:
    script = job / "examples" / "run.sh"
    script.write_text("#!/bin/bash\nset -x\nMODEL_PATH=Qwen/Qwen3-4B\n" + head
                      + "".join(f"    {w} \\\n" for w in words)
                      + "    trainer.n_gpus_per_node=1\n")
    read = read_paths([str(script)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read, str(script)


def test_the_holdout22_control_reads_bf16_fsdp_and_a_bf16_vllm_rollout(job: Path) -> None:
    intent, read, _ = _run(job, "config=examples/config.yaml", "data.max_response_length=2048",
                           "worker.actor.model.model_path=${MODEL_PATH}",
                           "worker.actor.model.lora.rank=64", "worker.rollout.tensor_parallel_size=1")
    assert sorted({k for _, k in read.files}) == ["easyr1"]
    assert read.facts["config.easyr1.base_config"] == str(job / "examples" / "config.yaml")
    assert read.facts["config.easyr1.worker.actor.model.lora.rank"] == 64
    assert intent["fp8"][0] is False and "b44b311b" in intent["fp8"][1]
    assert intent["precision"][0] == "bf16" and intent["distributed"][0] == "fsdp1"
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.fp8"][0] is False and "vllm_rollout_spmd.py" in intent["rollout.fp8"][1]
    assert intent["rollout.kv_cache_fp8"][0] is False
    assert intent["num_gpus"][0] == 1
    assert not any(k.startswith("config.verl.") for k in read.facts)


def test_verl_main_ppo_is_not_easyr1(job: Path) -> None:
    _, read, _ = _run(job, "actor_rollout_ref.rollout.name=vllm",
                      head="python3 -m verl.trainer.main_ppo \\\n")
    assert [k for _, k in read.files] == ["verl"]


def test_precision_keys_are_read(job: Path) -> None:
    intent, _, _ = _run(job, "config=examples/config.yaml",
                        "worker.actor.fsdp.mp_param_dtype=fp16", "worker.rollout.dtype=fp16")
    assert intent["precision"][0] == "fp16"
    assert intent["rollout.fp8"][0] is False and "fp16" in intent["rollout.fp8"][1]


def test_an_fp8_checkpoint_or_a_key_outside_the_schema_is_unknown(job: Path) -> None:
    intent, _, _ = _run(job, "config=examples/config.yaml",
                        "worker.actor.model.model_path=Qwen/Qwen3-8B-FP8")
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert intent["fp8"][0] is False
    intent, _, script = _run(job, "config=examples/config.yaml",
                             "worker.rollout.quantization=fp8")
    assert isinstance(intent["fp8"][0], Unknown) and isinstance(intent["rollout.fp8"][0], Unknown)
    assert intent["rollout.fp8"][1].startswith(script)


def test_the_yaml_alone_is_recognised(job: Path) -> None:
    read = read_paths([str(job / "examples" / "config.yaml")])
    assert [k for _, k in read.files] == ["easyr1"]
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False and values["intent.rollout.fp8"] is False


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside.yaml", "~/.bashrc",
                                    "/proc/self/environ", "$CONFIG"])
def test_config_pointing_out_of_the_job_is_not_opened(job: Path, target: str,
                                                      opened: list[str]) -> None:
    intent, read, script = _run(job, f"config={target}")
    assert isinstance(read.facts["config.easyr1.base_config"], Unknown)
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert "SECRET" not in repr(read.facts)
    assert not [p for p in opened if os.path.realpath(p).startswith(
        ("/etc/passwd", "/proc/self/environ", str(job.parent / "outside.yaml")))]
    assert all(p.path == script for p in read.problems)


def test_ten_thousand_dotlist_words_are_bounded(job: Path) -> None:
    words = ["config=examples/config.yaml"] + [f"data.k{i}={i}" for i in range(10_000)]
    intent, read, script = _run(job, *words)
    cut = [p for p in read.problems if p.cut]
    assert cut and cut[0].path == script and cut[0].line is not None
    assert intent["fp8"][0] is not True


def test_a_self_referencing_yaml_is_a_finding(job: Path) -> None:
    (job / "examples" / "config.yaml").write_text(
        _CONFIG + "loop:\n  a: ${loop.b}\n  b: ${loop.a}\ndefaults:\n  - config\n")
    intent, read, _ = _run(job, "config=examples/config.yaml")
    assert intent["fp8"][0] is not True
    assert all(p.path.endswith(("config.yaml", "run.sh")) for p in read.problems)
