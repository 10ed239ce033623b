"""A recipe that reaches TE's autocast through a helper of another job file and a method picked per
call site (reading/pyforeign.py, reading/pypretrained.py; holdout12, bionemo-recipes' ESM-2
recipe at 3a9d005b: train_fsdp2.py builds the recipe, ``resolve_layer_precision`` of
quantization.py gives each layer's precision, ``NVEsmEncoder.get_autocast_context(None,
outer=True)`` / ``(layer_idx)`` returns the ``te.autocast`` each layer runs under; the config is
``NVEsmConfig.from_pretrained`` of the job's own folder)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

ENABLED = "config.pytorch.te.autocast.enabled"
RECIPE = "config.pytorch.te.autocast.recipe"

QUANT = """
def resolve(num_layers, fp8_enabled, fp4_enabled, fp8_layers=None, fp4_layers=None):
    all_layers = set(range(1, num_layers + 1))
    if fp8_enabled and fp8_layers is None:
        claimed = set(fp4_layers) if fp4_layers is not None else set()
        fp8_layers = sorted(all_layers - claimed)
    if fp4_enabled and fp4_layers is None:
        claimed = set(fp8_layers) if fp8_layers is not None else set()
        fp4_layers = sorted(all_layers - claimed)
    if not fp8_enabled:
        fp8_layers = None
    if not fp4_enabled:
        fp4_layers = None
    fp8_set = set(fp8_layers) if fp8_layers is not None else set()
    fp4_set = set(fp4_layers) if fp4_layers is not None else set()
    return ["fp8" if i in fp8_set else "fp4" if i in fp4_set else None
            for i in range(1, num_layers + 1)]
"""

MODEL = """
from contextlib import nullcontext
import transformer_engine.pytorch as te


class Encoder:
    def __init__(self, config, fp8_recipe=None, fp4_recipe=None):
        self.config = config
        self._fp8_recipe = fp8_recipe
        self._fp4_recipe = fp4_recipe
        self.layers = [te.Linear(16, 16), te.Linear(16, 16)]

    def forward(self, x):
        with self.ctx(None, outer=True):
            for i, layer in enumerate(self.layers):
                with self.ctx(i):
                    x = layer(x)
        return x

    def ctx(self, n, outer=False):
        if self.config.layer_precision is None:
            return nullcontext()
        if outer:
            if "fp8" not in self.config.layer_precision:
                return nullcontext()
            return te.autocast(enabled=True, recipe=self._fp8_recipe)
        precision = self.config.layer_precision[n]
        recipe = {"fp8": self._fp8_recipe, "fp4": self._fp4_recipe}.get(precision)
        if precision == "fp8":
            return te.autocast(enabled=True, recipe=recipe)
        if precision == "fp4":
            return te.autocast(enabled=True, recipe=recipe)
        return te.autocast(enabled=False)


class Model:
    def __init__(self, config, fp8_recipe=None, fp4_recipe=None):
        self.encoder = Encoder(config, fp8_recipe, fp4_recipe)
"""

TRAIN = """
import argparse
from transformer_engine.common.recipe import DelayedScaling, NVFP4BlockScaling
from transformers import AutoConfig
from model import Model
from quant import resolve

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16")
args = parser.parse_args()
config = AutoConfig.from_pretrained("./cfg")
{layers}
fp8_recipe = DelayedScaling() if args.precision == "fp8" else None
fp4_recipe = NVFP4BlockScaling() if args.precision == "fp4" else None
model = Model(config, fp8_recipe=fp8_recipe, fp4_recipe=fp4_recipe)
"""
LAYERS = ('config.layer_precision = resolve(config.num_hidden_layers, args.precision == "fp8", '
          'args.precision == "fp4")')


def _job(tmp_path: Path, line: str, layers: str = LAYERS, model: str = MODEL,
         quant: str = QUANT, config: object = None,
         config_text: str | None = None) -> dict[str, object]:
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).replace("{layers}", layers))
    (tmp_path / "model.py").write_text(textwrap.dedent(model))
    (tmp_path / "quant.py").write_text(textwrap.dedent(quant))
    (tmp_path / "cfg").mkdir(exist_ok=True)
    (tmp_path / "cfg" / "config.json").write_text(config_text or json.dumps(
        config if config is not None else {"num_hidden_layers": 6, "hidden_size": 320}))
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    return read_paths([str(tmp_path / "run.sh")]).facts


def test_firing_fp8_reaches_each_layer_s_autocast(tmp_path: Path) -> None:
    facts = _job(tmp_path, "python train.py --precision fp8")
    assert facts[ENABLED] is True
    assert facts[RECIPE] == "DelayedScaling"


def test_firing_nvfp4_layers_under_the_fp4_recipe(tmp_path: Path) -> None:
    facts = _job(tmp_path, "python train.py --precision fp4")
    assert facts[ENABLED] is True
    assert facts[RECIPE] == "NVFP4BlockScaling"


def test_quiet_bf16_runs_every_layer_outside_fp8(tmp_path: Path) -> None:
    facts = _job(tmp_path, "python train.py --precision bf16")
    assert facts.get(ENABLED) in (None, False)
    assert RECIPE not in facts


def test_order_the_last_set_before_the_model_is_built_counts(tmp_path: Path) -> None:
    facts = _job(tmp_path, "python train.py --precision fp8", layers=(
        "config.layer_precision = [None] * 6\n" + LAYERS))
    assert facts[ENABLED] is True
    facts = _job(tmp_path, "python train.py --precision fp8", layers=(
        LAYERS + "\nconfig.layer_precision = [None] * 6"))
    assert facts.get(ENABLED) in (None, False)


def test_branches_a_precision_the_text_does_not_decide_is_unknown(tmp_path: Path) -> None:
    facts = _job(tmp_path, "python train.py --precision $PREC")
    assert isinstance(facts.get(ENABLED), Unknown)


def test_branches_a_call_site_in_a_branch_that_does_not_run_adds_nothing(tmp_path: Path) -> None:
    model = MODEL.replace("        with self.ctx(None, outer=True):",
                          "        if False:\n            self.ctx(None, outer=True)\n"
                          "        with nullcontext():")
    facts = _job(tmp_path, "python train.py --precision fp8", model=model)
    assert facts[ENABLED] is True       # the layers' own autocast still runs


def test_quiet_a_method_also_taken_as_a_value_keeps_its_parameters_unknown(
        tmp_path: Path) -> None:
    """Called through ``self.pick = self.ctx`` too: not every call is in the text."""
    model = MODEL.replace("        self.layers = [", "        self.pick = self.ctx\n"
                          "        self.layers = [")
    facts = _job(tmp_path, "python train.py --precision fp8", model=model)
    assert isinstance(facts.get(ENABLED), Unknown)


def test_the_job_s_config_json_sizes_the_layers(tmp_path: Path) -> None:
    """Only 2 layers in config.json: ``fp8_layers=[3]`` claims none of them, all stay BF16."""
    facts = _job(tmp_path, "python train.py --precision fp8", layers=(
        'config.layer_precision = resolve(config.num_hidden_layers, True, False, [3])'),
        config={"num_hidden_layers": 2})
    assert facts.get(ENABLED) in (None, False)


@pytest.mark.parametrize("config", ['"nvidia/esm2_t6_8M_UR50D"', '"../outside"', "args.cfg"])
def test_a_config_not_in_the_job_leaves_the_layers_unknown(tmp_path: Path, config: str) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "config.json").write_text('{"num_hidden_layers": 6}')
    (job / ".git").mkdir()
    train = TRAIN.replace('AutoConfig.from_pretrained("./cfg")',
                          f"AutoConfig.from_pretrained({config})")
    (job / "train.py").write_text(textwrap.dedent(train).replace("{layers}", LAYERS))
    (job / "model.py").write_text(textwrap.dedent(MODEL))
    (job / "quant.py").write_text(textwrap.dedent(QUANT))
    (job / "run.sh").write_text("#!/bin/bash\npython train.py --precision fp8\n")
    facts = read_paths([str(job / "run.sh")]).facts
    assert isinstance(facts.get(ENABLED), Unknown)


@pytest.mark.parametrize("text", ["{", "[1, 2]", '{"num_hidden_layers": "six"}',
                                  '{"a": ' * 5000 + "1" + "}" * 5000, "\x00\x01" * 100])
def test_hostile_a_malformed_config_json_is_no_traceback(tmp_path: Path, text: str) -> None:
    facts = _job(tmp_path, "python train.py --precision fp8", config_text=text)
    assert isinstance(facts.get(ENABLED), Unknown)


def test_hostile_a_huge_helper_module_is_not_read(tmp_path: Path) -> None:
    quant = QUANT + "\n" + "".join(f"X{i} = {i}\n" for i in range(40_000))
    facts = _job(tmp_path, "python train.py --precision fp8", quant=quant)
    assert isinstance(facts.get(ENABLED), Unknown)


def test_hostile_helpers_that_import_each_other_in_a_cycle(tmp_path: Path) -> None:
    quant = """
    from other import back
    def resolve(num_layers, fp8_enabled, fp4_enabled):
        return back(num_layers, fp8_enabled, fp4_enabled)
    """
    (tmp_path / "other.py").write_text(textwrap.dedent("""
    from quant import resolve
    def back(num_layers, fp8_enabled, fp4_enabled):
        return resolve(num_layers, fp8_enabled, fp4_enabled)
    """))
    facts = _job(tmp_path, "python train.py --precision fp8", quant=quant)
    assert isinstance(facts.get(ENABLED), Unknown)


def test_hostile_helpers_that_call_each_other_many_times(tmp_path: Path) -> None:
    """300 helpers each returning calls of two others, reached from ``resolve``: bounded, no
    traceback, the layers' precision Unknown."""
    funcs = "\n".join(f"def h{i}(n):\n    return [h{(i + 1) % 300}(n), h{(i + 7) % 300}(n)]\n"
                      for i in range(300))
    quant = funcs + "\ndef resolve(n, a, b):\n    return h0(n)\n"
    facts = _job(tmp_path, "python train.py --precision fp8", quant=quant)
    assert isinstance(facts.get(ENABLED), Unknown)


def test_hostile_deep_attribute_chains_in_the_method(tmp_path: Path) -> None:
    chain = "self" + ".a" * 400
    model = MODEL.replace("        if self.config.layer_precision is None:",
                          f"        if {chain} is None:\n            return nullcontext()\n"
                          "        if self.config.layer_precision is None:")
    facts = _job(tmp_path, "python train.py --precision fp8", model=model)
    assert ENABLED in facts


@pytest.mark.parametrize("name", ["json", "torch", "os"])
def test_hostile_a_job_module_named_like_a_library_is_never_run(tmp_path: Path,
                                                                 name: str) -> None:
    """The helper is a job file named like the standard library or torch: read, never
    imported or run (its top-level code would write a file)."""
    sentinel = tmp_path / "ran"
    quant = QUANT + f"\nopen({str(sentinel)!r}, 'w').write('ran')\n"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(quant))
    facts = _job(tmp_path, "python train.py --precision fp8", layers=(
        f"from {name} import resolve\n" + LAYERS))
    assert not sentinel.exists()
    assert ENABLED in facts


def test_a_set_on_self_config_in_init_is_the_object_the_methods_read(tmp_path: Path) -> None:
    """bionemo's ``NVEsmEncoder.__init__``: a config with no layer precision gets one for
    every layer when an FP8 recipe is given (``self.config.layer_precision = ["fp8"] * n``);
    read as None before, the layers' autocast was a BF16 one (FP8 "no")."""
    model = MODEL.replace("        self._fp4_recipe = fp4_recipe\n", (
        "        self._fp4_recipe = fp4_recipe\n"
        "        if self.config.layer_precision is None:\n"
        "            if fp8_recipe is not None:\n"
        "                self.config.layer_precision = ['fp8'] * self.config.num_hidden_layers\n"))
    config = {"num_hidden_layers": 4, "layer_precision": None}
    facts = _job(tmp_path, "python train.py --precision fp8", layers="", model=model,
                 config=config)
    assert facts[ENABLED] is True
    assert facts[RECIPE] == "DelayedScaling"
    facts = _job(tmp_path, "python train.py --precision bf16", layers="", model=model,
                 config=config)
    assert facts.get(ENABLED) in (None, False)


def test_hostile_many_methods_called_many_times_are_read_per_site_within_a_budget() -> None:
    """150 methods x 30 ``self.m(...)`` calls x 23 calls each took the file past the step bound
    (a cut finding, 22 s); past ``MAX_FILE_WORK`` a method is read once, as before."""
    from preflight.reading import pyforeign
    from preflight.reading.pysource import Module, parse
    lines = ["import transformer_engine.pytorch as te", "class M:"]
    for i in range(12):
        lines += [f"    def m{i}(self, a, b=False):", "        if b:",
                  "            te.autocast(enabled=a)"]
        lines += [f"        te.Linear({j}, {j})" for j in range(20)]
    lines.append("    def forward(self, x):")
    lines += [f"        self.m{i}({k % 2 == 0}, b={k % 3 == 0})" for i in range(12)
              for k in range(30)]
    text = "\n".join(lines) + "\n"
    module = Module("train.py", parse("train.py", text))
    per_site = [pyforeign.sites(module, module.methods[("M", f"m{i}")]) for i in range(12)]
    assert per_site[0] is not None and len(per_site[0]) == 30
    assert per_site[-1] is None
    assert sum(len(s) * 23 for s in per_site if s) <= pyforeign.MAX_FILE_WORK
