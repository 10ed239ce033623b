"""A file past the readers' cap on facts (``parse.MAX_FACTS_PER_FILE``) never makes FP8 "no"
(issue 21, redteam5). Every reader kept the first 2,000 settings of a file and dropped the rest
without a word; 2,000 junk keys (or flags, or keywords) before the FP8 switch made an accelerate
YAML, an AReaL experiment, a Megatron launch line and a TrainingArguments call FP8 "no setting"
(exit 0). Now the reader says where it stopped (``config.<kind>.unread_args``) and FP8 is
Unknown with that reason; a file under the cap is read as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import MAX_FACTS_PER_FILE

JUNK = MAX_FACTS_PER_FILE + 100


def _accelerate(n: int) -> tuple[str, str]:
    return "acc.yaml", ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n" +
                        "".join(f"k{i}: 1\n" for i in range(n)) +
                        "mixed_precision: fp8\nnum_processes: 8\n")


def _areal(n: int) -> tuple[str, str]:
    return "exp.yaml", ("experiment_name: e\ntrial_name: t\n" +
                        "".join(f"k{i}: 1\n" for i in range(n)) +
                        "actor: {backend: 'megatron:d8', megatron: {fp8_config: {mode: e4m3}}}\n"
                        "rollout: {backend: 'sglang:d8'}\n")


def _megatron(n: int) -> tuple[str, str]:
    junk = " ".join(f"--junk-{i} 1" for i in range(n))
    return "run.sh", ("#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --bf16 "
                      f"{junk} --fp8-format hybrid --fp8-recipe delayed\n")


def _python(n: int) -> tuple[str, str]:
    junk = ", ".join(f"junk_{i}=1" for i in range(n))
    return "train.py", ("from transformers import TrainingArguments\n"
                        f"args = TrainingArguments(output_dir='o', {junk}, bf16=True, "
                        "fp8=True)\n")


@pytest.mark.parametrize("make", [_accelerate, _areal, _megatron])
def test_fp8_past_the_cap_is_unknown_not_no(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            make: Callable[[int], tuple[str, str]]) -> None:
    monkeypatch.chdir(tmp_path)
    name, text = make(JUNK)
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not False
    unread = [v for n, v in read.facts.items() if n.endswith(".unread_args")]
    assert unread and isinstance(unread[0], Unknown) and "not read" in unread[0].reason


@pytest.mark.parametrize("make", [_accelerate, _areal, _megatron])
def test_under_the_cap_fp8_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   make: Callable[[int], tuple[str, str]]) -> None:
    monkeypatch.chdir(tmp_path)
    name, text = make(10)
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert not [n for n in read.facts if n.endswith(".unread_args")]


def test_a_python_call_past_the_cap_says_where_it_stopped(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    name, text = _python(JUNK)
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    got: Any = read.facts.get("config.hf_trainer.unread_args")
    assert isinstance(got, Unknown), sorted(read.facts)[:5]
