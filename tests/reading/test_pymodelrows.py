"""The rows a script feeds its TE modules (preflight/reading/pymodelrows.py, TE issue 1571)."""

from __future__ import annotations

import ast

from preflight.facts import Unknown
from preflight.reading.pymodelrows import gemm_rows

IMPORTS = {"torch": "torch", "nn": "torch.nn", "te": "transformer_engine.pytorch"}


def _rows(src: str) -> object:
    return gemm_rows(ast.parse(src), IMPORTS).value


def test_a_literal_input_of_one_row_into_a_te_sequential() -> None:
    src = ("m = nn.Sequential(te.Linear(256, 5120), nn.SiLU(), te.Linear(5120, 5120)).cuda()\n"
           "x = torch.randn(1, 256, device='cuda')\n"
           "with te.fp8_autocast(enabled=True):\n    y = m(x)\n")
    assert _rows(src) == 1
    assert gemm_rows(ast.parse(src), IMPORTS).line == 4


def test_leading_dims_multiply_and_view_with_minus_one() -> None:
    assert _rows("B = 4\nm = te.Linear(64, 64)\nx = torch.zeros((B, 8, 64))\nm(x)\n") == 32
    assert _rows("m = te.Linear(64, 64)\nx = torch.ones(2, 3, 64).view(6, -1)\nm(x)\n") == 6
    assert _rows("def f():\n    m = te.Linear(64, 64)\n    m.forward(torch.randn(16, 64))\n") == 16


def test_inputs_with_the_same_verdict_combine_and_different_ones_are_unknown() -> None:
    same = "m = te.Linear(64, 64)\nm(torch.randn(64, 64))\nm(torch.randn(128, 64))\n"
    assert _rows(same) == 64
    mixed = "m = te.Linear(64, 64)\nm(torch.randn(1, 64))\nm(torch.randn(128, 64))\n"
    assert isinstance(_rows(mixed), Unknown)


def test_what_the_text_does_not_give_says_nothing() -> None:
    # sizes from a variable, a module that changes the rows, a name bound twice, a torch.nn model
    assert _rows("m = te.Linear(64, 64)\nm(torch.randn(n, 64))\n") is None
    assert _rows("m = nn.Sequential(nn.Conv1d(3, 8, 3), te.Linear(8, 64))\n"
                 "m(torch.randn(1, 8))\n") is None
    assert _rows("m = te.Linear(64, 64)\nx = torch.randn(1, 64)\nx = load()\nm(x)\n") is None
    assert _rows("m = nn.Linear(64, 64)\nm(torch.randn(1, 64))\n") is None
