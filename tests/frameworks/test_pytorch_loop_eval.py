"""An FP8 autocast a plain PyTorch script opens in its evaluation code (``with torch.no_grad()``,
an ``evaluate`` function) beside the training step's: the step decides FP8
(:mod:`preflight.frameworks.pytorch_loop_eval`, session 43 pyfix8 item 3; holdout19
gpt2scratch's eval autocast under ``if step % eval_freq == 0`` made FP8 "depends on the control
flow")."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.frameworks.pytorch_loop_eval import eval_spans
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, parse

HEAD = """
import sys
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe
model = te.Linear(1024, 1024)
"""
STEP = """
def train_step(x):
    with te.fp8_autocast(enabled={train}, fp8_recipe=recipe.DelayedScaling()):
        loss = model(x).sum()
    loss.backward()
"""


def _fp8(folder: Path, body: str, train: str = "True") -> object:
    (folder / "train.py").write_text(HEAD + STEP.format(train=train) + textwrap.dedent(body))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("body", [
    # under no_grad, in a loop, under a test the text does not decide
    """
    for step in range(100):
        train_step(x)
        if step % int(sys.argv[1]) == 0:
            with torch.no_grad():
                with te.fp8_autocast(enabled=sys.argv[2] == "1"):
                    model(x)
    """,
    # a function named for evaluation
    """
    def evaluate_validation(step):
        if step % int(sys.argv[1]) == 0:
            with te.fp8_autocast(enabled=False):
                model(x)
    train_step(x)
    evaluate_validation(3)
    """,
    # a function decorated with inference_mode (imported by its own name)
    """
    from torch import inference_mode
    @inference_mode()
    def estimate_loss():
        with te.fp8_autocast(enabled=sys.argv[2] == "1"):
            model(x)
    train_step(x)
    estimate_loss()
    """,
])
def test_the_training_step_decides(tmp_path: Path, body: str) -> None:
    assert _fp8(tmp_path, body) is True


def test_an_undecided_training_step_stays_unknown(tmp_path: Path) -> None:
    got = _fp8(tmp_path, """
        def evaluate():
            with torch.no_grad(), te.fp8_autocast(enabled=True):
                model(x)
        train_step(x)
        evaluate()
    """, train='sys.argv[1] == "fp8"')
    assert isinstance(got, Unknown)


def test_evaluation_alone_still_counts(tmp_path: Path) -> None:
    # quiet: no autocast outside evaluation code, so what evaluation opens is what is read
    (tmp_path / "train.py").write_text(HEAD + textwrap.dedent("""
        def evaluate():
            with torch.no_grad():
                with te.fp8_autocast(enabled=True):
                    model(x)
        loss = model(x).sum()
        loss.backward()
        evaluate()
    """))
    read = read_paths([str(tmp_path / "train.py")])
    assert read.facts["config.pytorch.te.autocast.enabled"] is True


@pytest.mark.parametrize("name, evaluation", [
    ("evaluate", True), ("evaluate_helloswag", True), ("eval_step", True),
    ("validation_step", True), ("generate_sequences", True), ("run_eval", True),
    ("train_and_evaluate", False), ("train_step", False), ("retrieval", False),
    ("testing_utils_loader", False),
])
def test_functions_named_for_evaluation(name: str, evaluation: bool) -> None:
    text = f"def {name}():\n    pass\n"
    spans = eval_spans(Module("t.py", parse("t.py", text)))
    assert bool(spans) is evaluation


def test_a_deep_file_is_looked_at_in_bounds() -> None:
    text = "import torch\n" + "".join(
        "    " * i + "with torch.no_grad():\n" for i in range(90)) + "    " * 90 + "pass\n"
    spans = eval_spans(Module("t.py", parse("t.py", text)))
    assert len(spans) == 90
