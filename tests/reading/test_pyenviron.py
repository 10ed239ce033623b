"""Environment lookups in Python job files, resolved from the launch line that runs the file
(reading/pyenviron.py, issue 22; holdout10's NeMo 2 FP8 tutorial).

The tutorial's shape (NVIDIA-NeMo PR 14552, tutorials/llm/fp8/02_main.py, as reconstructed in
benchmarks/realjobs/holdout10-nemo2-fp8-tutorial-llama31-8b-sft-delayed-hybrid): the recipe is
``os.environ.get("RECIPE", "fp8")`` and ``nl.MegatronMixedPrecision(fp8="hybrid", ...)`` sits in
the ``else`` of ``if recipe == "bf16"``; NVIDIA TransformerEngine's examples/pytorch/fsdp/fsdp.py
(the te-fsdp-example job) reads ``int(os.getenv("LOCAL_RANK", "0"))``; slime's
tests/test_moonlight_16B_A3B.py at THUDM/slime v0.3.1 l.4 ``bool(int(os.environ.get(
"SLIME_TEST_ENABLE_EVAL", "1")))``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launchenv import process_env
from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved

_MAIN = """\
import os

from nemo import lightning as nl
from nemo.collections import llm

{lookup}

if __name__ == "__main__":
    if recipe == "bf16":
        plugins = nl.MegatronMixedPrecision(precision="bf16-mixed")
    else:
        plugins = nl.MegatronMixedPrecision(
            precision="bf16-mixed",
            fp8="hybrid",
            fp8_recipe="delayed",
        )
    strategy = nl.MegatronStrategy(tensor_model_parallel_size=1)
    trainer = nl.Trainer(devices=8, strategy=strategy, plugins=plugins)
    llm.finetune(model=None, data=None, trainer=trainer)
"""
_LOOKUP = 'recipe = os.environ.get("RECIPE", "fp8")'


def _job(tmp_path: Path, run: str | None, lookup: str = _LOOKUP) -> dict[str, Any]:
    (tmp_path / "02_main.py").write_text(_MAIN.format(lookup=lookup))
    paths = [str(tmp_path / "02_main.py")]
    if run is not None:
        (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
        paths.insert(0, str(tmp_path / "run.sh"))
    read = read_paths(paths, None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {**values, **{k: v for k, v in read.facts.items() if k.startswith("config.")},
            "_prov": read.provenance}


def test_the_tutorials_launch_line_sets_the_fp8_recipe(tmp_path: Path) -> None:
    got = _job(tmp_path, "RECIPE=fp8 torchrun --nproc_per_node 8 02_main.py\n")
    assert got["intent.fp8"] is True and got["intent.recipe"] == "delayed"


def test_a_bf16_launch_line_takes_the_other_branch(tmp_path: Path) -> None:
    got = _job(tmp_path, "RECIPE=bf16 torchrun --nproc_per_node 8 02_main.py\n")
    assert got["intent.fp8"] is False


@pytest.mark.parametrize("run", ["export RECIPE=bf16\ntorchrun 02_main.py\n",
                                 "env RECIPE=bf16 python 02_main.py\n",
                                 "srun --export=ALL,RECIPE=bf16 python 02_main.py\n",
                                 "RECIPE=fp8 env -u RECIPE RECIPE=bf16 python 02_main.py\n"])
def test_every_way_a_launch_line_gives_the_variable(tmp_path: Path, run: str) -> None:
    assert _job(tmp_path, run)["intent.fp8"] is False


def test_unset_on_the_launch_line_is_the_default(tmp_path: Path) -> None:
    got = _job(tmp_path, "torchrun --nproc_per_node 8 02_main.py\n")
    assert got["intent.fp8"] is True


def test_run_by_hand_is_unknown_saying_why(tmp_path: Path) -> None:
    fp8 = _job(tmp_path, None)["intent.fp8"]
    assert isinstance(fp8, Unknown)
    assert "RECIPE" in fp8.reason and "no launch line" in fp8.reason


@pytest.mark.parametrize("run", ["export RECIPE=$1\ntorchrun 02_main.py\n",
                                 "RECIPE=$(cat recipe.txt) python 02_main.py\n",
                                 "srun --export-file=job.env python 02_main.py\n",
                                 "export RECIPE\npython 02_main.py\n"])
def test_a_value_only_the_run_knows_is_unknown(tmp_path: Path, run: str) -> None:
    fp8 = _job(tmp_path, run)["intent.fp8"]
    assert isinstance(fp8, Unknown), fp8


def test_two_launch_lines_that_differ_are_unknown_naming_both(tmp_path: Path) -> None:
    fp8 = _job(tmp_path, "if [ -n \"$X\" ]; then\n  RECIPE=fp8 python 02_main.py\nelse\n"
                         "  RECIPE=bf16 python 02_main.py\nfi\n")["intent.fp8"]
    assert isinstance(fp8, Unknown)
    assert "'fp8'" in fp8.reason and "'bf16'" in fp8.reason


def test_env_i_clears_what_the_script_exported(tmp_path: Path) -> None:
    got = _job(tmp_path, "export RECIPE=bf16\nenv -i PATH=/usr/bin python 02_main.py\n")
    assert got["intent.fp8"] is True         # the default again


def test_a_calling_script_passes_its_environment(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 8 02_main.py\n")
    got = _job(tmp_path, "RECIPE=bf16 bash train.sh\n")
    assert got["intent.fp8"] is False


@pytest.mark.parametrize("lookup", [
    'recipe = os.getenv("RECIPE", "fp8")',
    'from os import environ\nrecipe = environ.get("RECIPE", "fp8")',
    'from os import getenv\nrecipe = getenv("RECIPE", "fp8")',
    'import os as _os\nrecipe = _os.environ.get("RECIPE", "fp8")',
    'recipe = os.environ.get("RECIPE") or "fp8"',
    'recipe = os.environ.setdefault("RECIPE", "fp8")',
    'recipe = os.getenv("RECIPE", "FP8 ").strip().lower()',
    'recipe = "fp8" if os.getenv("USE_BF16", "0") != "1" else "bf16"',
    'recipe = "bf16" if int(os.environ.get("USE_BF16", "0")) else "fp8"',
    'from distutils.util import strtobool\n'
    'recipe = "bf16" if strtobool(os.getenv("USE_BF16", "false")) else "fp8"',
    'recipe = f"{os.getenv(\'FMT\', \'fp\')}{os.getenv(\'BITS\', 8)}"',
])
def test_the_ways_scripts_read_a_switch(tmp_path: Path, lookup: str) -> None:
    assert _job(tmp_path, "python 02_main.py\n", lookup)["intent.fp8"] is True
    bf16 = "RECIPE=bf16 USE_BF16=1 FMT=bf BITS=16 python 02_main.py\n"
    assert _job(tmp_path, bf16, lookup)["intent.fp8"] is False


def test_a_module_constant_read_in_a_function(tmp_path: Path) -> None:
    lookup = ('RECIPE = os.getenv("RECIPE", "fp8")\n\ndef pick():\n    return RECIPE\n\n'
              'recipe = pick()')
    assert _job(tmp_path, "RECIPE=bf16 python 02_main.py\n", lookup)["intent.fp8"] is False


def test_the_provenance_of_a_value_says_where_it_comes_from(tmp_path: Path) -> None:
    main = _MAIN.replace('fp8_recipe="delayed"', 'fp8_recipe=os.getenv("FP8_RECIPE", "delayed")')
    (tmp_path / "02_main.py").write_text(main.format(lookup=_LOOKUP))
    (tmp_path / "run.sh").write_text("python 02_main.py\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    src = read.provenance["config.nemo2.plugins.fp8_recipe"]
    assert read.facts["config.nemo2.plugins.fp8_recipe"] == "delayed"
    assert "unset on the launch line: the default" in src and src.line == 15
    (tmp_path / "run.sh").write_text("FP8_RECIPE=tensorwise python 02_main.py\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert read.facts["config.nemo2.plugins.fp8_recipe"] == "tensorwise"
    assert read.provenance["config.nemo2.plugins.fp8_recipe"].endswith("run.sh:1")


# -- the module, alone -----------------------------------------------------------------------

def _value(text: str, name: str, environ: dict[str, tuple[str, str]] | None) -> Any:
    module = Module("/job/x.py", ast.parse(text), (), None, None, environ)
    return module.evaluate(ast.parse(name, mode="eval").body, module.module, 0)


@pytest.mark.parametrize(("run", "value"), [
    ("torchrun --nproc_per_node 8 fsdp.py\n", None),
    ("deepspeed fsdp.py\n", None),
    ("#SBATCH -N 2\npython fsdp.py\n", 0),      # SLURM_* set, LOCAL_RANK not
    ("python fsdp.py\n", 0),                      # one process: the default
])
def test_the_launcher_sets_rank_variables_itself(tmp_path: Path, run: str,
                                                 value: int | None) -> None:
    # TE examples/pytorch/fsdp/fsdp.py l.31: torchrun sets LOCAL_RANK, never the default
    (tmp_path / "run.sh").write_text(run)
    text = (tmp_path / "run.sh").read_text()
    environ = {n: (v, w) for n, v, w in process_env(str(tmp_path / "run.sh"), text,
                                                     text.index("fsdp.py"), {}, [])}
    got = _value('import os\nLOCAL_RANK = int(os.getenv("LOCAL_RANK", "0"))', "LOCAL_RANK",
                 environ)
    assert got == value if value is not None else (
        isinstance(got, Unresolved) and "set for the process" in got.reason)
    slurm = _value('import os\nN = os.getenv("SLURM_NNODES", "1")', "N", environ)
    assert isinstance(slurm, Unresolved) == ("SBATCH" in run)


def test_slime_test_switch() -> None:
    text = 'import os\nENABLE_EVAL = bool(int(os.environ.get("SLIME_TEST_ENABLE_EVAL", "1")))'
    assert _value(text, "ENABLE_EVAL", {}) is True
    assert _value(text, "ENABLE_EVAL", {"SLIME_TEST_ENABLE_EVAL": ("0", "run.sh:2")}) is False


def test_without_a_default_the_script_needs_it() -> None:
    got = _value('import os\nX = os.environ["RECIPE"]', "X", {})
    assert isinstance(got, Unresolved) and "KeyError" in got.reason
    assert _value('import os\nX = os.environ.get("RECIPE")', "X", {}) is None


# -- hostile ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # a local `os` that is not the module
    'import os\nclass F:\n    environ = {"RECIPE": "bf16"}\nos = F()\nX = os.environ.get("RECIPE", "bf16")',
    'import os\ndef f(os):\n    return os.getenv("RECIPE", "bf16")\nX = f(object())',
])
def test_a_shadowed_os_reads_no_environment(text: str) -> None:
    assert _value(text, "X", {"RECIPE": ("fp8", "run.sh:1")}) != "fp8"


def test_decoys_in_comments_and_strings() -> None:
    text = ('import os\n# X = os.environ.get("RECIPE", "bf16")\n'
            'DOC = "os.environ[\'RECIPE\'] = \'bf16\'"\nX = os.environ.get("RECIPE", "fp8")')
    assert _value(text, "X", {}) == "fp8"


@pytest.mark.parametrize("write", [
    'os.environ["RECIPE"] = "bf16"',
    'if False:\n    os.environ["RECIPE"] = "bf16"',
    'os.environ.update({"RECIPE": "bf16"})',
    'os.environ.pop("RECIPE", None)',
    'from dotenv import load_dotenv\nload_dotenv()',
    'for k in ("RECIPE",):\n    os.environ[k] = "bf16"',
    'os.putenv("RECIPE", "bf16")',
])
def test_the_script_changing_its_environment_is_never_ignored(write: str) -> None:
    got = _value(f"import os\n{write}\nX = os.environ.get('RECIPE', 'fp8')", "X",
                 {"RECIPE": ("fp8", "run.sh:1")})
    assert got == "bf16" if write.startswith('os.environ["RECIPE"]') else \
        isinstance(got, Unresolved), (write, got)


def test_a_write_after_the_lookup_does_not_change_it() -> None:
    text = 'import os\nX = os.environ.get("RECIPE", "fp8")\nos.environ["RECIPE"] = "bf16"'
    assert _value(text, "X", {}) == "fp8"


def test_setdefault_keeps_the_launch_lines_value() -> None:
    text = 'import os\nos.environ.setdefault("RECIPE", "bf16")\nX = os.environ.get("RECIPE")'
    assert _value(text, "X", {"RECIPE": ("fp8", "run.sh:1")}) == "fp8"
    assert isinstance(_value(text, "X", {}), Unresolved)


def test_computed_names_and_recursion() -> None:
    text = ('import os\nname = input()\nX = os.getenv(name, "fp8")\n'
            'def f():\n    return f()\nY = os.getenv(f(), "fp8")')
    assert isinstance(_value(text, "X", {}), Unresolved)
    assert isinstance(_value(text, "Y", {}), Unresolved)


def test_a_huge_concatenation_is_bounded() -> None:
    parts = " + ".join(['os.getenv("A", "xxxxxxxxxxxxxxxx")'] * 300)
    nested = "os.getenv(" * 40 + '"A"' + ', "b")' * 40
    text = f"import os\nX = {parts}\nY = {nested}\nZ = f'{{X}}{{X}}{{X}}'"
    assert isinstance(_value(text, "X", {}), Unresolved)      # past 4096 characters
    nested_value = _value(text, "Y", {})      # each name is the default "b"; or cut short
    assert nested_value == "b" or isinstance(nested_value, Unresolved)
    assert isinstance(_value(text, "Z", {}), Unresolved)


def test_long_method_chains_are_not_evaluated_twice_per_level() -> None:
    chain = "x" + ".lower()" * 20
    text = f'import os\nx = os.getenv("A", "Q")\nX = {chain}\ny = foo()\nY = y{".strip()" * 20}'
    assert _value(text, "X", {}) == "q"         # 2**20 evaluations each
    assert isinstance(_value(text, "Y", {}), Unresolved)


def test_a_noted_provenance_is_still_a_location() -> None:
    # a replayed snapshot gives the text back: its file and line must still be found
    from preflight.findings import Location
    from preflight.reading.pyenviron import Noted

    note = Noted("/job/02_main.py", 11, "environment RECIPE, unset on the launch line: the default")
    assert Location.from_source(note) == Location("/job/02_main.py", 11)
    assert Location.from_source(str(note)) == Location("/job/02_main.py", 11)
