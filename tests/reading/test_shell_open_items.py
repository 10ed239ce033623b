"""redteam8's open shell items (docs/reliability.md, issue 21), each failing before its fix:
``${@:0:1}`` read as no word (bash: ``$0``), ``"$*"`` joined with a blank under ``IFS=,``, and
a flag in a variable set only inside a branch that may not run read as not given (FP8 "no")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading import shellargs
from preflight.reading.shellargs import PARAMS, Given
from preflight.reading.shellexpand import launches
from preflight.reading.shellwords import split

BASH = shutil.which("bash")
ARGS = ["a", "b c", "", "--fp8"]


def _bash(tmp_path: Path, body: str) -> list[str]:
    assert BASH is not None
    prelude = 'launch() { for a in "$@"; do printf "%s\\0" "$a"; done; }\n'
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", prelude + body, "job.sh", *ARGS],
                         cwd=tmp_path, capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return out.stdout.decode().split("\0")[:-1]


def _read(body: str) -> list[str | None]:
    given = shellargs.encode([Given(a, "/job/run.sh:3") for a in ARGS])
    bound = shellargs.Params  # (the caller's words, as jobs/scriptargs binds them)
    assert bound is not None
    from preflight.reading import shellbind

    b = shellbind.bind(body, given)
    assert b is not None
    found = launches(split(b.text), lambda w: w == "launch", {PARAMS: b.params})
    assert found
    return [None if a.opaque else a.text for a in found[0].args]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", [
    'IFS=,\nlaunch "$*"', 'IFS=\nlaunch "$*"', 'IFS=":-"\nlaunch "$*"', 'launch "$*"',
    'IFS=,\nlaunch "${*}" "x$*y"',
])
def test_star_joins_with_the_first_character_of_ifs(tmp_path: Path, body: str) -> None:
    assert _read(body) == _bash(tmp_path, body)


def test_star_under_an_ifs_not_known_here_is_unknown() -> None:
    assert _read('IFS=$(printf ,)\nlaunch "$*"') == [None]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize(("body", "known"), [
    ('launch "${@:0:1}"', 0), ('launch "${@:0:3}"', 2), ('launch "${@:0}"', 4),
    ('launch "${@:0:0}" end', 1),
])
def test_offset_zero_starts_with_the_scripts_name(tmp_path: Path, body: str, known: int) -> None:
    want = _bash(tmp_path, body)
    got = _read(body)
    assert len(got) == len(want)
    if "0:0" not in body:
        assert got[0] is None                   # $0: the name the script is run by
    assert got[len(got) - known:] == want[len(want) - known:]


PARSER = ("import argparse\nimport torch\nfrom torchao.float8 import convert_to_float8_training\n"
          "p = argparse.ArgumentParser()\np.add_argument('--fp8', action='store_true')\n"
          "p.add_argument('--depth', type=int, default=1)\nargs = p.parse_args()\n"
          "model = torch.compile(torch.nn.Linear(8, 8))\n"
          "if args.fp8:\n    convert_to_float8_training(model)\n")


def _fp8(tmp_path: Path, script: str) -> object:
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    (job / "train.py").write_text(PARSER)
    (job / "go.sh").write_text("#!/bin/bash\n" + script + "\n")
    read = read_paths([str(job / "go.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values.get("intent.fp8")


@pytest.mark.parametrize("script", [
    'if [ -n "$X" ]; then F=--fp8; fi\npython train.py $F',
    'if [ -n "$X" ]; then\n  F="--fp8"\nfi\npython train.py "$F" --depth 2',
    'case "$MODE" in\n  fp8) F=--fp8 ;;\nesac\npython train.py ${F}',
])
def test_a_flag_set_in_a_branch_that_may_not_run_is_unknown(tmp_path: Path, script: str) -> None:
    got = _fp8(tmp_path, script)
    assert got is not True and got is not False
    assert "may not run" in str(got)


@pytest.mark.parametrize(("script", "want"), [
    ('X=1\nif [ -n "$X" ]; then F=--fp8; fi\npython train.py $F', True),
    ('X=\nif [ -n "$X" ]; then F=--fp8; fi\npython train.py $F', False),
    ('if [ -n "$X" ]; then F=--depth=3; fi\npython train.py $F', False),
    ('F=--fp8\nif [ -n "$X" ]; then F=--fp8; fi\npython train.py $F', True),
    ('python train.py $F', False),
])
def test_decided_branches_and_other_flags_stay_decided(tmp_path: Path, script: str,
                                                       want: bool) -> None:
    assert _fp8(tmp_path, script) is want
