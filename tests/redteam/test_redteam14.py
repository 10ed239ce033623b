"""redteam14 (session 41): attacks on what sessions 39-40 added (reading/launchroot, launchinline
and jobs/inlinepy, shellquote's ``$'..'``, shellparam, shellarith, launchpick, ...). Each case of
the first part failed before its fix:

- a here-document that ``python`` never reads as its program was read as one, a confident FP8
  verdict from code that never runs: ``python 3<<EOF`` (another file descriptor), ``python -c
  <<EOF`` / ``-m`` / ``-W`` (an option that takes the next word: Python stops with an error),
  ``python - <<A <<B`` and ``python - <<EOF < file`` (bash applies redirections left to right:
  the last one is standard input) (launchinline._heredoc);
- ``F=0`` then a command that sets F other than by ``NAME=value`` -- ``(( F++ ))``, ``let F=1``,
  ``: $(( F = 1 ))``, ``read F``, ``printf -v F``, ``for F in``, ``getopts``, ``unset F``,
  ``${F:=1}``, ``F+=1``, ``F=$((F+1))`` -- and ``--fp8 $F`` on the launch line: read as
  ``--fp8 0``, a confident FP8 "no" where bash passes 1 (new reading/shellside.py, shellvars);
- ``python -c $'..\\n..'`` or a double-quoted program with ``\\<newline>``: its decoded lines
  are not the file's, and the places read in it named lines past them (``run.sh:6`` of a
  3-line file): now the line the program starts (launchinline, jobs/inlinepy).

The rest pin what held (no traceback, bounded, nothing outside the job read or reported).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths

PROG = textwrap.dedent("""\
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import DelayedScaling
    m = te.Linear(1024, 1024)
    opt = torch.optim.AdamW(m.parameters())
    for i in range(10):
        with te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling()):
            y = m(torch.randn(16, 1024, device="cuda"))
        y.sum().backward()
        opt.step()
    """)


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("PROG\n", PROG))
    return root


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}


# --- here-documents python does not read as its program -----------------------------------------

@pytest.mark.parametrize("script", [
    "python 3<<'EOF'\nPROG\nEOF\n",                     # fd 3: python's stdin is not it
    "python -c <<'EOF'\nPROG\nEOF\n",                   # -c wants the next word: an error
    "python -m <<'EOF'\nPROG\nEOF\n",
    "python3 -uc <<'EOF'\nPROG\nEOF\n",
    "python3 -W <<'EOF'\nPROG\nEOF\n",
    "python - <<'A' <<'B'\nPROG\nA\nimport os\nB\n",    # the last one is stdin
    "python - <<'EOF' < /dev/null\nPROG\nEOF\n",
    "python - <<'EOF' 0<other.py\nPROG\nEOF\n",
])
def test_a_heredoc_python_does_not_run_is_not_its_program(tmp_path: Path, script: str) -> None:
    got = _intent(_job(tmp_path, {"run.sh": script}) / "run.sh")
    assert got["fp8"] is not True


@pytest.mark.parametrize("script", [
    "python - <<'EOF'\nPROG\nEOF\n",
    "python3<<'EOF'\nPROG\nEOF\n",                      # `python3` then `<<`: fd 0
    "python 0<<'EOF' > out 2>&1\nPROG\nEOF\n",
    "python3 -u - <<'EOF' | tee log\nPROG\nEOF\n",      # the pipe's next command is not python's
    "python - <<'EOF' 2> >(tee err)\nPROG\nEOF\n",
    "cat > /dev/null < x.txt; python - <<'EOF'\nPROG\nEOF\n",
])
def test_a_heredoc_program_is_still_read(tmp_path: Path, script: str) -> None:
    got = _intent(_job(tmp_path, {"run.sh": script}) / "run.sh")
    assert got["fp8"] is True
    assert "run.sh:" in str(got["fp8_source"])


# --- a name set other than by NAME=value ---------------------------------------------------------

TRAIN = textwrap.dedent("""\
    import argparse, torch
    import transformer_engine.pytorch as te
    p = argparse.ArgumentParser()
    p.add_argument("--fp8", type=int, default=0)
    a = p.parse_args()
    m = te.Linear(16, 16)
    opt = torch.optim.AdamW(m.parameters())
    for i in range(3):
        with te.fp8_autocast(enabled=bool(a.fp8)):
            m(torch.randn(16, 16)).sum().backward()
        opt.step()
    """)


@pytest.mark.parametrize("before", [
    "(( F++ ))", "(( F += 1 ))", "(( F = 1 ))", "let F=1", "let F++", ": $(( F = 1 ))",
    "printf -v F 1", "read F <<< 1", "read -r F G <<< '1 2'", "for F in 1; do :; done",
    "while getopts f F; do :; done", "unset F\n: ${F:=1}", "F+=1", "F=$((F+1))",
    "F=$(( F + 1 ))", "declare -i F\nF+=1", "mapfile -t F < /dev/null",
])
def test_a_name_set_another_way_is_not_its_first_value(tmp_path: Path, before: str) -> None:
    script = f"F=0\n{before}\npython train.py --fp8 $F\n"
    got = _intent(_job(tmp_path, {"run.sh": script, "train.py": TRAIN}) / "run.sh")
    assert got["fp8"] is not False, before


@pytest.mark.parametrize("script, fp8", [
    ("F=0\npython train.py --fp8 $F\n", False),
    ("F=1\npython train.py --fp8 $F\n", True),
    ("F=0\nif (( F == 1 )); then echo; fi\nG=1 python -V\npython train.py --fp8 $F\n", False),
    ("F=1\nfor ((i = 0; i < 3; i++)); do echo $i; done\npython train.py --fp8 $F\n", True),
])
def test_a_name_only_read_keeps_its_value(tmp_path: Path, script: str, fp8: bool) -> None:
    got = _intent(_job(tmp_path, {"run.sh": script, "train.py": TRAIN}) / "run.sh")
    assert got["fp8"] is fp8


# --- an inline program whose lines are not the file's --------------------------------------------

ANSI = ("echo hi\npython -c $'import torch\\nimport transformer_engine.pytorch as te\\n"
        "m = te.Linear(16, 16)\\nwith te.fp8_autocast(enabled=True):\\n"
        "    m(torch.randn(16, 16)).sum().backward()\\n'\necho done\n")
CONTINUED = ('echo hi\npython -c "import torch; \\\nimport transformer_engine.pytorch as te; \\\n'
             'm = te.Linear(16, 16)\nwith te.fp8_autocast(enabled=True):\n'
             '    m(torch.randn(16, 16)).sum().backward()\n"\n')


@pytest.mark.parametrize("script, line", [(ANSI, 2), (CONTINUED, 2)])
def test_an_inline_program_not_written_line_by_line_names_its_start(
        tmp_path: Path, script: str, line: int) -> None:
    got = _intent(_job(tmp_path, {"run.sh": script}) / "run.sh")
    assert got["fp8"] is True
    assert str(got["fp8_source"]).endswith(f"run.sh:{line}")


def test_an_inline_program_written_line_by_line_keeps_its_lines(tmp_path: Path) -> None:
    got = _intent(_job(tmp_path, {"run.sh": "echo hi\npython -c '\nPROG\n'\n"}) / "run.sh")
    assert str(got["fp8_source"]).endswith("run.sh:9")      # PROG's line 7, from line 3


def test_read_of_a_heredoc_keeps_the_body() -> None:
    from preflight.reading.shellvars import collect_variables

    text = "read -r -d '' CMD <<'EOF'\npython train.py --fp8 1\nEOF\n$CMD\n"
    assert collect_variables(text)["CMD"] == "python train.py --fp8 1"
