"""An ``export`` inside a launch script's own function (reading/shellfuncs.py, reading/launchenv.py):
the command gets it when the function is surely called before it; a function never called, called
only after it, in a branch that never runs, in a subshell or a pipeline part gives it nothing; a call
that may not run first (an undecided branch, a loop, another function) makes it Unknown with the
call's line. The old text rule's cases (an export's own branch, ``unset``, ``export -n``, the order
bash sets things in) hold inside a function as outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.reading.launchenv import launch_env
from preflight.reading.shellvars import RUNTIME, collect_variables, strip_comments
from tests.reading.test_hostile_pyenviron import _fp8

_F = "setup() {\n  export NVTE_FP8=1\n}\n"


def _env(script: str, unknown: bool = True) -> dict[str, tuple[str | None, int]]:
    """NAME -> (value, or None where the run decides it; the line it is written at)."""
    text = strip_comments(script)
    got = launch_env(text, text.index("torchrun"), collect_variables(text), unknown)
    return {n: (None if v.startswith(RUNTIME) else v, text.count("\n", 0, p) + 1)
            for n, v, p in got}


@pytest.mark.parametrize("script", [
    _F + "setup\ntorchrun train.py\n",
    "function setup {\n  export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
    "  setup() {\n    export NVTE_FP8=1\n  }\n  setup\ntorchrun train.py\n",
    _F + "setup && echo ok\ntorchrun train.py\n",
    _F + "M=fp8\nif [ \"$M\" = fp8 ]; then setup; fi\ntorchrun train.py\n",   # decided: runs
    _F + "main() {\n  setup\n  torchrun train.py\n}\nmain\n",     # the command's own function
    "setup() {\n  declare -gx NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",    # -g: global
    _F + "export NVTE_FP8=0\nsetup\ntorchrun train.py\n",        # the call runs after the 0
    _F + "unset NVTE_FP8\nsetup\ntorchrun train.py\n",           # unset before the call
])
def test_a_function_called_before_the_command_exports_its_value(script: str) -> None:
    assert _env(script)["NVTE_FP8"] == ("1", 2)
    assert _env(script, unknown=False)["NVTE_FP8"][0] == "1"


def test_the_export_in_the_commands_own_function() -> None:
    assert _env("main() {\n  export NVTE_FP8=1\n  torchrun train.py\n}\nmain\n") == {
        "NVTE_FP8": ("1", 2)}


@pytest.mark.parametrize("script", [
    _F + "torchrun train.py\n",                                  # never called
    _F + "torchrun train.py\nsetup\n",                           # called after
    _F + "if false; then setup; fi\ntorchrun train.py\n",        # a branch that never runs
    _F + "M=bf16\nif [ \"$M\" = fp8 ]; then setup; fi\ntorchrun train.py\n",
    _F + "( setup )\ntorchrun train.py\n",                       # a subshell
    _F + "setup | tee log\ntorchrun train.py\n",                 # a pipeline part
    _F + "echo x | setup\ntorchrun train.py\n",
    "setup() {\n  declare -x NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",   # the function's own
    "setup() {\n  local -x NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
    "export NVTE_FP8=1\nsetup() {\n  export -n NVTE_FP8\n}\nsetup\ntorchrun train.py\n",
    _F + "setup\nexport -n NVTE_FP8\ntorchrun train.py\n",
])
def test_a_function_not_run_first_gives_nothing(script: str) -> None:
    assert "NVTE_FP8" not in _env(script)


@pytest.mark.parametrize("script, line", [
    (_F + "if [ -n \"$Y\" ]; then setup; fi\ntorchrun train.py\n", 4),   # may not run
    (_F + "[ -n \"$Y\" ] && setup\ntorchrun train.py\n", 4),
    (_F + "for i in $LIST; do setup; done\ntorchrun train.py\n", 4),      # 0..n times
    (_F + "wrap() { setup; }\nwrap\ntorchrun train.py\n", 4),     # from another function
    (_F + "setup | tee log\nshopt -s lastpipe\ntorchrun train.py\n", 4),
    (_F + "main() {\n  torchrun train.py\n}\nsetup\nmain\n", 7),  # after the command's text
    (_F + _F + "setup\ntorchrun train.py\n", 0),                 # defined twice
    # the export's own branch in a called function: as outside one
    ("setup() {\n  if [ -n \"$Y\" ]; then\n    export NVTE_FP8=1\n  fi\n}\nsetup\n"
     "torchrun train.py\n", 3),
])
def test_a_call_that_may_not_run_first_is_unknown_with_its_line(script: str, line: int) -> None:
    got = _env(script)
    assert got["NVTE_FP8"][0] is None
    text = strip_comments(script)
    why = next(v for n, v, _ in launch_env(text, text.index("torchrun"), {}, True)
               if n == "NVTE_FP8")
    if line:
        assert f"line {line}" in why
    if not script.startswith("setup() {\n  if"):
        # without Unknown markers asked for, a call that may not run first gives nothing
        assert "NVTE_FP8" not in _env(script, unknown=False)


@pytest.mark.parametrize("run, fp8", [
    # the Python file reads os.environ.get("RECIPE", "fp8") (test_hostile_pyenviron.py)
    ("f() {\n  export RECIPE=bf16\n}\nf\npython 02_main.py\n", False),
    ("f() {\n  export RECIPE=bf16\n}\npython 02_main.py\nf\n", True),
    ("f() {\n  export RECIPE=bf16\n}\npython 02_main.py\n", True),
    ("f() {\n  export RECIPE=bf16\n}\nif [ -n \"$X\" ]; then\n  f\nfi\npython 02_main.py\n",
     None),
])
def test_what_the_python_file_reads(tmp_path: Path, run: str, fp8: bool | None) -> None:
    got = _fp8(tmp_path, run)
    assert got is fp8 if fp8 is not None else isinstance(got, Unknown), got
