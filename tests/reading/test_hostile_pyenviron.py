"""Environment lookups in a Python job file against a hostile launch line or script (issue 21,
redteam7; reading/pyenviron.py, reading/launchenv.py ``process_env`` / ``launch_env``).

The launch line decides what ``os.environ.get("RECIPE", "fp8")`` reads; bash, GNU env and
Slurm decide what reaches the process: ``env -uX`` / ``--unset=X`` remove X, ``unset X`` and
``export -n X`` before the command too; ``srun --export X=1`` (two words) is the same option,
``--export=X=1`` without ALL passes only X (and SLURM_*), and with ALL the caller's own value
wins (Slurm doc/man/man1/srun.1, --export); ``X=1 true | python x.py`` gives X to ``true`` only;
``set -a``, a sourced file, an export inside a function, sudo's env_reset and a container start
from an environment the text does not show (Unknown, never the default); past the variables
kept, Unknown. In the script: ``os.environ |= {...}``, ``os.environ = ...``, ``os.getenv = ...``,
``setattr(os, ...)``, ``exec(...)``, ``load_dotenv`` under an alias, ``__setitem__`` and a write
past the bound on writes change what a later lookup reads; ``for os in ...``, ``with ... as
os``, ``(os := ...)``, ``case os:`` and ``global os`` rebind the name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved
from tests.cputime import cpu_seconds
from tests.reading.test_pyenviron import _MAIN

_LOOKUP = 'recipe = os.environ.get("RECIPE", "fp8")'


def _fp8(tmp_path: Path, run: str) -> Any:
    (tmp_path / "02_main.py").write_text(_MAIN.format(lookup=_LOOKUP))
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("run", [
    "export RECIPE=bf16\nenv --unset=RECIPE python 02_main.py\n",
    "export RECIPE=bf16\nenv -uRECIPE python 02_main.py\n",
    "export RECIPE=bf16\nunset RECIPE\npython 02_main.py\n",
    "export RECIPE=bf16\nexport -n RECIPE\npython 02_main.py\n",
    "export RECIPE=bf16\nsrun --export=X=1 python 02_main.py\n",        # only X and SLURM_*
    "export RECIPE=fp8\nsrun --export=ALL,RECIPE=bf16 python 02_main.py\n",   # the caller's wins
    "RECIPE=bf16 true | python 02_main.py\n",
    "RECIPE=bf16 true && python 02_main.py\n",
])
def test_what_never_reaches_the_process_leaves_the_default(tmp_path: Path, run: str) -> None:
    assert _fp8(tmp_path, run) is True


@pytest.mark.parametrize("run", [
    "srun --export ALL,RECIPE=bf16 python 02_main.py\n",
    "export RECIPE=bf16; python 02_main.py\n",
    "source vars.env\npython 02_main.py\n",       # its plain exports followed (shell19)
    ". ./vars.env\npython 02_main.py\n",
])
def test_what_reaches_it_is_read(tmp_path: Path, run: str) -> None:
    (tmp_path / "vars.env").write_text("export RECIPE=bf16\n")
    assert _fp8(tmp_path, run) is False


@pytest.mark.parametrize("run", [
    "".join(f"export V{i}=x\n" for i in range(300)) + "export RECIPE=bf16\npython 02_main.py\n",
    " ".join(f"V{i}=x" for i in range(300)) + " RECIPE=bf16 python 02_main.py\n",
    "set -a\nRECIPE=bf16\npython 02_main.py\n",
    # a sourced file whose exports are not plain top-level ones (shell19: plain ones are
    # followed, tests/reading/test_sourced_env_launch.py)
    "source hidden.env\npython 02_main.py\n",
    ". ./hidden.env\npython 02_main.py\n",
    # a function's export where the call may not run first (one surely called before the
    # command gives its value: tests/reading/test_shellfuncs.py)
    "f() {\n  export RECIPE=bf16\n}\n[ -n \"$X\" ] && f\npython 02_main.py\n",
    "function f {\n  export RECIPE=bf16\n}\ng() { f; }\ng\npython 02_main.py\n",
    "export RECIPE=bf16\nsudo python 02_main.py\n",
    "docker run -e RECIPE=bf16 img python 02_main.py\n",
    "env -S 'RECIPE=bf16' python 02_main.py\n",
])
def test_an_environment_the_text_does_not_show_is_unknown(tmp_path: Path, run: str) -> None:
    (tmp_path / "hidden.env").write_text('if [ -n "$X" ]; then export RECIPE=bf16; fi\n')
    start = cpu_seconds()
    fp8 = _fp8(tmp_path, run)
    assert isinstance(fp8, Unknown), fp8      # never the default's "yes" nor a guessed "no"
    assert cpu_seconds() - start < 20


@pytest.mark.parametrize(("run", "inner", "fp8"), [
    ("export RECIPE=bf16\nunset RECIPE\nbash train.sh\n", "python 02_main.py\n", True),
    ("export RECIPE=bf16\nenv -uRECIPE bash train.sh\n", "python 02_main.py\n", True),
    ("RECIPE=bf16 bash train.sh\n", "unset RECIPE\npython 02_main.py\n", True),
    # x.env's text shows all it exports: followed into train.sh (reading/shellexports.py,
    # shell18; holdout24 mlperf51's config script)
    ("source x.env\nbash train.sh\n", "python 02_main.py\n", False),
    ("source y.env\nbash train.sh\n", "python 02_main.py\n", None),
    (" ".join(f"V{i}=x" for i in range(300)) + " RECIPE=bf16 bash train.sh\n",
     "python 02_main.py\n", None),
])
def test_what_a_calling_script_gives(tmp_path: Path, run: str, inner: str,
                                     fp8: bool | None) -> None:
    (tmp_path / "train.sh").write_text(inner)
    (tmp_path / "x.env").write_text("export RECIPE=bf16\n")
    (tmp_path / "y.env").write_text("set -a\nRECIPE=bf16\n")    # what it exports: not shown
    got = _fp8(tmp_path, run)
    assert got is fp8 if fp8 is not None else isinstance(got, Unknown), got


def test_a_hundred_thousand_variables_are_bounded(tmp_path: Path) -> None:
    run = "".join(f"export V{i}=x\n" for i in range(20_000)) + \
        " ".join(f"W{i}=y" for i in range(2_000)) + " python 02_main.py\n"
    start = cpu_seconds()
    fp8 = _fp8(tmp_path, run)
    assert cpu_seconds() - start < 20
    assert fp8 is not False


# -- the script changing its own environment -------------------------------------------------

def _value(text: str, environ: dict[str, tuple[str, str]]) -> Any:
    module = Module("/job/x.py", ast.parse(text), (), None, None, environ)
    return module.evaluate(ast.parse("X", mode="eval").body, module.module, 0)


_LAUNCH = {"RECIPE": ("fp8", "run.sh:1")}


@pytest.mark.parametrize("write", [
    'os.environ |= {"RECIPE": "bf16"}',
    'os.environ = {"RECIPE": "bf16"}',
    'os.getenv = lambda *a: "bf16"',
    'setattr(os, "environ", {"RECIPE": "bf16"})',
    'exec("os.environ[\'RECIPE\'] = \'bf16\'")',
    'os.environ.__setitem__("RECIPE", "bf16")',
    'from dotenv import load_dotenv as ld\nld()',
    "".join(f'os.environ["V{i}"] = "x"\n' for i in range(70)) + 'os.environ["RECIPE"] = "bf16"',
])
def test_a_write_of_the_environment_is_never_ignored(write: str) -> None:
    got = _value(f"import os\n{write}\nX = os.environ.get('RECIPE', 'fp8')", _LAUNCH)
    assert isinstance(got, Unresolved), (write, got)


def test_plain_aliases_and_copies_still_read() -> None:
    alias = 'import os\nenv = os.environ\nenv["RECIPE"] = "bf16"\nX = os.environ.get("RECIPE")'
    assert _value(alias, _LAUNCH) == "bf16"
    copy = 'import os\ne = os.environ.copy()\ne["RECIPE"] = "bf16"\nX = os.getenv("RECIPE")'
    assert _value(copy, _LAUNCH) == "fp8"
    other = 'import os, importlib\nm = importlib.import_module("yaml")\nX = os.getenv("RECIPE")'
    assert _value(other, _LAUNCH) == "fp8"


@pytest.mark.parametrize("rebind", [
    "for os in [object()]:\n    pass",
    "with open('x') as os:\n    pass",
    "(os := object())",
    "match object():\n    case os:\n        pass",
    "def f():\n    global os\n    os = object()\nf()",
])
def test_a_name_rebound_is_no_longer_the_module(rebind: str) -> None:
    got = _value(f"import os\n{rebind}\nX = os.getenv('RECIPE', 'bf16')", _LAUNCH)
    assert got not in ("fp8", "bf16"), (rebind, got)


@pytest.mark.parametrize("shadow", [
    "class os:\n    environ = {'RECIPE': 'bf16'}\n    getenv = staticmethod(lambda *a: 'bf16')",
    "def os():\n    pass",
])
def test_a_top_level_definition_beside_the_import_is_no_lookup(shadow: str) -> None:
    # which binding a use sees is the order the code runs: the job's own `os` defined after
    # the import (pyflow: the layout orders definitions against imports), never a lookup of
    # the launch line's environment
    for use in ("os.environ.get('RECIPE', 'fp8')", "os.getenv('RECIPE', 'fp8')",
                "os.environ['RECIPE']"):
        got = _value(f"import os\n{shadow}\nX = {use}", _LAUNCH)
        assert got != "fp8" and (isinstance(got, Unresolved) or
                                 getattr(got, "func", "").startswith("__main__.os")), \
            (shadow, use, got)


def test_a_line_of_200_000_prefixes_is_read_in_linear_time() -> None:
    from preflight.reading.shellwords import split

    line = " ".join(f"V{i}=x" for i in range(200_000)) + " python x.py\n"
    start = cpu_seconds()
    assert len(split(line).statements) == 200_001
    assert cpu_seconds() - start < 15        # words[1:] per prefix took 31 s (quadratic)


def test_assignments_past_the_words_read_are_unknown(tmp_path: Path) -> None:
    run = "env " + " ".join(f"V{i}=x" for i in range(20_000)) + " RECIPE=bf16 python 02_main.py\n"
    fp8 = _fp8(tmp_path, run)
    assert isinstance(fp8, Unknown) and "10,000 words" in fp8.reason
