"""Inline Python programs that never run, and CPython's option parsing before ``-c``
(reading/launchinline.py, reading/shellreach.py; redteam14's open cases): a program after the
script's ``exit`` or in a function the script never calls was read as the job's (a confident FP8
"yes"); ``-Werror::DeprecationWarning -c PROG`` hid its program (a ``c`` in ``-W``'s value was
taken for ``-c``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launchinline import programs
from preflight.reading.shellreach import unreached

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
HERE = "python - <<'EOF'\nPROG\nEOF\n"
DASH_C = "python -c '\nPROG\n'\n"


def _intent(root: Path, script: str) -> dict[str, Any]:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "run.sh").write_text(script.replace("PROG\n", PROG))
    read = read_paths([str(root / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}


NEVER = [
    "echo start\nexit 0\n{run}",
    "exit\n{run}",
    "{{ echo a; exit 3; }}\n{run}",
    "check() {{\n{run}}}\necho no call\n",
    "function check {{\n{run}}}\n",
    "check() {{\n{run}}}\nexit 0\ncheck\n",       # its call is after the exit
]
MAY = [
    "cd /x || exit 1\n{run}",
    "if [ -z \"$A\" ]; then exit 1; fi\n{run}",
    "( exit 1 )\n{run}",
    "true | exit\n{run}",
    "f() {{ exit 1; }}\n{run}",
    "check() {{\n{run}}}\ncheck\n",
    "check() {{\n{run}}}\nif [ -n \"$A\" ]; then check; fi\n",
    "check() {{\n{run}}}\n\"$@\"\n",                # named by the caller
    "check() {{\n{run}}}\ntrap check EXIT\n",
    "check() {{\n{run}}}\nexport -f check\nbash -c check\n",
    "main() {{\n  check\n}}\ncheck() {{\n{run}}}\nmain\n",
]


@pytest.mark.parametrize("run", [HERE, DASH_C])
@pytest.mark.parametrize("shape", NEVER)
def test_a_program_that_never_runs_is_not_the_job(tmp_path: Path, shape: str, run: str) -> None:
    script = shape.format(run=run)
    assert programs(script, script) == []
    assert _intent(tmp_path, script).get("fp8") is not True


@pytest.mark.parametrize("run", [HERE, DASH_C])
@pytest.mark.parametrize("shape", MAY)
def test_a_program_that_may_run_is_read(tmp_path: Path, shape: str, run: str) -> None:
    assert _intent(tmp_path, shape.format(run=run))["fp8"] is True


@pytest.mark.parametrize("line, read", [
    ("python -Werror::DeprecationWarning -c '\nPROG\n'\n", True),
    ("python3 -uWerror::c -c '\nPROG\n'\n", True),     # -u, then -W with the value error::c
    ("python -Wc -c '\nPROG\n'\n", True),
    ("python -W ignore -X dev -c '\nPROG\n'\n", True),
    ("python -W -c '\nPROG\n'\n", False),               # -W takes -c: the program is a file
    ("python -Werror::DeprecationWarning - <<'EOF'\nPROG\nEOF\n", True),
    ("python -X utf8 -W ignore <<'EOF'\nPROG\nEOF\n", True),
    ("python -Wignore::c <<'EOF'\nPROG\nEOF\n", True),  # no -c: the program is stdin
    ("python -W <<'EOF'\nPROG\nEOF\n", False),          # -W wants a value: a usage error
    ("python -Xdev -m <<'EOF'\nPROG\nEOF\n", False),
    ("python train.py <<'EOF'\nPROG\nEOF\n", False),    # stdin of a script, not its program
])
def test_options_are_read_as_cpython_reads_them(tmp_path: Path, line: str, read: bool) -> None:
    got = _intent(tmp_path, line)
    assert (got.get("fp8") is True) is read


def test_hostile_scripts_stay_bounded() -> None:
    many = "".join(f"f{i}() {{\n  python -c 'import os'\n}}\n" for i in range(2000))
    assert unreached(many)(many.index("python")) is None     # past MAX_FUNCTIONS: may run
    deep = "{ " * 3000 + "exit; " + "}; " * 3000 + "\npython -c 'import os'\n"
    unreached(deep)(len(deep) - 5)
    unclosed = "check() {\n python -c 'import os'\n"
    assert unreached(unclosed)(12) is None


def test_a_call_written_inside_a_quoted_program_is_no_function(tmp_path: Path) -> None:
    script = "CODE='\nPROG\nout.sum().backward()\n'\npython -c \"$CODE\"\n"
    assert _intent(tmp_path, script)["fp8"] is True
