"""The rows a script feeds its TE modules (preflight/reading/pymodelrows.py, TE issue 1571)."""

from __future__ import annotations

import ast

from preflight.facts import Unknown
from preflight.reading.pymodelrows import gemm_rows

IMPORTS = {"torch": "torch", "nn": "torch.nn", "te": "transformer_engine.pytorch"}
FP8 = "with te.fp8_autocast(enabled=True):\n"


def _rows(src: str) -> object:
    return gemm_rows(ast.parse(src), IMPORTS).value


def _in_fp8(*calls: str) -> str:
    return FP8 + "".join(f"    {c}\n" for c in calls)


def test_a_literal_input_of_one_row_into_a_te_sequential() -> None:
    src = ("m = nn.Sequential(te.Linear(256, 5120), nn.SiLU(), te.Linear(5120, 5120)).cuda()\n"
           "x = torch.randn(1, 256, device='cuda')\n" + _in_fp8("y = m(x)"))
    assert _rows(src) == 1
    assert gemm_rows(ast.parse(src), IMPORTS).line == 4


def test_leading_dims_multiply_and_view_with_minus_one() -> None:
    assert _rows("B = 4\nm = te.Linear(64, 64)\nx = torch.zeros((B, 8, 64))\n" +
                 _in_fp8("m(x)")) == 32
    assert _rows("m = te.Linear(64, 64)\nx = torch.ones(2, 3, 64).view(6, -1)\n" +
                 _in_fp8("m(x)")) == 6
    assert _rows("def f():\n    m = te.Linear(64, 64)\n    with te.autocast():\n"
                 "        m.forward(torch.randn(16, 64))\n") == 16


def test_inputs_with_the_same_verdict_combine_and_different_ones_are_unknown() -> None:
    same = "m = te.Linear(64, 64)\n" + _in_fp8("m(torch.randn(64, 64))", "m(torch.randn(128, 64))")
    assert _rows(same) == 64
    mixed = "m = te.Linear(64, 64)\n" + _in_fp8("m(torch.randn(1, 64))", "m(torch.randn(128, 64))")
    assert isinstance(_rows(mixed), Unknown)


def test_what_the_text_does_not_give_says_nothing() -> None:
    # sizes from a variable, a module that changes the rows, a name bound twice, a torch.nn
    # model, a call outside any TE autocast (a BF16 warm-up runs no FP8 GEMM)
    assert _rows("m = te.Linear(64, 64)\n" + _in_fp8("m(torch.randn(n, 64))")) is None
    assert _rows("m = nn.Sequential(nn.Conv1d(3, 8, 3), te.Linear(8, 64))\n" +
                 _in_fp8("m(torch.randn(1, 8))")) is None
    assert _rows("m = te.Linear(64, 64)\nx = torch.randn(1, 64)\nx = load()\n" +
                 _in_fp8("m(x)")) is None
    assert _rows("m = nn.Linear(64, 64)\n" + _in_fp8("m(torch.randn(1, 64))")) is None
    assert _rows("m = te.Linear(64, 64)\nm(torch.randn(1, 64))\n") is None


def test_hostile_chains_and_nesting_stay_bounded() -> None:
    chain = "torch.randn(4, 64)" + ".view(4, -1)" * 400
    assert _rows("m = te.Linear(64, 64)\n" + _in_fp8(f"m({chain})")) is None
    deep = "".join("    " * i + "if a:\n" for i in range(90))
    src = "m = te.Linear(64, 64)\n" + deep + "    " * 90 + "with te.fp8_autocast():\n" + \
        "    " * 91 + "m(torch.randn(1, 64))\n"
    assert _rows(src) == 1
