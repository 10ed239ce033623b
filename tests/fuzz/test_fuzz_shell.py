"""Fuzz target for the shell reader (issue 21 item 11): hypothesis builds launch scripts from
here-document openers, delimiter lines, continuation lines and marker commands, and checks
:mod:`preflight.reading.shell` against the real bash, line by line.

Each marker line ``echo Ln >&2`` prints ``Ln`` when bash runs it as a command. The lines
:func:`~preflight.reading.shell.blank_heredocs` keeps must be exactly the markers bash runs: a body
read as a command (the launch-line confusion of issue 21) or a real command blanked (a launch
missed) both fail. The scripts only ``cat`` to ``/dev/null`` and ``echo``, run with ``--norc``
in a temporary folder; bash is started at most :data:`EXAMPLES` times, derandomized under CI
(tests/conftest.py). A second target feeds the same scripts, mixed with noise, through the
whole script reader: no exception, every problem names the file, bounded time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cputime import cpu_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight.jobs.read import read_paths
from preflight.reading.shell import blank_heredocs, unterminated

BASH = shutil.which("bash")
EXAMPLES = int(os.environ.get("FP8D_FUZZ_EXAMPLES", "40"))
SECONDS = 5.0
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_OPENERS = ["cat >/dev/null <<EOF", "cat >/dev/null <<-EOF", "cat >/dev/null <<'EOF'",
            'cat >/dev/null <<"END X"', "cat >/dev/null <<\\EOF", "cat >/dev/null << EOF",
            'cat >/dev/null <<E"O"F', "cat >/dev/null <<A; cat >/dev/null <<'B'",
            "X=$(cat <<EOF", "cat >/dev/null <<-'EOF'", "cat <<< EOF >/dev/null",
            ": $(( 1 << 2 ))"]
_OTHERS = ["EOF", "\tEOF", "EOF ", " EOF", "END X", "A", "B", ")", "x \\", "EO\\", "F",
           "\t\tEOF", "# <<EOF", "echo '<<EOF' >/dev/null", "", 'echo "<<EOF" >/dev/null',
           "if true; then", "fi", "cat >/dev/null <<EOF; echo L0 >&2"]


@st.composite
def scripts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(st.sampled_from(_OPENERS), st.sampled_from(_OTHERS),
                                     st.just("MARK")), min_size=1, max_size=16))
    lines = [f"echo L{n} >&2" if p == "MARK" else p for n, p in enumerate(pieces, 1)]
    return "\n".join(lines) + "\n"


def _markers(text: str) -> list[str]:
    """The markers that start a command: not those a line continuation glues onto another."""
    out, glued = [], False
    for line in text.split("\n"):
        out += [m.group(1) for m in re.finditer(r"echo (L\d+) >&2", line)
                if m.start() > 0 or not glued]
        glued = (len(line) - len(line.rstrip("\\"))) % 2 == 1
    return out


@pytest.mark.skipif(BASH is None, reason="needs bash")
@FUZZ
@given(scripts())
def test_the_lines_kept_are_the_commands_bash_runs(tmp_path: Path, text: str) -> None:
    assert BASH is not None
    if unterminated(text) is not None:
        return       # bash would refuse the script; the reader reports that instead
    check = subprocess.run([BASH, "-n"], input=text.encode(), capture_output=True, timeout=30)
    if check.returncode != 0:
        return       # a syntax error (a lone ")"): no command runs, nothing to compare
    path = tmp_path / "fuzz.sh"
    path.write_text(text)
    proc = subprocess.run([BASH, "--norc", "--noprofile", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    ran = re.findall(r"^(L\d+)$", proc.stderr, flags=re.M)
    kept = blank_heredocs(text)
    assert len(kept) == len(text) and kept.count("\n") == text.count("\n")
    assert _markers(kept) == ran, text


_NOISE = st.sampled_from(["\x00", "\r", "'", '"', "$(", "`", "\\\n", "<<", "<<-", "<<'",
                          "EOF\n", "\n", "a" * 3000, "<<" * 500, "\t", "((", "))"])


@FUZZ
@given(st.lists(st.one_of(scripts(), _NOISE, st.text(max_size=20)), max_size=12).map("".join))
def test_the_script_reader_survives_and_is_bounded(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/bash\n" + text + "\naccelerate launch --mixed_precision bf16 t.py\n",
                    errors="surrogatepass")
    start = cpu_seconds()     # not stretched by the machine's load (tests/cputime.py)
    read = read_paths([str(path)])
    assert cpu_seconds() - start < SECONDS
    assert all(p.path == str(path) for p in read.problems)
