"""``${NAME:?message}`` on a python launch line: one word (bash splits nothing inside
``${...}``), NAME's value where a caller sets it (shell17 item 4, redteam16's open note;
reading/launch.py ``_TOKEN``, reading/shellvars.py ``_VAR``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.launch import tokens
from preflight.reading.shellvars import typed

TRAIN = """import argparse
p = argparse.ArgumentParser()
p.add_argument("--fp8", default="none")
a = p.parse_args()
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling
with te.fp8_autocast(enabled=a.fp8 == "hybrid", fp8_recipe=DelayedScaling()):
    pass
"""
ENABLED = "config.pytorch.te.autocast.enabled"


@pytest.mark.parametrize("line, words", [
    ("python t.py --fp8 ${FP8:?set FP8 first} --x 1",
     ["python", "t.py", "--fp8", "${FP8:?set FP8 first}", "--x", "1"]),
    ('python t.py --m="a b"c --n \'x y\'', ["python", "t.py", '--m="a b"c', "--n", "'x y'"]),
    ("python t.py --fp8 ${FP8:?open", ["python", "t.py", "--fp8", "${FP8:?open"]),
    ('python t.py "open --x', ["python", "t.py", '"', "open", "--x"]),
])
def test_words_of_a_launch_line(line: str, words: list[str]) -> None:
    assert [w for w, _ in tokens(line, 0, len(line))] == words


@pytest.mark.parametrize("raw, variables, value", [
    ("${FP8:?set FP8}", {"FP8": "hybrid"}, "hybrid"),
    ("${FP8?set FP8}", {"FP8": "hybrid"}, "hybrid"),
    ("${FP8:?set FP8}", {}, "${FP8:?set FP8}"),       # unset: the script stops, never a value
    ("${FP8:=e4m3}", {}, "e4m3"),
    ("${FP8:+--fp8}", {"FP8": "1"}, "${FP8:+--fp8}"),  # not read here: stays a run-time word
])
def test_parameter_forms(raw: str, variables: dict[str, str], value: str) -> None:
    assert typed(raw, variables) == value


def _job(tmp_path: Path, caller: str) -> object:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "train.sh").write_text("#!/bin/bash\npython train.py --fp8 ${FP8:?set FP8 first}\n")
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{caller}\n")
    return read_paths([str(tmp_path / "run.sh")]).facts.get(ENABLED)


def test_the_caller_decides_the_required_variable(tmp_path: Path) -> None:
    assert _job(tmp_path, "FP8=hybrid bash ./train.sh") is True


def test_quiet_the_caller_sets_it_off(tmp_path: Path) -> None:
    assert _job(tmp_path, "FP8=none bash ./train.sh") is False


def test_no_caller_value_stays_unknown(tmp_path: Path) -> None:
    assert isinstance(_job(tmp_path, "bash ./train.sh"), Unknown)
