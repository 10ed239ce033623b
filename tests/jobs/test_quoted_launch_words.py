"""A launch line whose framework's mark is quoted (redteam11's open item): ``uv run rl "@"
x.toml`` is ``rl @ x.toml`` to bash, but prime-rl's launch pattern, matched against the text,
wanted a bare ``@``: the script was "cannot tell which framework" and its config never read.
jobs/scripts.py now also looks at the commands with their quotes removed
(reading/shellwords.plain), where the text shows no framework; printing commands (``echo "rl @
x.toml"``) still launch nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellwords import plain

REV = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout14-prime-rl-reverse-text-rl-bf16-control" / "files")
TOML = "configs/basic/reverse-text/rl.toml"


def _intent(tmp_path: Path, line: str) -> dict[str, object]:
    job = tmp_path / "job"
    shutil.copytree(REV, job)
    (job / ".git").mkdir()
    (job / "run.sh").write_text("#!/bin/bash\n" + line + "\n")
    read = read_paths([str(job / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values


@pytest.mark.parametrize("at", ['"@"', "'@'", "\\@", '""@'])
def test_a_quoted_at_is_prime_rls_config(tmp_path: Path, at: str) -> None:
    got = _intent(tmp_path, f"uv run rl {at} {TOML} --trainer.model.quantization.type mxfp8")
    assert got["intent.fp8"] is True


def test_a_printed_line_launches_nothing(tmp_path: Path) -> None:
    got = _intent(tmp_path, f'echo "uv run rl @ {TOML} --trainer.model.quantization.type mxfp8"')
    assert isinstance(got["intent.fp8"], Unknown)


def test_plain() -> None:
    assert plain('A=1\nuv run rl "@" \'x y\' $B "${C}"\necho "rl @ z"\n') == \
        "uv run rl @ x y $B $C"
