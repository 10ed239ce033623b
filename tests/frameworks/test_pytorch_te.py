"""The model a plain PyTorch script builds from Transformer Engine modules
(:mod:`preflight.frameworks.pytorch_te`): GEMM sizes of literal ``te.Linear`` & co. constructions
give ``intent.shapes.dims_align`` (holdout19 te-1422: ``te.Linear(712, 896)`` under a delayed
recipe left FP8D-TE-0012 undetermined), and ``intent.te_modules`` says whether a TE autocast has
any TE module to act on (holdout19 gpt2scratch: a GPT-2 of torch.nn.Linear under
``te.fp8_autocast``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.engine import evaluate, load_rules
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

HEAD = """
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe
"""
AUTOCAST = """
with te.fp8_autocast(enabled=True, fp8_recipe=recipe.{recipe}()):
    y = model(x)
y.sum().backward()
"""


def _intent(folder: Path, body: str, recipe: str = "DelayedScaling",
            files: dict[str, str] | None = None) -> dict[str, object]:
    for name, text in (files or {}).items():
        (folder / name).write_text(textwrap.dedent(text))
    (folder / "train.py").write_text(HEAD + textwrap.dedent(body) + AUTOCAST.format(
        recipe=recipe))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values


@pytest.mark.parametrize("body, recipe, want", [
    # TE issue 1422: in_features 712 = 8 x 89
    ("model = te.Linear(712, 896)\n", "DelayedScaling", 8),
    ("model = te.Linear(in_features=712, out_features=896)\n", "DelayedScaling", 8),
    # out_features need only 8 under per-tensor recipes: 1000 = 8 x 125 passes ...
    ("model = te.Linear(1024, 1000)\n", "DelayedScaling", 16),
    # ... and fails under MXFP8 (blocks of 32 both ways)
    ("model = te.Linear(1024, 1000)\n", "MXFP8BlockScaling", 8),
    ("model = te.Linear(1024, 4096)\n", "DelayedScaling", 128),
    ("model = te.LayerNormMLP(4096, 11008)\n", "DelayedScaling", 128),
    ("model = te.TransformerLayer(4104, 16384, 24)\n", "DelayedScaling", 8),
    ("model = te.GroupedLinear(8, 2048, 1400)\n", "MXFP8BlockScaling", 8),
])
def test_literal_te_module_sizes_give_the_dims_alignment(tmp_path: Path, body: str, recipe: str,
                                                         want: int) -> None:
    assert _intent(tmp_path, body, recipe)["intent.shapes.dims_align"] == want


def test_a_size_the_text_does_not_give_leaves_an_aligned_model_unknown(tmp_path: Path) -> None:
    got = _intent(tmp_path, "import sys\nmodel = te.Linear(int(sys.argv[1]), 4096)\n"
                            "head = te.Linear(4096, 4096)\n")
    assert isinstance(got["intent.shapes.dims_align"], Unknown)


def test_a_known_misaligned_module_decides_beside_an_unknown_one(tmp_path: Path) -> None:
    got = _intent(tmp_path, "import sys\nmodel = te.Linear(int(sys.argv[1]), 4096)\n"
                            "head = te.Linear(712, 896)\n")
    assert got["intent.shapes.dims_align"] == 8


def test_a_module_built_under_an_undecided_condition_decides_nothing(tmp_path: Path) -> None:
    got = _intent(tmp_path, "import os\nif os.environ['SMALL'] == '1':\n"
                            "    model = te.Linear(712, 896)\nelse:\n"
                            "    model = te.Linear(1024, 1024)\n")
    assert isinstance(got["intent.shapes.dims_align"], Unknown)


def test_te_0012_fires_on_the_issue_1422_script(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(HEAD + "layer1 = te.Linear(712, 896)\nmodel = layer1\n"
                                       + AUTOCAST.format(recipe="DelayedScaling"))
    read = read_paths([str(tmp_path / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False),
                                         Facts({**read.facts, **values})).findings}
    assert "FP8D-TE-0012" in fired


def test_te_0060_fires_on_an_autocast_over_torch_nn_only(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL_NN))
    (tmp_path / "train.py").write_text(HEAD + "from model import GPT\nmodel = GPT(64)\n"
                                       + AUTOCAST.format(recipe="DelayedScaling"))
    read = read_paths([str(tmp_path / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False),
                                         Facts({**read.facts, **values})).findings}
    assert "FP8D-TE-0060" in fired and "FP8D-TE-0012" not in fired


MODEL_NN = """
import torch.nn as nn
class GPT(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 4 * n)
"""
MODEL_TE = """
import torch.nn as nn
import transformer_engine.pytorch as te
class GPT(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = te.Linear(n, 4 * n)
"""
MODEL_SUB = """
import torch.nn as nn
from transformer_engine.pytorch import Linear as TELinear
class MyLinear(TELinear):
    pass
class GPT(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = MyLinear(n, 4 * n)
"""


@pytest.mark.parametrize("model, want", [(MODEL_NN, "none"), (MODEL_TE, "yes"),
                                         (MODEL_SUB, "yes")])
def test_whether_the_job_builds_te_modules(tmp_path: Path, model: str, want: str) -> None:
    got = _intent(tmp_path, "from model import GPT\nmodel = GPT(768)\nx = torch.randn(8, 768)\n",
                  files={"model.py": model})
    assert got["intent.te_modules"] == want


@pytest.mark.parametrize("body", [
    "from transformers import AutoModelForCausalLM\n"
    "model = AutoModelForCausalLM.from_pretrained('gpt2')\n",
    "model = torch.load('model.pt', weights_only=False)\n",
    "from accelerate import Accelerator\nmodel = Accelerator(mixed_precision='fp8').prepare(m)\n",
])
def test_a_model_from_elsewhere_leaves_te_modules_unknown(tmp_path: Path, body: str) -> None:
    assert isinstance(_intent(tmp_path, body)["intent.te_modules"], Unknown)


def test_a_state_dict_loaded_with_torch_load_is_no_model(tmp_path: Path) -> None:
    got = _intent(tmp_path, "import torch.nn as nn\nmodel = nn.Linear(64, 64)\n"
                            "model.load_state_dict(torch.load('ckpt.pt')['model'])\n")
    assert got["intent.te_modules"] == "none"


@pytest.mark.parametrize("size", ["0", "-16", "True", "10 ** 400", "'712'", "7.5"])
def test_a_size_that_is_no_plausible_dimension_is_unknown(tmp_path: Path, size: str) -> None:
    got = _intent(tmp_path, f"model = te.Linear({size}, 4096)\n")
    assert isinstance(got["intent.shapes.dims_align"], Unknown)


def test_a_te_class_passed_as_a_value_counts_as_built(tmp_path: Path) -> None:
    # TE's own FSDP example: `--layer-type` defaults to te.TransformerLayer, built as layer_type(...)
    got = _intent(tmp_path, "import argparse\np = argparse.ArgumentParser()\n"
                            "p.add_argument('--layer-type', default=te.TransformerLayer)\n"
                            "opts = p.parse_args()\nmodel = opts.layer_type(1024, 4096, 16)\n")
    assert got["intent.te_modules"] == "yes"
