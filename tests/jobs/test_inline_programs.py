"""Inline Python programs of a launch script (holdout20's blog-byoc-te verify_te.sh:6-30, a
multi-line ``python -c '...'`` running te.Linear under te.fp8_autocast, was FP8D-CFG-NO-JOB):
read as virtual scripts of the shell file, findings at its lines; quoting as bash does it; a
program decided at run time, huge, or in an unquoted here-document that expands values is not
read, with the reason; never run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.findings import Source
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading import launchinline

TE_FP8 = """import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe
model = te.Linear(768, 3072, bias=True)
inp = torch.randn(2048, 768, device="cuda")
fp8_recipe = recipe.DelayedScaling(margin=0, fp8_format=recipe.Format.E4M3)
with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
    out = model(inp)
out.sum().backward()
"""


def _job(root: Path, body: str) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    script = root / "verify_te.sh"
    script.write_text("#!/bin/bash\n# verify the build\n" + body)
    return script


def _read(script: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(script)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


def test_single_quoted_program_is_read_at_the_shell_lines(tmp_path: Path) -> None:
    script = _job(tmp_path, "python -c 'import transformer_engine.pytorch as te; print(te)'\n"
                  f"python -c '\n{TE_FP8}'\n")
    intent, read = _read(script)
    assert intent["fp8"] is True and intent["backend"] == "te"
    srcs = [s for n, s in read.provenance.items() if n.startswith("config.") and
            isinstance(s, Source)]
    assert srcs and all(s.path == str(script) for s in srcs)
    autocast = 4 + TE_FP8.splitlines().index(
        "with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):") + 1
    assert any(s.line == autocast for s in srcs), srcs
    assert not any(".inline-" in str(s) for s in read.provenance.values())
    assert not any(".inline-" in p.path for p in read.problems)


def test_double_quoted_and_ansi_c_programs(tmp_path: Path) -> None:
    dq = TE_FP8.replace('"cuda"', '\\"$DEV\\"')
    script = _job(tmp_path, f'DEV=cuda\npython3 -u -c "\n{dq}"\n')
    assert _read(script)[0]["fp8"] is True
    ansi = TE_FP8.replace("\n", "\\n").replace('"cuda"', "'cuda'").replace("'", "\\'")
    other = _job(tmp_path / "ansi", f"python -c $'{ansi}'\n")
    assert _read(other)[0]["fp8"] is True


def test_program_without_fp8_is_quiet(tmp_path: Path) -> None:
    plain = TE_FP8.replace("with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):\n    out",
                           "if True:\n    out")
    script = _job(tmp_path, f"python -c '\n{plain}'\n")
    intent, read = _read(script)
    assert intent["fp8"] is not True
    assert not any(p.level == "error" for p in read.problems)


def test_heredoc_program(tmp_path: Path) -> None:
    script = _job(tmp_path, f"python3 - <<'EOF'\n{TE_FP8}EOF\n")
    assert _read(script)[0]["fp8"] is True
    bare = _job(tmp_path / "bare", f"python <<EOF\n{TE_FP8}EOF\n")
    assert _read(bare)[0]["fp8"] is True


@pytest.mark.parametrize("body", [
    'python -c "$CODE"\n',
    "python -c \"$(cat prog.py)\"\n",
    f"python3 - <<EOF\n{TE_FP8.replace('True', '$ON')}EOF\n",
])
def test_run_time_program_is_not_read_and_says_why(tmp_path: Path, body: str) -> None:
    script = _job(tmp_path, body)
    intent, read = _read(script)
    assert intent.get("fp8") is not True
    said = [p for p in read.problems if p.path == str(script) and p.code == "reference"]
    assert said and said[0].line >= 3


def test_huge_program_is_bounded(tmp_path: Path) -> None:
    huge = "x = 1\n" * (launchinline.MAX_PROGRAM_CHARS // 6 + 10)
    script = _job(tmp_path, f"python -c '\n{huge}{TE_FP8}'\n")
    intent, read = _read(script)
    assert intent.get("fp8") is not True
    assert any(p.line == 3 and p.path == str(script) for p in read.problems)


def test_hostile_programs_never_traceback(tmp_path: Path) -> None:
    bodies = ["python -c 'import (((\n'\n", "python -c\n", "python -c ''\n",
              "python -c 'open(\"/etc/passwd\").read()'\n",
              "python -c '\x00'\n", "python -cimport_os\n", "python -W ignore -c 'x=1' -- a b\n",
              "python -c '" + "(" * 5000 + "'\n"]
    for n, body in enumerate(bodies):
        script = _job(tmp_path / str(n), body)
        intent, read = _read(script)
        assert intent.get("fp8") is not True
        assert all(".inline-" not in p.path for p in read.problems)


def test_programs_that_differ_leave_it_unknown(tmp_path: Path) -> None:
    off = TE_FP8.replace("enabled=True", "enabled=False")
    script = _job(tmp_path, f"python -c '\n{TE_FP8}'\npython -c '\n{off}'\n")
    intent, _ = _read(script)
    assert intent["fp8"] is not False


def test_program_words_are_found_as_bash_gives_them() -> None:
    text = "python -u -c 'a=1' x y\npython -m pkg\npython train.py -c 'b=2'\n"
    got = launchinline.programs(text, text)
    assert [(p.line, p.text, p.argv) for p in got] == [(1, "a=1", ("x", "y"))]
    assert launchinline.is_python("/opt/conda/bin/python3.11")
    assert not launchinline.is_python("pythonista")
    assert os.sep not in "".join(p.text or "" for p in got)


def test_program_in_a_variable_the_script_sets(tmp_path: Path) -> None:
    script = _job(tmp_path, f"CODE='\n{TE_FP8}'\npython -c \"$CODE\"\n")
    intent, read = _read(script)
    assert intent["fp8"] is True
    # the program's lines are where the value is written (CODE=' is line 3)
    autocast = 4 + TE_FP8.splitlines().index(
        "with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):")
    assert any(isinstance(s, Source) and s.line == autocast and s.path == str(script)
               for s in read.provenance.values())


def test_program_through_bash_c_and_in_a_branch_that_never_runs(tmp_path: Path) -> None:
    nested = _job(tmp_path, "bash -c \"python -c 'import transformer_engine.pytorch as te; "
                  "te.fp8_autocast(enabled=True)'\"\n")
    assert _read(nested)[0]["fp8"] is True
    never = _job(tmp_path / "never", f"if false; then\npython -c '\n{TE_FP8}'\nfi\n")
    assert _read(never)[0].get("fp8") is not True
