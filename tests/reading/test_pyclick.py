"""click options bound to the parameters of the function they decorate (reading/pyclick.py), as
click 8.3.1 binds them (src/click/core.py ``Option._parse_decls`` 2891-2945, flags 2770-2826,
``convert_type`` 2155; parser.py 359-366: no abbreviations), and a launch line's value followed
through a rebound parameter and a closure to the TE recipe: the shape of Scicom's train.py
(Scicom-AI-Enterprise-Organization/small-malaysian-lm a0af01f5 train.py:145-281, held-out set 6),
reduced."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, Unresolved, parse

_CLI = """
    import click

    @click.option("--model-name", default="Qwen3-0.6B-Base")
    @click.option("-f", "--fp8-recipe", default=None)
    @click.option("--include-lm-head", is_flag=True)
    @click.option("--compile/--no-compile", default=True)
    @click.option("--steps", default=5)
    @click.option("--precision", type=click.Choice(["bf16", "fp8"]), default="bf16")
    @click.option("--fp8", "use_fp8", is_flag=True)
    @click.command()
    def main(model_name, fp8_recipe, include_lm_head, compile, steps, precision, use_fp8):
        record(fp8_recipe, include_lm_head, compile, steps, precision, use_fp8)

    if __name__ == "__main__":
        main()
"""
_NAMES = ("fp8_recipe", "include_lm_head", "compile", "steps", "precision", "use_fp8")


def _values(*argv: str) -> dict[str, Any]:
    m = Module("train.py", parse("train.py", textwrap.dedent(_CLI)), tuple(argv))
    call = next(c for c, _ in m.calls() if c.name == "record")
    return dict(zip(_NAMES, call.args))


@pytest.mark.parametrize("argv, name, value", [
    ((), "fp8_recipe", None),
    (("--fp8-recipe", "mxfp8"), "fp8_recipe", "mxfp8"),      # --fp8-recipe -> fp8_recipe
    (("--fp8-recipe=mxfp8",), "fp8_recipe", "mxfp8"),
    (("-f", "delayedscaling"), "fp8_recipe", "delayedscaling"),   # the long name names it
    ((), "include_lm_head", False),                          # a boolean flag defaults to False
    (("--include-lm-head",), "include_lm_head", True),
    ((), "compile", True),
    (("--no-compile",), "compile", False),                   # the secondary option of --x/--no-x
    (("--no-compile", "--compile"), "compile", True),        # the last one wins
    (("--steps", "7"), "steps", 7),                          # default=5: an INT option
    (("--precision", "fp8"), "precision", "fp8"),
    (("--fp8",), "use_fp8", True),                           # an identifier names the parameter
])
def test_click_gives_the_parameter_the_launch_lines_value(argv: tuple[str, ...], name: str,
                                                          value: Any) -> None:
    got = _values(*argv)[name]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("argv, name", [
    (("--steps", "x"), "steps"),                 # click refuses a non-integer
    (("--precision", "fp16"), "precision"),      # not one of the Choice
    (("--fp8-recipe", "$RECIPE"), "fp8_recipe"),  # known only when the script runs
])
def test_a_value_click_refuses_or_cannot_know_is_unresolved(argv: tuple[str, ...],
                                                            name: str) -> None:
    assert isinstance(_values(*argv)[name], Unresolved)


def test_click_takes_no_abbreviation() -> None:
    # parser.py _match_long_opt: an option not named whole is NoSuchOption, never a prefix
    assert _values("--fp8-rec", "mxfp8")["fp8_recipe"] != "mxfp8"


def test_without_a_launch_line_the_option_is_unresolved_naming_it() -> None:
    m = Module("train.py", parse("train.py", textwrap.dedent(_CLI)), None)
    call = next(c for c, _ in m.calls() if c.name == "record")
    assert isinstance(call.args[0], Unresolved) and "--fp8-recipe" in call.args[0].reason


_SCRIPT = """\
import click
import torch
from transformer_engine import pytorch as te
from transformer_engine.common import recipe


@click.option('--fp8-recipe', default=None, help='FP8 recipe.')
@click.option('--include-lm-head', is_flag=True)
@click.command()
def main(fp8_recipe, include_lm_head):
    if fp8_recipe == 'delayedscaling':
        fp8_recipe = recipe.DelayedScaling(margin=0, fp8_format=recipe.Format.E4M3)
    elif fp8_recipe == 'mxfp8':
        fp8_recipe = recipe.MXFP8BlockScaling()
    elif fp8_recipe is None:
        pass
    else:
        raise ValueError('FP8 recipe not supported.')
    model = te.Linear(2048, 2048)

    def autocast_forward(model_forward):
        def forward(self, *args, **kwargs):
            with torch.autocast(device_type='cuda', dtype=torch.bfloat16, enabled=True):
                if fp8_recipe is not None:
                    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
                        return model_forward(*args, **kwargs)
                else:
                    return model_forward(*args, **kwargs)
        return forward

    model.forward = autocast_forward(model.forward)


if __name__ == '__main__':
    main()
"""


def _intent(tmp_path: Path, flags: str, script: str = _SCRIPT) -> tuple[dict[str, Any], Any]:
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "run.sh").write_text(
        'CUDA_VISIBLE_DEVICES="0" \\\npython3 train.py \\\n--torch-dtype "bfloat16" ' + flags +
        "\n")
    read = read_paths([str(tmp_path / "run.sh"), str(tmp_path / "train.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


@pytest.mark.parametrize("flags, recipe", [('--fp8-recipe "mxfp8" --include-lm-head', "mxfp8"),
                                           ('--fp8-recipe "delayedscaling"', "delayed")])
def test_the_launch_lines_recipe_reaches_the_closure(tmp_path: Path, flags: str,
                                                     recipe: str) -> None:
    intent, _ = _intent(tmp_path, flags)
    assert intent["fp8"] is True and intent["recipe"] == recipe and intent["backend"] == "te"


def test_no_recipe_flag_is_bf16(tmp_path: Path) -> None:
    intent, _ = _intent(tmp_path, "--include-lm-head")
    assert intent["fp8"] is False


def test_a_closure_sees_the_enclosing_functions_binding() -> None:
    m = Module("t.py", parse("t.py", textwrap.dedent("""
        import transformer_engine.pytorch as te
        from transformer_engine.common import recipe
        def outer():
            r = recipe.Float8CurrentScaling()
            def inner():
                with te.autocast(recipe=r):
                    pass
            return inner
    """)), ())
    call = next(c for c, _ in m.calls() if c.name == "autocast")
    assert call.kwargs["recipe"].name == "Float8CurrentScaling"
    assert not isinstance(call.kwargs["recipe"], Unknown)


_TYPER = """
    from typing import Annotated, Optional
    import typer

    app = typer.Typer()

    @app.command()
    def main(
        model: str,
        fp8_recipe: Optional[str] = None,
        include_lm_head: bool = False,
        steps: int = 5,
        precision: Annotated[str, typer.Option("--prec", "-p")] = "bf16",
        use_fp8: bool = typer.Option(False, "--fp8"),
    ):
        record(fp8_recipe, include_lm_head, steps, precision, use_fp8)

    if __name__ == "__main__":
        app()
"""


def _typer(*argv: str, text: str = _TYPER) -> dict[str, Any]:
    m = Module("train.py", parse("train.py", textwrap.dedent(text)), tuple(argv))
    call = next(c for c, _ in m.calls() if c.name == "record")
    return dict(zip(("fp8_recipe", "include_lm_head", "steps", "precision", "use_fp8"),
                    call.args))


@pytest.mark.parametrize("argv, name, value", [
    (("m",), "fp8_recipe", None),
    (("m", "--fp8-recipe", "mxfp8"), "fp8_recipe", "mxfp8"),   # typer: `_` -> `-`
    (("m", "--include-lm-head"), "include_lm_head", True),     # a bool is --x/--no-x
    (("m", "--no-include-lm-head"), "include_lm_head", False),
    (("m", "--steps", "8"), "steps", 8),
    (("m", "-p", "fp8"), "precision", "fp8"),                  # Annotated[..., Option(decls)]
    (("m", "--fp8"), "use_fp8", True),                         # Option(default, *decls)
    (("m",), "use_fp8", False),
])
def test_typer_gives_the_parameter_the_launch_lines_value(argv: tuple[str, ...], name: str,
                                                          value: Any) -> None:
    got = _typer(*argv)[name]
    assert got == value and type(got) is type(value)


def test_typer_run_makes_a_command_too() -> None:
    text = _TYPER.replace("    @app.command()\n", "").replace("app()", "typer.run(main)")
    assert _typer("m", "--fp8-recipe", "mxfp8", text=text)["fp8_recipe"] == "mxfp8"


def test_a_plain_function_with_defaults_is_no_command() -> None:
    text = _TYPER.replace("    @app.command()\n", "").replace("app()", "main('m')")
    assert _typer("m", "--fp8-recipe", "mxfp8", text=text)["fp8_recipe"] is None
