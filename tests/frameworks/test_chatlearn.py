"""ChatLearn (alibaba/ChatLearn @ b7af31a9): ``python chatlearn/entrypoint.py grpo --config-file
X.yaml`` plus dotted overrides (holdout22 control: scripts/mcore_vllm/
train_mcore_vllm_qwen3_30b_grpo.sh); trainer precision (``bf16``, no FP8 field), Megatron or
FSDP backend, the vLLM / SGLang rollout without quantization; hostile launch lines."""

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

_TEMPLATE = """\
runtime_args:
  train_backend: megatron
  rollout_backend: vllm
  output_dir: your_output_dir
  log_args_dict:
    log_dir: ${runtime_args.output_dir}
models:
  policy_trainer:
    bf16: True
    tensor_model_parallel_size: 1
    load: your_megatron_model_path
  ref_policy:
    bf16: True
    load: ${models.policy_trainer.load}
  policy:
    tensor_model_parallel_size: 2
    load: your_hf_model_path
  reward:
    num_cpu: 2
"""
_RECORDING: list[list[str]] = []


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_chatlearn_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_chatlearn_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "job"
    (root / ".git").mkdir(parents=True)
    (root / "template").mkdir()
    (root / "template" / "grpo_megatron.yaml").write_text(_TEMPLATE)
    (root / "scripts" / "mcore_vllm").mkdir(parents=True)
    (tmp_path / "outside.yaml").write_text("runtime_args:\n  train_backend: SECRET\n")
    monkeypatch.chdir(tmp_path)
    return root


def _run(job: Path, *words: str, config: str | None = "template/grpo_megatron.yaml",
         ) -> tuple[dict[str, Any], Any, str]:
    script = job / "scripts" / "mcore_vllm" / "train.sh"
    flag = f" --config-file {config}" if config is not None else ""
    script.write_text("#!/bin/bash\nset -x\nexport CHATLEARN=$(pwd)\n"
                      f"python chatlearn/entrypoint.py grpo{flag} \\\n"
                      + "".join(f"        {w} \\\n" for w in words)
                      + "        models.policy.gpu_memory_utilization=0.75 \\\n"
                      + "        2>&1 | tee ${log_file} ; exit ${PIPESTATUS[0]}\n")
    read = read_paths([str(script)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read, str(script)


def test_the_holdout22_control_reads_bf16_megatron_and_a_bf16_vllm_rollout(job: Path) -> None:
    intent, read, _ = _run(job, "runtime_args.train_backend=megatron",
                           "models.policy_trainer.bf16=True",
                           "models.policy_trainer.tensor_model_parallel_size=4",
                           "models.policy.load=${CHATLEARN}/pretrained_models/Qwen3-30B-A3B")
    assert [k for _, k in read.files][0] == "chatlearn"
    assert read.facts["config.chatlearn.algorithm"] == "grpo"
    assert read.facts["config.chatlearn.models.policy_trainer.tensor_model_parallel_size"] == 4
    assert intent["distributed"][0] == "megatron" and intent["precision"][0] == "bf16"
    assert intent["fp8"][0] is False and "megatron_config.py" in intent["fp8"][1]
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.fp8"][0] is False and "vllm_module.py" in intent["rollout.fp8"][1]
    assert intent["rollout.kv_cache_fp8"][0] is False


def test_backends_and_precision(job: Path) -> None:
    intent, _, _ = _run(job, "models.policy_trainer.bf16=False")
    assert intent["precision"][0] == "fp32" and intent["fp8"][0] is False
    intent, _, _ = _run(job, "runtime_args.train_backend=fsdp",
                        "runtime_args.rollout_backend=sglang")
    assert intent["distributed"][0] == "fsdp2" and intent["precision"][0] == "bf16"
    assert intent["rollout.engine"][0] == "sglang" and intent["rollout.fp8"][0] is False
    assert "sglang_module.py" in intent["rollout.fp8"][1]
    intent, _, _ = _run(job, "runtime_args.rollout_backend=trtllm")
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_fp8_keys_outside_the_schema_and_fp8_checkpoints_are_unknown(job: Path) -> None:
    intent, _, script = _run(job, "models.policy_trainer.fp8=hybrid")
    assert isinstance(intent["fp8"][0], Unknown) and intent["fp8"][1].startswith(script)
    intent, _, _ = _run(job, "models.policy.load=/models/Qwen3-30B-A3B-FP8")
    assert intent["fp8"][0] is False and isinstance(intent["rollout.fp8"][0], Unknown)


def test_without_config_file_the_overrides_are_not_applied(job: Path) -> None:
    intent, read, _ = _run(job, "runtime_args.train_backend=megatron", config=None)
    assert isinstance(read.facts["config.chatlearn.base_config"], Unknown)
    assert "config.chatlearn.runtime_args.train_backend" not in read.facts
    assert isinstance(intent["fp8"][0], Unknown)


def test_the_template_alone_is_recognised(job: Path) -> None:
    read = read_paths([str(job / "template" / "grpo_megatron.yaml")])
    assert [k for _, k in read.files] == ["chatlearn"]
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False and values["intent.rollout.fp8"] is False


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside.yaml", "~/.bashrc",
                                    "/proc/self/environ", "${CHATLEARN}/../outside.yaml",
                                    "../outside.yaml"])
def test_config_file_out_of_the_job_is_not_opened(job: Path, target: str,
                                                  opened: list[str]) -> None:
    intent, read, script = _run(job, config=target)
    assert isinstance(read.facts["config.chatlearn.base_config"], Unknown)
    assert isinstance(intent["fp8"][0], Unknown)
    assert "SECRET" not in repr(read.facts)
    assert not [p for p in opened if os.path.realpath(p).startswith(
        ("/etc/passwd", "/proc/self/environ", str(job.parent / "outside.yaml")))]
    assert all(p.path == script for p in read.problems)


def test_ten_thousand_dotted_words_are_bounded(job: Path) -> None:
    intent, read, script = _run(job, *(f"runtime_args.k{i}={i}" for i in range(10_000)))
    cut = [p for p in read.problems if p.cut]
    assert cut and cut[0].path == script and cut[0].line is not None
    assert intent["fp8"][0] is not True


def test_a_cyclic_template_is_a_finding(job: Path) -> None:
    (job / "template" / "grpo_megatron.yaml").write_text(
        _TEMPLATE + "defaults:\n  - grpo_megatron\nloop:\n  a: ${loop.b}\n  b: ${loop.a}\n")
    intent, read, _ = _run(job)
    assert intent["fp8"][0] is not True
    assert all(p.path.endswith(("grpo_megatron.yaml", "train.sh")) for p in read.problems)
