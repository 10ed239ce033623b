"""A Python job file can build a value whose parts are shared (``v2 = [v1, v1]``): a few lines
of text, 2**N parts once printed. The red team (redteam2, issue 21) passed one to
``Accelerator(kwargs_handlers=...)``; the accelerate reader quoted it in its reason and one check
took 26 s in ``repr`` (2**63 parts, cut only by the evaluation depth). A value of more than
``pyvalues.MAX_WEIGHT`` parts is now Unresolved with the reason at its line, however it is
built: lists, dicts, call arguments, attributes set afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.pyvalues import MAX_WEIGHT, Call, Weights

DOUBLINGS = 17          # 2**17 parts: past MAX_WEIGHT, and cheap enough for the old code to
                        # finish (and fail) quickly

SHAPES = {
    "list": "v{i} = [v{j}, v{j}]",
    "dict": "v{i} = {{'a': v{j}, 'b': v{j}}}",
    "call": "v{i} = dict(a=v{j}, b=v{j})",
}


def _script(shape: str) -> str:
    lines = [SHAPES[shape].format(i=i, j=i - 1) for i in range(1, DOUBLINGS + 1)]
    return ("from accelerate import Accelerator\nfrom accelerate.utils import FP8RecipeKwargs\n"
            "v0 = [FP8RecipeKwargs(backend='te')]\n" + "\n".join(lines) + "\n"
            f"acc = Accelerator(mixed_precision='fp8', kwargs_handlers=[v{DOUBLINGS}])\n")


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_value_of_shared_parts_is_unresolved_with_its_line(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "train.py"
    path.write_text(_script(shape))
    read = read_paths([str(path)])
    backend = read.facts["config.accelerate.accelerator.fp8_backend"]
    assert isinstance(backend, Unknown) and f"more than {MAX_WEIGHT} parts" in backend.reason
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"       # the rest is read
    assert len(repr(read.facts)) < 100_000


def test_weights_count_each_shared_part_once_per_use() -> None:
    weights = Weights()
    leaf = [1, 2, 3]
    assert weights.weight(leaf) == 4
    assert weights.weight([leaf, leaf]) == 9
    call = Call("f", 1, (leaf,), {"a": leaf, "b": {"c": leaf}})
    assert weights.weight(call) == 1 + 4 + 4 + 5
    value: list[object] = [0]
    for _ in range(64):
        value = [value, value]
    assert weights.weight(value) == MAX_WEIGHT + 1
    assert weights.bounded(value, 7).line == 7
