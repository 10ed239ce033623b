"""A script's own helper modules read with the values it passes them (issue 22: values carried
between the Python files of one job). The shape of TransformerEngine's TE Mixtral tutorial
(docs/examples/te_mixtral at 937c4de0: run_finetune_ep.py -> utils.py -> te_mixtral_mxfp8.py,
reduced): the launch line's --improvement picks the precision in the script, a helper builds
the recipe from it, a model file's class runs te.autocast with it."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs import pyimports
from preflight.jobs.read import read_paths

SCRIPT = """
import argparse
from utils import HyperParameters, run_finetune

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--improvement", type=int, choices=(1, 3), default=1)
    args = p.parse_args()
    hp = HyperParameters()
    if args.improvement == 1:
        hp.mixed_precision = "bf16"
        hp.model_impl = "te_mixtral"
    elif args.improvement == 3:
        hp.mixed_precision = "mxfp8"
        hp.model_impl = "te_mixtral_mxfp8"
    run_finetune(hp)

if __name__ == "__main__":
    main()
"""
UTILS = """
from accelerate import Accelerator

class HyperParameters:
    def __init__(self):
        self.mixed_precision = "bf16"

def init_model(hyperparams):
    import transformer_engine.common.recipe as te_recipe
    if hyperparams.model_impl == "te_mixtral_mxfp8":
        from model_fp8 import FP8Model as ForCausalLM
    else:
        from model_bf16 import BF16Model as ForCausalLM
    fp8_recipe = None
    if hyperparams.mixed_precision == "mxfp8":
        fp8_recipe = te_recipe.MXFP8BlockScaling(fp8_format=te_recipe.Format.E4M3)
    return ForCausalLM(None, fp8_recipe=fp8_recipe)

def wrap(model, hyperparams):
    mp = "bf16" if hyperparams.mixed_precision == "mxfp8" else hyperparams.mixed_precision
    return Accelerator(mixed_precision=mp)

def run_finetune(hyperparams):
    model = init_model(hyperparams)
    wrap(model, hyperparams)

def run_baseline(hyperparams):
    wrap(None, hyperparams)
"""
MODEL = """
import transformer_engine.pytorch as te

class Inner:
    def __init__(self, config, fp8_recipe=None):
        self._fp8_recipe = fp8_recipe

    def _outer(self):
        if self._fp8_recipe is None:
            return None
        return te.autocast(enabled=True, recipe=self._fp8_recipe)

    def moe(self):
        with te.autocast(enabled=False):
            pass

class FP8Model:
    def __init__(self, config, fp8_recipe=None):
        self.model = Inner(config, fp8_recipe=fp8_recipe)
"""


def _job(tmp_path: Path, improvement: int) -> Path:
    for name, text in (("run_finetune_ep.py", SCRIPT), ("utils.py", UTILS),
                       ("model_fp8.py", MODEL)):
        (tmp_path / name).write_text(textwrap.dedent(text))
    run = tmp_path / "run.sh"
    run.write_text(f"torchrun --nproc_per_node=8 run_finetune_ep.py --improvement {improvement}\n")
    return run


def _intent(paths: list[str]) -> tuple[Any, dict[str, Any], dict[str, str]]:
    read = read_paths(paths)
    values, prov = intent.derive(Facts(read.facts, read.provenance))
    return read, values, prov


def test_the_launch_lines_choice_reaches_the_helpers(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run = _job(tmp_path, 3)
    read, values, prov = _intent([str(run)])
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.recipe"] == "mxfp8" and values["intent.format"] == "e4m3"
    # each setting at the file and line that makes it
    assert prov["intent.recipe"] == f"{tmp_path / 'utils.py'}:16"
    assert prov["intent.fp8"] == f"{tmp_path / 'model_fp8.py'}:11"
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    assert read.facts["config.pytorch.te.autocast.disabled_regions"] == 1
    # the helpers are part of the job, read once, with the script
    assert not any(p.code in ("not_read", "not_a_config") for p in read.problems), read.problems


def test_the_other_choice_is_bf16(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run = _job(tmp_path, 1)
    read, values, _ = _intent([str(run)])
    # model_bf16 is not in the job, model_fp8 is not imported: accelerate's bf16 is the job's
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    assert "config.pytorch.te.autocast.enabled" not in read.facts
    assert values["intent.fp8"] is False


def test_naming_every_file_reads_each_helper_once_with_the_script(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run = _job(tmp_path, 3)
    # a helper named before the launch script is read again with what the script passes it
    paths = [str(tmp_path / "utils.py"), str(tmp_path / "model_fp8.py"), str(run),
             str(tmp_path / "run_finetune_ep.py")]
    read, values, _ = _intent(paths)
    assert values["intent.fp8"] is True and values["intent.recipe"] == "mxfp8"
    assert not any(k.startswith("config.accelerate.replaced.") for k in read.facts)


def test_bounds_and_what_is_not_a_job_module(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert pyimports.module_file("torch.nn", str(tmp_path / "x.py")) is None
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("")
    assert pyimports.module_file("pkg.mod", str(tmp_path / "x.py")) == str(tmp_path / "pkg/mod.py")
    assert pyimports.module_file(".mod", str(tmp_path / "pkg" / "a.py")) == \
        str(tmp_path / "pkg/mod.py")
    # a chain of helpers longer than the bound: the deep ones are not read
    for i in range(pyimports.MAX_DEPTH + 2):
        nxt = f"from h{i + 1} import f\n" if i < pyimports.MAX_DEPTH + 1 else \
            "from accelerate import Accelerator\n"
        body = "    return f(x)\n" if i < pyimports.MAX_DEPTH + 1 else \
            "    return Accelerator(mixed_precision=x)\n"
        (tmp_path / f"h{i}.py").write_text(nxt + "def f(x):\n" + body)
    (tmp_path / "train.py").write_text("from h0 import f\nf('fp8')\n")
    read = read_paths([str(tmp_path / "train.py")])
    assert "config.accelerate.mixed_precision" not in read.facts
    # a helper that does not parse is left alone (named by the user it is reported)
    (tmp_path / "h0.py").write_text("def f(:\n")
    read = read_paths([str(tmp_path / "train.py")])
    assert not isinstance(read.facts.get("intent.fp8"), Unknown)
