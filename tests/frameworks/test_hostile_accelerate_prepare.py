"""``accelerator.prepare`` used in ways the call reader does not follow (redteam4, issue 21):
an alias, ``map`` / ``functools.partial``, a call inside a lambda, a call past the scope's call
bound, and a call with more objects than the reader evaluates. Each left
``config.accelerate.accelerator.prepare_apart`` false (another call paired or took only a
dataloader) or absent, so FP8D-ACC-0095 stayed quiet on a script that prepares the model alone;
now it is Unknown naming the line, and the calls the reader does follow still decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.pyscopes import MAX_CALLS

FACT = "config.accelerate.accelerator.prepare_apart"
HEAD = """import torch
from torch.utils.data import DataLoader
from accelerate import Accelerator
from transformers import AutoModelForCausalLM
accelerator = Accelerator(mixed_precision="fp8")
model = AutoModelForCausalLM.from_pretrained("m")
optimizer = torch.optim.AdamW(model.parameters())
train_dl = DataLoader([])
"""
DL = "train_dl = accelerator.prepare(train_dl)\n"


def _fact(folder: Path, body: str) -> object:
    (folder / "train.py").write_text(HEAD + body)
    return read_paths([str(folder / "train.py")]).facts.get(FACT, "absent")


@pytest.mark.parametrize("body, line", [
    ("prep = accelerator.prepare\nmodel = prep(model)\n" + DL, 9),
    ("model = (lambda m: accelerator.prepare(m))(model)\n" + DL, 9),
    ("model, = map(accelerator.prepare, [model])\n" + DL, 9),
    ("import functools\nfunctools.partial(accelerator.prepare, model)()\n" + DL, 10),
    ("model = getattr(accelerator, 'prepare')(model)\n" + DL, 9),
    (DL + "print()\n" * (MAX_CALLS + 10) + "model = accelerator.prepare(model)\n",
     MAX_CALLS + 20),
])
def test_a_prepare_the_reader_does_not_follow_is_unknown_not_false(
        tmp_path: Path, body: str, line: int) -> None:
    value = _fact(tmp_path, body)
    assert isinstance(value, Unknown), value
    assert f"line {line}" in value.reason


def test_objects_past_the_readers_bound_are_not_known(tmp_path: Path) -> None:
    # only the first objects of a call are evaluated: a model after 5,000 dataloaders is one
    # the reader never saw, and the reason stays short
    value = _fact(tmp_path, "accelerator.prepare(" + "train_dl, " * 5000 + "model)\n")
    assert isinstance(value, Unknown) and "line 9" in value.reason
    assert len(value.reason) < 400


def test_what_the_reader_follows_still_decides(tmp_path: Path) -> None:
    assert _fact(tmp_path, "model, optimizer = accelerator.prepare(model, optimizer)\n" + DL) \
        is False
    assert _fact(tmp_path, "model = accelerator.prepare(model)\n" + DL) == "model"
    # an unrelated object's prepare and an alias of something else change nothing
    assert _fact(tmp_path, "model, optimizer = accelerator.prepare(model, optimizer)\n"
                           "tok = object()\np = tok.prepare\n") is False
    assert _fact(tmp_path, "x = 1\n") == "absent"


@pytest.mark.parametrize("body", [
    # the script's own class: taken for accelerate's, ACC-0095 fired on it
    "class Accelerator:\n    def prepare(self, *a):\n        return a\n"
    "acc2 = Accelerator()\nmodel = acc2.prepare(model)\n",
    # the text does not order the bindings: an unused class of that name beside the real
    # prepare(model) is Unknown too, never false
    "model = accelerator.prepare(model)\nclass Accelerator:\n    pass\n",
])
def test_a_class_shadowing_accelerator_leaves_it_unknown(tmp_path: Path, body: str) -> None:
    value = _fact(tmp_path, body)
    if body.startswith("class"):
        # pyflow: names bind in statement order, so `acc2 = Accelerator()` after the class is
        # the script's own object: no accelerate prepare() to judge (ACC-0095 stays quiet)
        assert value == "absent"
        return
    assert isinstance(value, Unknown) and "its own Accelerator" in value.reason
