"""reading/launchenv.py with reading/shellbranch.py ``exports``: an ``export`` in an if/case
branch or a loop body that may not run gives the launch a variable only some runs have
(redteam10's open item: ``if [ -n "$X" ]; then export DISABLE_FP8=1; fi`` was always set)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launchenv import process_env
from preflight.reading.shellvars import runtime_reason

_MAIN = """\
import os

from nemo import lightning as nl
from nemo.collections import llm

recipe = "bf16" if os.environ.get("DISABLE_FP8") else "fp8"

if __name__ == "__main__":
    if recipe == "bf16":
        plugins = nl.MegatronMixedPrecision(precision="bf16-mixed")
    else:
        plugins = nl.MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid")
    strategy = nl.MegatronStrategy(tensor_model_parallel_size=1)
    trainer = nl.Trainer(devices=8, strategy=strategy, plugins=plugins)
    llm.finetune(model=None, data=None, trainer=trainer)
"""


def _fp8(tmp_path: Path, before: str) -> object:
    (tmp_path / "02_main.py").write_text(_MAIN)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + before + "\ntorchrun 02_main.py\n")
    read = read_paths([str(tmp_path / "run.sh"), str(tmp_path / "02_main.py")], None)
    return derive(Facts(read.facts, read.provenance))[0]["intent.fp8"]


@pytest.mark.parametrize("before, want", [
    ('if [ -n "$X" ]; then\n  export DISABLE_FP8=1\nfi', None),
    ('if [ -n "$X" ]; then export DISABLE_FP8=1; fi', None),       # on one line
    ('[ -n "$X" ] &&\n  export DISABLE_FP8=1', None),               # && then a newline
    ("while read -r x; do\n  export DISABLE_FP8=1\ndone < list", None),
    ('case "$1" in\n  bf16) export DISABLE_FP8=1 ;;\nesac', None),
    ("if false; then\n  export DISABLE_FP8=1\nfi", True),            # never runs
    ("until true; do export DISABLE_FP8=1; done", True),
    ("if true; then export DISABLE_FP8=1; fi", False),               # runs
    ('if [ -n "$X" ]; then\n  export DISABLE_FP8=1\nfi\nexport DISABLE_FP8=1', False),
    ('echo "a; export DISABLE_FP8=1"', True),                        # text, no export
    ("", True),
])
def test_a_conditional_export_is_unknown_to_the_script(tmp_path: Path, before: str,
                                                       want: bool | None) -> None:
    got = _fp8(tmp_path, before)
    assert isinstance(got, Unknown) if want is None else got is want


def test_the_unknown_names_the_export_line() -> None:
    text = 'X=$1\nif [ -n "$X" ]; then\n  export DISABLE_FP8=1\nfi\npython train.py\n'
    got = {n: v for n, v, _ in process_env("run.sh", text, text.index("train.py"), {}, [])}
    why = runtime_reason(got["DISABLE_FP8"])
    assert why is not None and "line 3" in why
