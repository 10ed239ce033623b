"""argparse options read as argparse reads the launch line (Lib/argparse.py): ``type=`` converts,
``choices=`` refuses, the last occurrence wins, unique prefixes abbreviate, ``store_const``
stores its const, ``--`` ends options; and a choice on the launch line followed through an
``if`` chain to the FP8 recipe (TE's te_mixtral tutorial picks MXFP8 with ``--improvement 3``,
NVIDIA/TransformerEngine 937c4de0 docs/examples/te_mixtral/run_finetune_ep.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module, Unresolved, parse

_OPTIONS = """
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--improvement", type=int, choices=(0, 1, 2, 3), default=1)
    p.add_argument("--mixed-precision", type=str, choices=["bf16", "mxfp8"], default="bf16")
    p.add_argument("--tag", default="0")
    p.add_argument("--steps", type=int, default="10")
    p.add_argument("--level", action="store_const", const=5, default=0)
    p.add_argument("--dtype", type=torch_dtype, default="bf16")
    args = p.parse_args()
"""


def _opt(dest: str, *argv: str) -> Any:
    m = Module("train.py", parse("train.py", textwrap.dedent(_OPTIONS)), tuple(argv))
    return m.option(dest)


@pytest.mark.parametrize("dest, argv, value", [
    ("improvement", ("--improvement", "3"), 3),
    ("improvement", ("--improvement=2",), 2),
    ("improvement", (), 1),
    ("tag", ("--tag", "3"), "3"),                         # no type=: argparse keeps the string
    ("improvement", ("--improvement", "1", "--improvement", "3"), 3),   # the last one wins
    ("mixed_precision", ("--mixed", "mxfp8"), "mxfp8"),    # a unique prefix of --mixed-precision
    ("level", ("--level",), 5),                          # store_const
    ("steps", (), 10),                                   # a string default goes through type=
    ("improvement", ("--", "--improvement", "3"), 1),     # after --: positional
    ("dtype", ("--dtype", "fp32"), "fp32"),               # the script's converter: as written
])
def test_option_values_as_argparse_gives_them(dest: str, argv: tuple[str, ...],
                                              value: Any) -> None:
    got = _opt(dest, *argv)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("argv", [("--improvement", "7"), ("--improvement", "x"),
                                  ("--mixed-precision", "fp8")])
def test_a_value_argparse_refuses_is_unresolved(argv: tuple[str, ...]) -> None:
    dest = argv[0][2:].replace("-", "_")
    got = _opt(dest, *argv)
    assert isinstance(got, Unresolved) and got.line is not None


_SCRIPT = """\
import argparse
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe as te_recipe


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--improvement", type=int, choices=(0, 1, 2, 3), default=1)
    return parser.parse_args()


def main():
    args = parse_args()
    if args.improvement == 3:
        mixed_precision = "mxfp8"
    elif args.improvement == 2:
        mixed_precision = "bf16"
    else:
        mixed_precision = "bf16"
    fp8_recipe = None
    if mixed_precision == "mxfp8":
        fp8_recipe = te_recipe.MXFP8BlockScaling(fp8_format=te_recipe.Format.E4M3)
    model = te.Linear(1024, 1024)
    with te.autocast(enabled=fp8_recipe is not None, recipe=fp8_recipe):
        model(torch.randn(32, 1024))


if __name__ == "__main__":
    main()
"""


def _intent(tmp_path: Path, launch: str | None) -> dict[str, Any]:
    (tmp_path / "train.py").write_text(_SCRIPT)
    paths = [str(tmp_path / "train.py")]
    if launch is not None:
        (tmp_path / "run.sh").write_text(launch + "\n")
        paths.insert(0, str(tmp_path / "run.sh"))
    read = read_paths(paths, None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}


def test_the_launch_lines_choice_picks_mxfp8(tmp_path: Path) -> None:
    intent = _intent(tmp_path, "torchrun --nproc_per_node=8 train.py --improvement 3")
    assert intent["fp8"] is True
    assert intent["recipe"] == "mxfp8" and intent["backend"] == "te"


@pytest.mark.parametrize("launch", ["torchrun --nproc_per_node=8 train.py --improvement 2",
                                    "torchrun --nproc_per_node=8 train.py",
                                    None])   # run by hand: `python train.py` (jobs/pyjob.py)
def test_other_choices_and_the_default_run_bf16(tmp_path: Path, launch: str | None) -> None:
    assert _intent(tmp_path, launch)["fp8"] is False


@pytest.mark.parametrize("launch", ["torchrun train.py --improvement 7",
                                    "torchrun train.py --improvement $LEVEL"])
def test_undecidable_choice_is_unknown(tmp_path: Path, launch: str | None) -> None:
    assert isinstance(_intent(tmp_path, launch)["fp8"], Unknown)


def test_is_not_none_of_an_unknown_call_stays_unresolved() -> None:
    m = Module("train.py", parse("train.py", textwrap.dedent("""
        import transformer_engine.pytorch as te
        from mylib import make_recipe
        r = make_recipe()
        with te.autocast(enabled=r is not None, recipe=r):
            pass
    """)), ())
    call = next(c for c, _ in m.calls() if c.name == "autocast")
    assert isinstance(call.kwargs["enabled"], Unresolved)


def test_a_value_from_the_environment_is_not_called_refused() -> None:
    got = _opt("improvement", "--improvement", "$LEVEL")
    assert isinstance(got, Unresolved) and "refuses" not in got.reason
