"""Values that are called (reading/pycallables.py; issue 22, holdout11 nvfp4-pretrain): a TE
recipe built by a lambda, ``functools.partial`` or a function of the file, passed as a parameter
into the function that opens ``te.fp8_autocast(fp8_recipe=recipe())``.

The real script is Infatoshi/nvfp4-pretrain te/train_te.py at
3e7bad69696a7a09a1fe0eb6c1e51cbaea1108cd, verbatim in benchmarks/realjobs (holdout11); the
others are reductions of it (its l.12-17, 93-107, 124-133)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" / \
    "holdout11-nvfp4pretrain-te-nvfp4-default-recipe-rtx-pro-6000-rht" / "files" / "te" / \
    "train_te.py"

HEAD = """import contextlib, functools
import transformer_engine.pytorch as tep
from transformer_engine.common.recipe import MXFP8BlockScaling, NVFP4BlockScaling
{defs}

def run(tag, steps, recipe{default}):
    for step in range(1, steps + 1):
        ctx = tep.fp8_autocast(enabled=True, fp8_recipe=recipe()) if recipe else contextlib.nullcontext()
        with ctx:
            pass


def main():
{calls}


if __name__ == "__main__":
    main()
"""
REDUCED = dict(defs="RECIPE = lambda: NVFP4BlockScaling()  # FULL recipe (RHT+SR)",
               default="", calls='    run("bf16", 10, None)\n    run("nvfp4-all", 10, RECIPE)\n'
                                  '    run("nvfp4-hp2", 10, RECIPE)')


def _intent(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "train_te.py"
    path.write_text(text)
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts, "prov": prov}


def _recipe(tmp_path: Path, **parts: str) -> Any:
    return _intent(tmp_path, HEAD.format(**{**REDUCED, **parts}))["intent.recipe"]


def test_the_real_script_runs_the_nvfp4_lambda_it_passes(tmp_path: Path) -> None:
    got = _intent(tmp_path, REAL.read_text())
    assert got["intent.recipe"] == "nvfp4" and got["intent.fp8"] is True
    assert got["prov"]["intent.recipe"].endswith("train_te.py:17")


def test_reduced_lambda_partial_function_and_class(tmp_path: Path) -> None:
    assert _recipe(tmp_path) == "nvfp4"
    partial = "RECIPE = functools.partial(NVFP4BlockScaling, disable_rht=True)"
    assert _recipe(tmp_path, defs=partial) == "nvfp4"
    own = "def RECIPE():\n    return MXFP8BlockScaling()"
    assert _recipe(tmp_path, defs=own) == "mxfp8"
    cls = "RECIPE = MXFP8BlockScaling"
    assert _recipe(tmp_path, defs=cls) == "mxfp8"


def test_default_argument_and_a_parameter_passed_on(tmp_path: Path) -> None:
    assert _recipe(tmp_path, default="=RECIPE", calls='    run("nvfp4", 10)') == "nvfp4"
    on = REDUCED["calls"].replace('run("nvfp4-all", 10, RECIPE)', 'go(RECIPE)')
    text = HEAD.format(**{**REDUCED, "calls": on}) + \
        "\n\ndef go(r):\n    run('nvfp4-all', 10, r)\n"
    assert _intent(tmp_path, text)["intent.recipe"] == "nvfp4"


def test_decoys_in_comments_and_strings_do_not_count(tmp_path: Path) -> None:
    defs = ('# RECIPE = lambda: MXFP8BlockScaling()\nNOTE = "RECIPE = lambda: '
            'MXFP8BlockScaling()"\nRECIPE = lambda: NVFP4BlockScaling()')
    assert _recipe(tmp_path, defs=defs) == "nvfp4"
    dead = "RECIPE = lambda: NVFP4BlockScaling()\nif False:\n    RECIPE = lambda: MXFP8BlockScaling()"
    assert _recipe(tmp_path, defs=dead) == "nvfp4"


def test_two_disagreeing_callables_are_unknown(tmp_path: Path) -> None:
    defs = "A = lambda: NVFP4BlockScaling()\nB = lambda: MXFP8BlockScaling()"
    calls = '    run("a", 10, A)\n    run("b", 10, B)\n    run("bf16", 10, None)'
    got = _recipe(tmp_path, defs=defs, calls=calls)
    assert isinstance(got, Unknown) and "different callables" in got.reason


def test_unknown_value_and_lambda_with_parameters_are_unknown(tmp_path: Path) -> None:
    defs = "import os\nRECIPE = RECIPES[os.environ['KIND']]"
    assert isinstance(_recipe(tmp_path, defs=defs), Unknown)
    defs = "RECIPE = lambda fmt: NVFP4BlockScaling()"
    assert isinstance(_recipe(tmp_path, defs=defs), Unknown)


def test_recursion_passing_the_parameter_on_terminates(tmp_path: Path) -> None:
    text = HEAD.format(**REDUCED).replace(
        "        with ctx:\n            pass\n",
        "        with ctx:\n            pass\n    if steps > 1:\n        run(tag, steps - 1, recipe)\n")
    assert _intent(tmp_path, text)["intent.recipe"] == "nvfp4"
    loop = HEAD.format(**{**REDUCED, "calls": "    pass"}).replace(
        "        with ctx:\n            pass\n", "        with ctx:\n            run(tag, 1, recipe)\n")
    assert isinstance(_intent(tmp_path, loop)["intent.recipe"], Unknown)


def test_many_calls_passing_the_parameter_on_are_worked_out_once(tmp_path: Path) -> None:
    # f0 opens the autocast; each f<n> calls f<n-1> 30 times passing its recipe on: without
    # working each function out once this is 30 ** 12 call sites
    funcs = ["def f0(recipe):\n    with tep.fp8_autocast(fp8_recipe=recipe()):\n        pass\n"]
    for n in range(1, 13):
        body = "".join(f"    f{n - 1}(recipe)\n" for _ in range(30))
        funcs.append(f"def f{n}(recipe):\n{body}")
    text = ("import transformer_engine.pytorch as tep\n"
            "from transformer_engine.common.recipe import MXFP8BlockScaling\n\n" +
            "\n\n".join(funcs) + "\n\nf12(lambda: MXFP8BlockScaling())\n")
    assert _intent(tmp_path, text)["intent.recipe"] == "mxfp8"
