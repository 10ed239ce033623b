"""Arrays set inside a branch the reader cannot decide reach the launch as "may be given"
(shell17: ``then ARGS+=(--fp8-format hybrid); fi`` on one line was taken as set before the
``if`` and its words as a command, so FP8 read a confident "no"; reading/shellwords.py,
shellstmt.py, shelltypes.element, shellexpand.Eval.element)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

FP8 = "config.megatron.fp8_format"


def _read(tmp_path: Path, body: str) -> object:
    script = tmp_path / "run.sh"
    script.write_text(f'#!/bin/bash\n{body}\ntorchrun pretrain_gpt.py "${{ARGS[@]}}"\n')
    facts = read_paths([str(script)]).facts
    return facts.get(FP8, "absent")


UNDECIDED = [
    "ARGS=(--bf16); if [[ $X == y ]]; then ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--bf16); [[ $X == y ]] && ARGS+=(--fp8-format hybrid)",
    "ARGS=(--bf16); if [[ $X == y ]]; then :; else ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--bf16)\nif [[ $X == y ]]; then\n  ARGS[1]=--fp8-format; ARGS[2]=hybrid\nfi",
    'ARGS=(--bf16)\nif [[ $X == y ]]; then\n  ARGS=("${ARGS[@]}" --fp8-format hybrid)\nfi',
    "ARGS=(--bf16)\nfor m in $MODES; do ARGS+=(--fp8-format hybrid); done",
    "ARGS=(--bf16); if [[ $X == y ]]; then declare -a ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--bf16); if [[ $X == y ]]; then ARGS=(--fp8-format hybrid); fi",
    "ARGS=(--bf16)\ncase $X in y) ARGS+=(--fp8-format hybrid);; esac",
    "ARGS=(--fp8-format hybrid); if [[ $X == y ]]; then ARGS[0]=--bf16; ARGS[1]=--bf16; fi",
]


@pytest.mark.parametrize("body", UNDECIDED)
def test_an_array_set_in_an_undecided_branch_is_maybe(tmp_path: Path, body: str) -> None:
    assert isinstance(_read(tmp_path, body), Unknown)


@pytest.mark.parametrize("body", [
    "ARGS=(--bf16); if true; then ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--bf16); { ARGS+=(--fp8-format hybrid); }",
    "ARGS=(--bf16); ARGS[1]=--fp8-format; ARGS[2]=hybrid",
    "ARGS=(--bf16); ARGS[${#ARGS[@]}]=--fp8-format; ARGS[$((n+1))]=hybrid",
])
def test_an_array_set_where_it_runs_gives_its_value(tmp_path: Path, body: str) -> None:
    assert _read(tmp_path, body) == "hybrid"


@pytest.mark.parametrize("body", [
    "ARGS=(--bf16); if false; then ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--bf16); X=n; if [[ $X == y ]]; then ARGS+=(--fp8-format hybrid); fi",
    "ARGS=(--fp8-format hybrid); ARGS[0]=--bf16; ARGS[1]=--bf16",
    "ARGS=(--bf16)\n[[ $X == y ]] && ARGS+=(--seed 1)\nunused=(--fp8-format hybrid)",
])
def test_quiet_where_no_fp8_reaches(tmp_path: Path, body: str) -> None:
    assert _read(tmp_path, body) == "absent"


@pytest.mark.parametrize("body", [
    "ARGS=(--bf16); if [[ $X ]]; then ARGS[=(--fp8-format hybrid); fi",
    "ARGS=(--bf16); ARGS[\"$(id)\"]=--fp8-format; ARGS[9999999999999999999999]=hybrid",
    "ARGS=(--bf16); then ARGS+=(--fp8-format; fi",
    "ARGS=(--bf16)\n" + "if [[ $X ]]; then ARGS+=(--fp8-format hybrid); fi\n" * 200,
])
def test_hostile_array_forms_never_raise(tmp_path: Path, body: str) -> None:
    got = _read(tmp_path, body)
    assert got == "absent" or got == "hybrid" or isinstance(got, Unknown)
