"""The model module a script imports inside a method, under an if/elif/else over several modules
(jobs/pyimports.py, pyfix7 item 4; holdout18 llmfp8 @ de71c731: train_fp8.py:104-117
``_create_te_model`` imports ``TELlamaForCausalLM`` from te_llama_mxfp8 / te_llama_hybrid /
te_llama by ``self.config.fp8_scenario`` and calls ``TELlamaForCausalLM.from_pretrained_local``;
te_llama.py's decoder layer enters ``te.pytorch.fp8_autocast(enabled=True, ...)`` itself, so a
run launched with ``--mixed_precision bf16`` still trains its decoder in FP8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

_SCRIPT = '''\
import argparse
from accelerate import Accelerator

p = argparse.ArgumentParser()
p.add_argument("--mixed_precision", default="bf16")
p.add_argument("--scenario", default="default")
p.add_argument("--use_te", action="store_true")
args = p.parse_args()


class Manager:
    def __init__(self, scenario, use_te):
        self.scenario = scenario
        self.use_te = use_te

    def create(self):
        if self.use_te:
            return self._te()
        return None

    def _te(self):
        if self.scenario == "mxfp8":
            from te_model_mx import TEModel
        elif self.scenario == "other":
            from te_model_other import TEModel
        else:
            from te_model import TEModel
        return TEModel.from_pretrained_local("path")


model = Manager(args.scenario, args.use_te).create()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
model = accelerator.prepare(model)
'''

_MODEL = '''\
import torch
import transformer_engine as te
from transformer_engine.common.recipe import DelayedScaling, Format

attn_recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = te.pytorch.MultiheadAttention(1024, 8)

    def forward(self, x):
        with te.pytorch.fp8_autocast(enabled={enabled}, fp8_recipe=attn_recipe):
            return self.attn(x)


class TEModel:
    @classmethod
    def from_pretrained_local(cls, path):
        return Layer()
'''


def _job(tmp_path: Path, line: str, enabled: str = "True",
         others: tuple[str, ...] = ()) -> dict[str, Any]:
    (tmp_path / "train.py").write_text(_SCRIPT)
    (tmp_path / "te_model.py").write_text(_MODEL.format(enabled=enabled))
    for name in others:
        (tmp_path / f"{name}.py").write_text(_MODEL.format(enabled="False"))
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\npython train.py {line}\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts, "_prov": read.provenance}


def test_a_bf16_run_whose_model_enters_fp8_itself_is_fp8(tmp_path: Path) -> None:
    got = _job(tmp_path, "--mixed_precision bf16 --use_te")
    assert got["intent.fp8"] is True and got["intent.backend"] == "te"
    assert str(got["_prov"]["config.pytorch.te.autocast.enabled"]).endswith("te_model.py:14")


def test_without_the_te_model_the_run_is_bf16(tmp_path: Path) -> None:
    got = _job(tmp_path, "--mixed_precision bf16")
    assert got["intent.fp8"] is False
    assert "config.pytorch.te.autocast.enabled" not in got


def test_the_branch_the_flags_decide_is_the_module_read(tmp_path: Path) -> None:
    # --scenario other picks te_model_other.py (autocast disabled): te_model.py is not the model
    got = _job(tmp_path, "--mixed_precision bf16 --use_te --scenario other",
               others=("te_model_other",))
    assert got.get("config.pytorch.te.autocast.enabled") is not True


@pytest.mark.parametrize("enabled", ["False"])
def test_a_model_that_keeps_fp8_off_adds_nothing(tmp_path: Path, enabled: str) -> None:
    got = _job(tmp_path, "--mixed_precision bf16 --use_te", enabled=enabled)
    assert got["intent.fp8"] is not True


def test_a_module_not_in_the_job_is_not_read(tmp_path: Path) -> None:
    # --scenario mxfp8 names te_model_mx.py, which the job does not hold: nothing is invented
    got = _job(tmp_path, "--mixed_precision bf16 --use_te --scenario mxfp8")
    assert got.get("config.pytorch.te.autocast.enabled") is None or \
        isinstance(got.get("config.pytorch.te.autocast.enabled"), Unknown)
