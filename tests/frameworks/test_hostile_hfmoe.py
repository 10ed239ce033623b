"""redteam9 (issue 21): hostile model config.json files for frameworks/hfmoe.py (HF MoE expert
count). Every case held on 00b39ac (regression guards): a count that is no plausible int (10^6,
negative, text, float, NaN, a 5,000-digit number, a 100,000-item list) is Unknown or absent, never
a number; a config.json linked out of the job, a folder linked out, ``..`` and absolute paths out,
a FIFO, non-UTF-8 and 5,000-deep nesting are not read."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from tests.frameworks.test_hfmoe import _axolotl, _intent, _model

_BAD: dict[str, Any] = {
    "million": {"model_type": "mixtral", "num_local_experts": 10**6},
    "negative": {"model_type": "mixtral", "num_local_experts": -8},
    "text": {"model_type": "mixtral", "num_local_experts": "8"},
    "float": {"model_type": "mixtral", "num_local_experts": 8.0},
    "nan": '{"model_type": "mixtral", "num_local_experts": NaN}',
    "huge": '{"model_type": "mixtral", "num_local_experts": ' + "9" * 5000 + "}",
    "list": {"model_type": "mixtral", "num_local_experts": [8] * 100_000},
    "deep": '{"text_config":' * 5000 + "{}" + "}" * 5000,
    "dup": '{"num_experts": 8, "num_experts": 999999999}',
}


@pytest.mark.parametrize("case", sorted(_BAD))
def test_no_implausible_count(tmp_path: Path, case: str) -> None:
    _model(tmp_path / "job" / "model", _BAD[case])
    _, values, _ = _intent(_axolotl(tmp_path / "job", "./model"))
    assert isinstance(values.get("moe.experts"), Unknown)


@pytest.mark.parametrize("how", ["file_link", "dir_link", "dotdot", "absolute", "fifo"])
def test_nothing_outside_the_job(tmp_path: Path, how: str) -> None:
    job = tmp_path / "job"
    _model(tmp_path / "out", {"num_experts": 64})
    job.mkdir()
    model = "./model"
    if how == "file_link":
        (job / "model").mkdir()
        os.symlink(tmp_path / "out" / "config.json", job / "model" / "config.json")
    elif how == "dir_link":
        os.symlink(tmp_path / "out", job / "model")
    elif how == "dotdot":
        model = "../out"
    elif how == "absolute":
        model = str(tmp_path / "out")
    else:
        (job / "model").mkdir()
        os.mkfifo(job / "model" / "config.json")
    _, values, _ = _intent(_axolotl(job, model))
    assert values.get("moe.experts") != 64 and isinstance(values.get("moe.experts"), Unknown)
