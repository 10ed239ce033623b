"""click / typer options whose value is not the launch line's or the written default
(redteam4, issue 21; reading/pyclick.py). Each was read as the default: an option filled from
the environment (``envvar=``, ``auto_envvar_prefix``), a ``default_map``, a terminal prompt, a
``callback=`` that returns another value, two options filling one parameter, and a boolean
flag with ``default=True`` whose stored value changed in click 8.2.2 (``not default`` up to
8.2.1: pallets/click 8.2.1 src/click/core.py:2614; ``default`` at 8.2.2 core.py:2618; True at
8.3.1 core.py:2826). So ``export FP8_RECIPE=mxfp8`` before ``python train.py`` read as "no
FP8"; now the value is Unresolved and the FP8 verdict undetermined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, Unresolved, parse


def _value(decorators: str, argv: tuple[str, ...] = (), command: str = "",
           run: str = "main()") -> Any:
    text = (f"import click\n@click.command({command})\n{decorators}\n"
            f"def main(fp8_recipe):\n    record(fp8_recipe)\n\nif __name__ == '__main__':\n"
            f"    {run}\n")
    module = Module("train.py", parse("train.py", text), argv)
    return next(c for c, _ in module.calls() if c.name == "record").args[0]


def _typer(signature: str, argv: tuple[str, ...] = ()) -> Any:
    text = ("import typer\nfrom typing import Annotated\napp = typer.Typer()\n@app.command()\n"
            f"def main({signature}):\n    record(fp8_recipe)\n\nif __name__ == '__main__':\n"
            "    app()\n")
    module = Module("train.py", parse("train.py", text), argv)
    return next(c for c, _ in module.calls() if c.name == "record").args[0]


OPT = '@click.option("--fp8-recipe", default=None)'


@pytest.mark.parametrize("value", [
    _value('@click.option("--fp8-recipe", envvar="FP8_RECIPE", default=None)'),
    _value(OPT, run="main(auto_envvar_prefix='TRAIN')"),
    _value(OPT, command="context_settings=dict(auto_envvar_prefix='T')"),
    _value(OPT, command="context_settings={'default_map': {'fp8_recipe': 'mxfp8'}}"),
    _value('@click.option("--fp8-recipe", prompt=True)'),
    _value('@click.option("--fp8-recipe", default="mxfp8", callback=lambda c, p, v: None)'),
    _value('@click.option("--fp8-recipe", default=None)\n'
           '@click.option("--recipe", "fp8_recipe", default="mxfp8")', ("--recipe", "x")),
    _value('@click.option("--no-fp8", "fp8_recipe", is_flag=True, default=True)',
           ("--no-fp8",)),
    _typer('fp8_recipe: str = typer.Option(None, envvar="FP8_RECIPE")'),
    _typer('fp8_recipe: Annotated[str, typer.Option(envvar="FP8_RECIPE")] = None'),
    _typer('fp8_recipe: str = typer.Option("mxfp8", callback=lambda v: None)'),
])
def test_a_value_from_outside_the_text_is_unresolved(value: Any) -> None:
    assert isinstance(value, Unresolved), value


def test_the_launch_lines_value_still_wins() -> None:
    assert _value('@click.option("--fp8-recipe", envvar="FP8_RECIPE", default=None)',
                  ("--fp8-recipe", "mxfp8")) == "mxfp8"
    assert _typer('fp8_recipe: str = typer.Option(None, envvar="X")',
                  ("--fp8-recipe", "mxfp8")) == "mxfp8"
    assert _value(OPT) is None
    # a flag that defaults to False stores True in every click release
    assert _value('@click.option("--fp8", "fp8_recipe", is_flag=True)', ("--fp8",)) is True
    assert _value('@click.option("--fp8/--no-fp8", "fp8_recipe", default=True)',
                  ("--no-fp8",)) is False


SCRIPT = """import click
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


@click.option('--fp8-recipe', default=None, envvar='FP8_RECIPE')
@click.command()
def main(fp8_recipe):
    if fp8_recipe == 'mxfp8':
        fp8_recipe = recipe.MXFP8BlockScaling()
    model = te.Linear(2048, 2048)
    if fp8_recipe is not None:
        with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
            model(torch.zeros(2048, 2048))


if __name__ == '__main__':
    main()
"""


def test_a_recipe_exported_for_click_is_no_bf16_verdict(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "run.sh").write_text("#!/bin/bash\nexport FP8_RECIPE=mxfp8\npython3 train.py\n")
    read = read_paths([str(tmp_path / "run.sh"), str(tmp_path / "train.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not False
