"""Statements from words (reading/shellstmt.py): a ``{ ...`` group never closed, or a ``}``
closing nothing, is a script bash refuses (``Split.unclosed``, as for if / case / loops:
redteam11's open item); every real job script agrees with ``bash -n``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.reading.shellwords import split

BASH = shutil.which("bash")
JOBS = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"
SCRIPTS = [
    "{ python train.py\n", "{ python train.py; }\n", "f() {\n  python train.py\n}\nf\n",
    "function f {\n  a\n}\n", "function f { a; }\n", "function f() {\n  a\n}\n",
    "x && { a; b; } > log 2>&1\n", "if x; then\n  {\n    a\n  }\nfi\n", "if x; then { a; fi; }\n",
    "a }\n", "find . -exec rm {} \\;\n", "}\n", "f() { a; } ; g() {\n  b\n}\n",
    "cat <<EOF\n{\nEOF\n", "case x in a) { b; } ;; esac\n", "{ { a; }\n", "echo {a,b}\n",
    "while x; do { a; } done\n", "{ a; } || { b\n",
]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("text", SCRIPTS)
def test_refused_where_bash_refuses(tmp_path: Path, text: str) -> None:
    assert BASH is not None
    (tmp_path / "s.sh").write_text(text)
    ok = subprocess.run([BASH, "-n", str(tmp_path / "s.sh")], capture_output=True,
                        timeout=20).returncode == 0
    assert (split(text).unclosed is None) == ok


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_every_real_job_script_as_bash_reads_it() -> None:
    assert BASH is not None
    scripts = [p for p in JOBS.glob("*/files/**/*") if p.suffix in (".sh", ".bash")]
    assert len(scripts) > 100
    for path in scripts:
        text = path.read_text(encoding="utf-8", errors="replace")
        ok = subprocess.run([BASH, "-n", str(path)], capture_output=True, timeout=20
                            ).returncode == 0
        assert (split(text).unclosed is None) == ok, path


@pytest.mark.parametrize("text", ["((a" * 100_000, "(" * 200_000, "( a\n" * 300])
def test_nesting_is_bounded(text: str) -> None:
    # each statement keeps the subshells it is in: 20,000 open `(` cost seconds (quadratic);
    # past MAX_NESTING the rest is not split, as past MAX_PARTS
    from preflight.reading.shellwords import MAX_NESTING

    got = split(text)
    assert got.truncated_at is not None
    assert all(len(st.subshell) <= MAX_NESTING + 1 for st in got.statements)
