"""A name imported from a module outside the job (``from somepkg import FP8``, ``import cfg;
cfg.USE_FP8`` with no ``cfg.py`` here) is Unknown with that reason wherever a setting's value is
wanted -- a fact, a test, a comparison -- never its own dotted name read as the value
(:mod:`preflight.reading.pyoutside`, session 43 pyfix8 item 1)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from preflight.reading.pyoutside import why
from preflight.reading.pyvalues import Ref

HEAD = "import torch\nimport transformer_engine.pytorch as te\n"
LOOP = """
model = te.Linear(1024, 1024)
with te.fp8_autocast(enabled={enabled}):
    y = model(x)
y.sum().backward()
"""


def _read(folder: Path, body: str, files: dict[str, str] | None = None) -> dict[str, object]:
    (folder / ".git").mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (folder / name).write_text(textwrap.dedent(text))
    (folder / "train.py").write_text(HEAD + textwrap.dedent(body))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return {**read.facts, **values}


@pytest.mark.parametrize("body, owner", [
    ("from somepkg import FP8\n" + LOOP.format(enabled="FP8"), "somepkg"),
    ("import cfg\n" + LOOP.format(enabled="cfg.USE_FP8"), "cfg"),
    ("from settings.train import use_fp8 as on\n" + LOOP.format(enabled="on"),
     "settings.train"),
    # a relative import of a module the job does not hold
    ("from .conf import FP8\n" + LOOP.format(enabled="FP8"), ".conf"),
])
def test_a_constant_of_a_module_outside_the_job_is_unknown(tmp_path: Path, body: str,
                                                           owner: str) -> None:
    got = _read(tmp_path, body)
    enabled = got["config.pytorch.te.autocast.enabled"]
    assert isinstance(enabled, Unknown) and owner in enabled.reason
    assert "outside the job" in enabled.reason
    assert isinstance(got["intent.fp8"], Unknown)


def test_an_undecided_test_on_such_a_name_says_where_it_comes_from(tmp_path: Path) -> None:
    got = _read(tmp_path, "from somepkg import FP8\nif FP8:\n" + textwrap.indent(
        LOOP.format(enabled="True"), "    "))
    enabled = got["config.pytorch.te.autocast.enabled"]
    assert isinstance(enabled, Unknown) and "somepkg" in enabled.reason


def test_a_comparison_with_such_a_name_says_where_it_comes_from(tmp_path: Path) -> None:
    got = _read(tmp_path, "from somepkg import MODE\nif MODE == 'fp8':\n" + textwrap.indent(
        LOOP.format(enabled="True"), "    "))
    enabled = got["config.pytorch.te.autocast.enabled"]
    assert isinstance(enabled, Unknown) and "somepkg" in enabled.reason


def test_the_accelerator_precision_from_such_a_name_is_unknown(tmp_path: Path) -> None:
    got = _read(tmp_path, "from accelerate import Accelerator\nfrom settings import MP\n"
                "acc = Accelerator(mixed_precision=MP)\n")
    assert isinstance(got["config.accelerate.mixed_precision"], Unknown)
    fp8 = got["intent.fp8"]
    assert isinstance(fp8, Unknown) and "settings" in fp8.reason
    assert "refuses" not in fp8.reason      # (was: 'settings.MP' is none of no, fp8, ...)


# -- quiet: names with a meaning keep it ------------------------------------------------------

def test_a_job_module_constant_is_its_value(tmp_path: Path) -> None:
    got = _read(tmp_path, "import cfg\n" + LOOP.format(enabled="cfg.USE_FP8"),
                {"cfg.py": "USE_FP8 = True\n"})
    assert got["config.pytorch.te.autocast.enabled"] is True
    assert got["intent.fp8"] is True


@pytest.mark.parametrize("name", ["torch.bfloat16", "transformer_engine.common.recipe.Format.HYBRID",
                                  "os.sep", "builtins.int", "__main__.make_model",
                                  "mypkg.MyStrategy", "mypkg.Precision.FP8", "Trainer"])
def test_library_names_and_classes_are_kept(name: str) -> None:
    assert why(Ref(name)) is None


@pytest.mark.parametrize("name", ["somepkg.FP8", "cfg.USE_FP8", "cfg.mixed_precision", ".conf.X"])
def test_constants_of_other_modules_are_not_known(name: str) -> None:
    reason = why(Ref(name))
    assert reason is not None and "outside the job" in reason


def test_a_dtype_of_torch_is_still_a_fact(tmp_path: Path) -> None:
    got = _read(tmp_path, "from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype=torch.bfloat16)\n"
                + LOOP.format(enabled="True"))
    assert got["config.pytorch.te.autocast.enabled"] is True


# -- hostile ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["", ".", "..", "a." * 400 + "B", "x" * 10_000, "\u202efp8"])
def test_odd_names_never_raise_and_reasons_stay_short(name: str) -> None:
    reason = why(Ref(name))
    assert reason is None or len(reason) < 400


def test_a_thousand_outside_names_read_in_bounds(tmp_path: Path) -> None:
    body = "".join(f"from pkg{i} import F{i}\n" for i in range(1000))
    body += "FP8 = " + " and ".join(f"F{i}" for i in range(1000)) + "\n"
    got = _read(tmp_path, body + LOOP.format(enabled="FP8"))
    assert isinstance(got["config.pytorch.te.autocast.enabled"], Unknown)


def test_an_and_of_such_a_name_says_where_it_comes_from(tmp_path: Path) -> None:
    got = _read(tmp_path, "import sys\nfrom somepkg import FP8\nON = FP8 and len(sys.argv) > 1\n"
                + LOOP.format(enabled="ON"))
    enabled = got["config.pytorch.te.autocast.enabled"]
    assert isinstance(enabled, Unknown) and "somepkg" in enabled.reason
