"""FP8D-TE-0061 end to end: a Python job whose model is a transformers GPT-2-family model
(Conv1D projections, ``config.<kind>.hf_model.conv1d`` stated by :mod:`preflight.jobs.pyjob`)
under accelerate FP8 or torchao's ``convert_to_float8_training`` gets no FP8 GEMM in its blocks
(holdout18 superposition). Firing, quiet and hostile cases."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.engine import evaluate, load_rules
from preflight.facts import Facts
from preflight.jobs.read import read_paths

ACC = """
from accelerate import Accelerator
import transformers
from transformers import GPT2LMHeadModel, GPT2Config, LlamaForCausalLM, LlamaConfig, AutoModelForCausalLM
accelerator = Accelerator(mixed_precision="{precision}")
{model}
opt = None
model, opt = accelerator.prepare(model, opt)
"""
TAO = """
import torch
from torchao.float8 import convert_to_float8_training
from transformers import GPT2LMHeadModel, GPT2Config
{model}
convert_to_float8_training(model)
"""


def _fired(folder: Path, text: str) -> set[str]:
    (folder / ".git").mkdir(exist_ok=True)
    (folder / "train.py").write_text(textwrap.dedent(text))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return {f.rule_id for f in evaluate(load_rules(with_tests=False),
                                        Facts({**read.facts, **values})).findings}


@pytest.mark.parametrize("model", [
    "model = GPT2LMHeadModel(GPT2Config())",
    "model = AutoModelForCausalLM.from_pretrained('openai-community/gpt2')",
    "model = transformers.GPT2LMHeadModel.from_pretrained('gpt2')",
])
def test_gpt2_under_accelerate_fp8_fires(tmp_path: Path, model: str) -> None:
    assert "FP8D-TE-0061" in _fired(tmp_path, ACC.format(precision="fp8", model=model))


def test_gpt2_under_torchao_float8_fires(tmp_path: Path) -> None:
    assert "FP8D-TE-0061" in _fired(tmp_path, TAO.format(
        model="model = GPT2LMHeadModel(GPT2Config()).cuda()"))


@pytest.mark.parametrize("precision, model", [
    ("fp8", "model = LlamaForCausalLM(LlamaConfig())"),          # nn.Linear projections
    ("bf16", "model = GPT2LMHeadModel(GPT2Config())"),           # no FP8 asked
    ("fp8", "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-1B')"),
])
def test_other_models_or_no_fp8_stay_quiet(tmp_path: Path, precision: str, model: str) -> None:
    assert "FP8D-TE-0061" not in _fired(tmp_path, ACC.format(precision=precision, model=model))


@pytest.mark.parametrize("model", [
    # the job's own class of that name is no transformers model
    "class GPT2LMHeadModel:\n    pass\nmodel = GPT2LMHeadModel()",
    # the model class depends on a run-time `if` statement: never a confident finding
    "import sys\nif sys.argv[1] == 'gpt2':\n    model = GPT2LMHeadModel(GPT2Config())\n"
    "else:\n    model = LlamaForCausalLM(LlamaConfig())",
    # a hub id the text does not give
    "import os\nmodel = AutoModelForCausalLM.from_pretrained(os.environ['MODEL'])",
])
def test_hostile_or_undecided_models_do_not_fire(tmp_path: Path, model: str) -> None:
    assert "FP8D-TE-0061" not in _fired(tmp_path, ACC.format(precision="fp8", model=model))


# a model chosen in `A() if c else B()`: pyconv1d names both models, Unknown (redteam17's fix
# of a GPT-2 beside another model class; sweep20 had it as a strict xfail)
def test_a_model_chosen_by_a_conditional_expression_does_not_fire(tmp_path: Path) -> None:
    model = ("import sys\nmodel = GPT2LMHeadModel(GPT2Config()) if sys.argv[1] == 'gpt2' "
             "else LlamaForCausalLM(LlamaConfig())")
    assert "FP8D-TE-0061" not in _fired(tmp_path, ACC.format(precision="fp8", model=model))
