"""redfix12's open items (session 40): FP8D-NEOX-0001 fired from the first GPT-NeoX file when a
second file the launch line passes repeats te_fp8_mha (from_ymls refuses the load: FP8 Unknown,
so the rule is undetermined); an unclosed ``{`` group was said to lack a ``done``."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.jobs.read import read_paths

NEOX = "pipe-parallel-size: 1\nmodel-parallel-size: 1\nnum-layers: 2\nhidden-size: 64\n"
H100 = {"gpu": "H100", "gpu.count": "8"}


def _neox(root: Path, a: str, b: str | None) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "a.yml").write_text(NEOX + a)
    if b is not None:
        (root / "b.yml").write_text(b)
    for name in ("deepy.py", "train.py"):
        (root / name).write_text("#\n")
    run = root / "run.sh"
    run.write_text("python deepy.py train.py a.yml" + (" b.yml" if b is not None else "") + "\n")
    return run


def _fired(path: Path) -> set[str]:
    report = preflight.check(str(path), smoke=False, assume=H100)
    return {f.rule_id for f in report.findings}


@pytest.mark.parametrize("b", ["te_fp8_mha: false\n", "te_fp8_mha: true\n", "te-fp8-mha: true\n"])
def test_neox_0001_not_from_the_first_file_when_the_load_is_refused(tmp_path: Path, b: str
                                                                    ) -> None:
    assert "FP8D-NEOX-0001" not in _fired(_neox(tmp_path, "te_fp8_mha: true\n", b))


def test_neox_0001_still_fires_from_one_file(tmp_path: Path) -> None:
    assert "FP8D-NEOX-0001" in _fired(_neox(tmp_path, "te_fp8_mha: true\n", None))
    assert "FP8D-NEOX-0001" in _fired(_neox(tmp_path / "two", "te_fp8_mha: true\n",
                                            "te_layernorm_mlp: true\n"))


@pytest.mark.parametrize("body, closer", [
    ("{ accelerate launch --mixed_precision fp8 train.py\n", "`}`"),
    ("if true; then\naccelerate launch --mixed_precision fp8 train.py\n", "`fi`"),
    ("while true; do\naccelerate launch --mixed_precision fp8 train.py\n", "`done`"),
])
def test_unclosed_group_names_its_closer(tmp_path: Path, body: str, closer: str) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n" + body)
    problems = [p for p in read_paths([str(run)]).problems if p.path == str(run)]
    assert problems and problems[0].line == 2 and problems[0].level == "error"
    assert closer in problems[0].message
    assert "done" not in problems[0].message or closer == "`done`"


def test_stray_closer_names_what_it_closes(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\naccelerate launch --mixed_precision fp8 train.py\n}\n")
    problems = [p for p in read_paths([str(run)]).problems if p.path == str(run)]
    assert problems and problems[0].line == 3 and "`{`" in problems[0].message
