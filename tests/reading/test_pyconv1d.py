"""The model a Python job builds is a transformers model with Conv1D projections (GPT-2 and its
relatives), which accelerate's and torchao's FP8 conversions skip (they swap nn.Linear only):
``config.<kind>.hf_model.conv1d`` from the script and the job modules it calls into
(:mod:`preflight.reading.pyconv1d`, session 43 pyfix8 item 5; holdout18 superposition)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

TRAIN = """
from accelerate import Accelerator
from model import build
accelerator = Accelerator(mixed_precision="fp8")
model = build({arg})
model, opt = accelerator.prepare(model, opt)
"""
FACT = "config.accelerate.hf_model.conv1d"


def _facts(folder: Path, model_py: str, arg: str = "") -> dict[str, object]:
    (folder / ".git").mkdir(exist_ok=True)
    (folder / "model.py").write_text(textwrap.dedent(model_py))
    (folder / "train.py").write_text(TRAIN.format(arg=arg))
    return read_paths([str(folder / "train.py")]).facts


@pytest.mark.parametrize("model_py, want", [
    ("""
     from transformers import GPT2LMHeadModel, GPT2Config
     def build():
         return GPT2LMHeadModel(GPT2Config())
     """, "GPT2LMHeadModel"),
    ("""
     import transformers
     def build():
         return transformers.GPT2Model.from_pretrained("gpt2")
     """, "GPT2Model"),
    ("""
     from transformers import AutoModelForCausalLM
     def build():
         return AutoModelForCausalLM.from_pretrained("openai-community/gpt2-medium")
     """, "AutoModelForCausalLM"),
    # both sides of an undecided test build a GPT-2 (holdout18: `if reinitialize:`)
    ("""
     from transformers import GPT2LMHeadModel, GPT2Config
     def build(fresh):
         if fresh:
             model = GPT2LMHeadModel(GPT2Config())
         else:
             model = GPT2LMHeadModel.from_pretrained("gpt2")
         return model
     """, "GPT2LMHeadModel"),
])
def test_a_gpt2_model_is_stated(tmp_path: Path, model_py: str, want: str) -> None:
    arg = "__import__('os').environ.get('F')" if "fresh" in model_py else ""
    assert _facts(tmp_path, model_py, arg)[FACT] == want


@pytest.mark.parametrize("model_py", [
    """
    from transformers import AutoModelForCausalLM
    def build():
        return AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B")
    """,
    """
    from transformers import LlamaForCausalLM, LlamaConfig
    def build():
        return LlamaForCausalLM(LlamaConfig())
    """,
    # the job's own class of that name is no transformers GPT-2
    """
    import torch
    class GPT2LMHeadModel(torch.nn.Module):
        pass
    def build():
        return GPT2LMHeadModel()
    """,
    # a GPT-2 built only in a branch that does not run
    """
    from transformers import GPT2LMHeadModel, LlamaForCausalLM
    USE_GPT2 = False
    def build():
        if USE_GPT2:
            return GPT2LMHeadModel.from_pretrained("gpt2")
        return LlamaForCausalLM.from_pretrained("x")
    """,
])
def test_other_models_state_nothing(tmp_path: Path, model_py: str) -> None:
    assert FACT not in _facts(tmp_path, model_py)


def test_a_gpt2_beside_another_model_under_an_undecided_test_is_unknown(tmp_path: Path) -> None:
    got = _facts(tmp_path, """
        import os
        from transformers import GPT2LMHeadModel, LlamaForCausalLM
        def build():
            if os.environ.get("SMALL"):
                m = GPT2LMHeadModel.from_pretrained("gpt2")
            else:
                m = LlamaForCausalLM.from_pretrained("x")
            return m
    """)
    value = got[FACT]
    assert isinstance(value, Unknown) and "GPT2LMHeadModel" in value.reason


def test_thousands_of_model_calls_read_in_bounds(tmp_path: Path) -> None:
    body = "from transformers import LlamaForCausalLM, GPT2Model\ndef build():\n" + "".join(
        f"    m{i} = LlamaForCausalLM.from_pretrained('x{i}')\n" for i in range(3000)) + \
        "    return GPT2Model.from_pretrained('gpt2')\n"
    got = _facts(tmp_path, body)[FACT]     # read to the end: the GPT-2 is seen (beside the
    assert isinstance(got, Unknown) and "GPT2Model" in got.reason    # Llamas: redteam17)
