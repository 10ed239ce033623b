"""ColossalAI ``use_fp8`` and the model's linears (holdout15, ColossalAI issue 6390): an HF GPT-2
model's blocks are Conv1D, so its only F.linear is the head; a 2-label head is refused by
torch._scaled_mm (FP8D-COLOSSAL-0002) before COLOSSAL-0001's ``[0]`` is reached. Any other model,
a script with its own nn.Linear, or several models give no fact (the rules decide as before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

M = "config.colossalai.model"
HEAD = """\
import torch.nn as nn
from transformers import AutoConfig, AutoModelForSequenceClassification, {cls}
from colossalai.booster import Booster
from colossalai.booster.plugin import HybridParallelPlugin

plugin = HybridParallelPlugin(tp_size=1, pp_size=1, precision="bf16", use_fp8=True)
booster = Booster(plugin=plugin)
{body}
"""


def _facts(tmp_path: Path, body: str, cls: str = "GPT2ForSequenceClassification") -> dict[str, Any]:
    script = tmp_path / "train.py"
    script.write_text(HEAD.format(cls=cls, body=body))
    read = read_paths([str(script)])
    return {k: (v, read.provenance.get(k)) for k, v in read.facts.items() if k.startswith(M)}


@pytest.mark.parametrize("body", [
    'cfg = AutoConfig.from_pretrained("gpt2", num_labels=2)\n'
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2", config=cfg)',
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels=2)',
    'model = AutoModelForSequenceClassification.from_pretrained("openai-community/gpt2",\n'
    '    num_labels=2)',
])
def test_a_gpt2_two_label_head_is_read(tmp_path: Path, body: str) -> None:
    facts = _facts(tmp_path, body)
    assert facts[f"{M}.linear_layers"][0] == "conv1d"
    assert facts[f"{M}.head_out_features"][0] == 2
    assert facts[f"{M}.head_out_multiple_of_16"][0] is False
    assert str(facts[f"{M}.head_out_features"][1]).startswith(str(tmp_path / "train.py"))


def test_a_16_label_head_passes_the_shape_checks(tmp_path: Path) -> None:
    facts = _facts(tmp_path, 'model = GPT2ForSequenceClassification.from_pretrained("gpt2", '
                             'num_labels=16)')
    assert facts[f"{M}.head_out_multiple_of_16"][0] is True


@pytest.mark.parametrize("body", [
    'model = GPT2LMHeadModel.from_pretrained("gpt2")',              # head not read
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2")',  # num_labels not said
    'n = int(input())\nmodel = GPT2ForSequenceClassification.from_pretrained("gpt2", '
    'num_labels=n)',
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels="2")',  # hostile
    'a = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels=2)\n'
    'b = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels=32)',
])
def test_a_gpt2_head_the_text_does_not_decide_is_unknown(tmp_path: Path, body: str) -> None:
    cls = "GPT2LMHeadModel" if "LMHead" in body else "GPT2ForSequenceClassification"
    facts = _facts(tmp_path, body, cls)
    assert facts[f"{M}.linear_layers"][0] == "conv1d"
    assert isinstance(facts[f"{M}.head_out_multiple_of_16"][0], Unknown)


@pytest.mark.parametrize("body", [
    # models with nn.Linear layers: no fact, COLOSSAL-0001 decides as before
    'model = AutoModelForSequenceClassification.from_pretrained("meta-llama/Llama-3.2-1B", '
    'num_labels=2)',
    'model = LlamaForSequenceClassification.from_pretrained("x", num_labels=2)',
    'import os\nmodel = AutoModelForSequenceClassification.from_pretrained(os.environ["M"])',
    # GPT-2 next to the script's own nn.Linear, or next to another model
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels=2)\n'
    'extra = nn.Linear(768, 64)',
    'model = GPT2ForSequenceClassification.from_pretrained("gpt2", num_labels=2)\n'
    'ref = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")',
    # a look-alike name that is no GPT-2 checkpoint
    'model = AutoModelForSequenceClassification.from_pretrained("gpt2-like/llama", num_labels=2)',
])
def test_other_models_give_no_fact(tmp_path: Path, body: str) -> None:
    cls = "LlamaForSequenceClassification" if "Llama" in body else \
        "GPT2ForSequenceClassification"
    assert _facts(tmp_path, body, cls) == {}


def test_a_bare_gpt2_body_has_no_head(tmp_path: Path) -> None:
    facts = _facts(tmp_path, 'model = GPT2Model.from_pretrained("gpt2")', "GPT2Model")
    assert facts[f"{M}.linear_layers"][0] == "conv1d"
    assert f"{M}.head_out_multiple_of_16" not in facts
