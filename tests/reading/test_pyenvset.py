"""The environment a Python job file's top level leaves (reading/pyenvset.py, wired in as ``env.*``
facts by jobs/pyjob.py): holdout19 sbhavani/unsloth @ 8cb627e8 calls
``setup_fp8_mixed_precision_training(backend="te")`` of its own package at the top of
examples/llama_8b_full_finetune_fp8.py, and that function sets ``ACCELERATE_MIXED_PRECISION=fp8``
and ``ACCELERATE_FP8_BACKEND`` for the Accelerator the Trainer builds afterwards."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pyenvset import MAX_STATEMENTS, left
from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved

_HELPER = '''\
import os


def check():
    try:
        import transformer_engine
        return True
    except ImportError:
        return False


def setup_fp8(backend="te", fp8_format="HYBRID"):
    if not check():
        raise RuntimeError("no TE")
    import os
    if backend.lower() != "te":
        raise ValueError(backend)
    os.environ["ACCELERATE_MIXED_PRECISION"] = "fp8"
    os.environ["ACCELERATE_FP8_BACKEND"] = backend.upper()
    os.environ["ACCELERATE_FP8_FORMAT"] = fp8_format
'''

_SCRIPT = '''\
from mypkg import setup_fp8
from accelerate import Accelerator

{call}
accelerator = Accelerator()
model = accelerator.prepare(model)
'''


def _job(tmp_path: Path, call: str, helper: str = _HELPER, run: str = "python train.py\n",
         ) -> dict[str, Any]:
    pkg = tmp_path / "mypkg"
    (pkg / "utils").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .utils.fp8 import (\n    setup_fp8,\n)\n")
    (pkg / "utils" / "__init__.py").write_text("")
    (pkg / "utils" / "fp8.py").write_text(helper)
    (tmp_path / "train.py").write_text(_SCRIPT.format(call=call))
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    read = read_paths([str(tmp_path / "run.sh"), str(tmp_path / "train.py")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts, "_prov": read.provenance}


def test_a_helper_of_the_jobs_package_sets_fp8_for_what_follows(tmp_path: Path) -> None:
    got = _job(tmp_path, 'setup_fp8(backend="te")')
    assert got["intent.fp8"] is True and got["env.ACCELERATE_FP8_BACKEND"] == "TE"
    assert got["_prov"]["env.ACCELERATE_MIXED_PRECISION"].endswith("fp8.py:18")


def test_a_branch_on_the_parameter_is_decided_per_call(tmp_path: Path) -> None:
    # the helper raises for any backend but te: the run stops, nothing is exported
    got = _job(tmp_path, 'setup_fp8(backend="msamp")')
    assert "env.ACCELERATE_MIXED_PRECISION" not in got and got["intent.fp8"] is not True


def test_a_call_under_an_undecided_test_is_unknown(tmp_path: Path) -> None:
    got = _job(tmp_path, "import sys\nif len(sys.argv) > 2:\n    setup_fp8()")
    assert isinstance(got["env.ACCELERATE_MIXED_PRECISION"], Unknown)


def test_an_unknown_exported_precision_leaves_fp8_unknown(tmp_path: Path) -> None:
    got = _job(tmp_path, "import sys\nif len(sys.argv) > 2:\n    setup_fp8()")
    assert isinstance(got["intent.fp8"], Unknown)


def test_a_write_after_the_accelerator_is_built_is_not_its(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "train.py").write_text(
        "import os\nfrom accelerate import Accelerator\naccelerator = Accelerator()\n"
        "os.environ['ACCELERATE_MIXED_PRECISION'] = 'fp8'\n")
    read = read_paths([str(tmp_path / "train.py")], None)
    assert "env.ACCELERATE_MIXED_PRECISION" not in read.facts


def _left(text: str) -> Any:
    return left(Module("t.py", ast.parse(text), environ={}))


@pytest.mark.parametrize("text, value", [
    ("import os\nos.environ['X'] = 'a'\n", "a"),
    ("import os\nos.environ.update({'X': 'a'})\n", "a"),
    ("import os\nos.environ.update(X='a')\n", "a"),
    ("import os\nos.environ.setdefault('X', 'a')\n", "a"),
    ("import os\nos.environ['X'] = 'a'\nos.environ.setdefault('X', 'b')\n", "a"),
    ("from os import environ\nenviron['X'] = 'a'\n", "a"),
    ("import os\ndef f(v):\n    os.environ['X'] = v\nf('a')\n", "a"),
    ("import os\ndef f(v):\n    if v:\n        os.environ['X'] = 'a'\n    else:\n"
     "        os.environ['X'] = 'b'\nf(True)\n", "a"),
    ("import os\ndef f(v):\n    if v == 'x':\n        return\n    os.environ['X'] = 'a'\nf('y')\n",
     "a"),
])
def test_the_ways_a_script_sets_a_variable(text: str, value: str) -> None:
    assert _left(text).vars["X"].value == value


@pytest.mark.parametrize("text", [
    "import os, sys\nif sys.argv[1]:\n    os.environ['X'] = 'a'\n",
    "import os\nfor k in ('a', 'b'):\n    os.environ['X'] = k\n",
    "import os\nwhile True:\n    os.environ['X'] = 'a'\n",
    "import os\ntry:\n    pass\nexcept OSError:\n    os.environ['X'] = 'a'\n",
    "import os, sys\nos.environ['X'] = sys.argv[1]\n",
    "import os, sys\ndef f(v):\n    if v:\n        return\n    os.environ['X'] = 'a'\nf(sys.argv)\n",
])
def test_a_write_only_some_runs_make_is_unknown(text: str) -> None:
    assert isinstance(_left(text).vars["X"].value, Unresolved)


def test_a_raising_side_is_not_merged() -> None:
    # `if c: raise` at a function's top: what follows runs only when c is false
    got = _left("import os, sys\ndef f():\n    if sys.argv[1] == 'cpu':\n        raise SystemExit\n"
                "    os.environ['X'] = 'a'\nf()\n")
    assert got.vars["X"].value == "a"


def test_a_key_the_text_does_not_give_makes_the_environment_wild() -> None:
    got = _left("import os, sys\nfor k, v in dict(a=1).items():\n    os.environ[k] = v\n")
    assert isinstance(got.wild, Unresolved)


def test_recursion_between_functions_is_bounded() -> None:
    got = _left("import os\ndef f():\n    os.environ['X'] = 'a'\n    g()\ndef g():\n    f()\nf()\n")
    assert isinstance(got.vars["X"].value, (str, Unresolved))


def test_recursion_between_modules_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\nfrom b import g\ndef f():\n    g()\n"
                                   "    os.environ['ACCELERATE_MIXED_PRECISION'] = 'fp8'\n")
    (tmp_path / "b.py").write_text("from a import f\ndef g():\n    f()\n")
    (tmp_path / "train.py").write_text(
        "from a import f\nfrom accelerate import Accelerator\nf()\naccelerator = Accelerator()\n")
    read = read_paths([str(tmp_path / "train.py")], None)
    assert read.facts.get("env.ACCELERATE_MIXED_PRECISION") in ("fp8", None) or \
        isinstance(read.facts["env.ACCELERATE_MIXED_PRECISION"], Unknown)


def test_a_helper_writing_in_a_loop_is_bounded() -> None:
    body = "".join(f"        os.environ['V{i}'] = '{i}'\n" for i in range(400))
    got = _left(f"import os\ndef f():\n    for _ in range(9):\n{body}f()\n" + "f()\n" * 50)
    assert isinstance(got.vars["V0"].value, Unresolved)


def test_many_statements_are_cut_short() -> None:
    text = "import os\ndef f():\n" + "    x = 1\n" * (MAX_STATEMENTS + 5) + "f()\n"
    assert isinstance(_left(text).wild, Unresolved)
