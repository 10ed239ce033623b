"""Here-documents are read as bash reads them (issue 21 item 9): their bodies are text, never the
launch, and the real launch line after them is read.

Each case puts a launch line saying FP8 inside a here-document and the real launch (BF16) after
it. Before, every form but ``<<EOF`` (and the unterminated case) took the body for the launch.
Where bash is installed, each script is also run with bash, to show that the body is not what
bash runs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.jobs.read import read_paths
from preflight.reading.shell import blank_heredocs, heredocs

BASH = shutil.which("bash")
FAKE = "accelerate launch --mixed_precision fp8 fake.py"
REAL = "accelerate launch --mixed_precision bf16 train.py"

# (id, script text with {fake} in a body and {real} as the real launch)
FORMS = [
    ("plain", "cat > note.txt <<EOF\n{fake}\nEOF\n{real}\n"),
    ("dash-tabs", "cat > note.txt <<-EOF\n\t{fake}\n\t\tEOF\n{real}\n"),
    ("single-quoted", "cat > note.txt <<'EOF'\n{fake} $HOME\nEOF\n{real}\n"),
    ("double-quoted-with-space", 'cat > note.txt <<"END X"\n{fake}\nEND X\n{real}\n'),
    ("backslash", "cat > note.txt <<\\EOF\n{fake}\nEOF\n{real}\n"),
    ("partly-quoted", 'cat > note.txt <<E"O"F\n{fake}\nEOF\n{real}\n'),
    ("blank-before-word", "cat > note.txt << EOF\n{fake}\nEOF\n{real}\n"),
    ("two-on-a-line", "cat > a.txt <<A; cat > b.txt <<'B'\n{fake}\nA\n{fake}\nB\n{real}\n"),
    ("python-stdin", 'python - <<EOF\nimport os\nos.system("{fake}")\nEOF\n{real}\n'),
    ("inside-command-substitution", 'NOTE=$(cat <<EOF\n{fake}\nEOF\n)\n{real}\n'),
    ("dash-with-quoted-word", "cat > note.txt <<-'EOF'\n\t{fake}\n\tEOF\n{real}\n"),
    ("continued-line-is-not-the-end", "cat > note.txt <<EOF\nx \\\nEOF\n{fake}\nEOF\n{real}\n"),
    ("quoted-word-keeps-backslash", "cat > note.txt <<'EOF'\n{fake} \\\nEOF\n{real}\n"),
    ("after-a-here-string", "cat <<< hi > /dev/null\ncat > note.txt <<EOF\n{fake}\nEOF\n{real}\n"),
]


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/bash\n" + text.format(fake=FAKE, real=REAL))
    return path


@pytest.mark.parametrize("text", [t for _, t in FORMS], ids=[i for i, _ in FORMS])
def test_body_is_not_the_launch_and_the_real_launch_is_read(tmp_path: Path, text: str) -> None:
    path = _script(tmp_path, text)
    read = read_paths([str(path)])
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    line = int(read.provenance["config.accelerate.mixed_precision"].rsplit(":", 1)[1])
    assert path.read_text().splitlines()[line - 1] == REAL
    assert [p for p in read.problems if p.level == "error"] == []


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("text", [t for _, t in FORMS], ids=[i for i, _ in FORMS])
def test_bash_agrees_the_body_is_not_run(tmp_path: Path, text: str) -> None:
    # the bodies' lines are what bash does not run: replace both launches by markers and see
    fake, real = "echo FAKE-RAN >&2", "echo REAL-RAN >&2"
    path = tmp_path / "run.sh"
    body = text.replace('os.system("{fake}")', "print('py')").format(fake=fake, real=real)
    path.write_text(body.replace("python -", "cat"))
    proc = subprocess.run([BASH, "--norc", "--noprofile", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert "REAL-RAN" in proc.stderr and "FAKE-RAN" not in proc.stderr
    kept = blank_heredocs(path.read_text())
    assert real in kept and fake not in kept


def test_unterminated_body_runs_to_the_end_with_a_warning(tmp_path: Path) -> None:
    path = _script(tmp_path, "{real}\ncat > note.txt <<'END'\n{fake}\nEND \n")   # "END " != END
    read = read_paths([str(path)])
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    (problem,) = read.problems
    assert (problem.level, problem.line) == ("warning", 3)


def test_shift_in_arithmetic_is_no_here_document() -> None:
    text = "(( x <<= 2 ))\nN=$((1<<3))\ncat <<< EOF\n" + REAL + "\n"
    assert heredocs(text) == []
    assert blank_heredocs(text) == text


def test_delimiters_after_quote_removal() -> None:
    text = "cat <<'A B' <<\"C\" <<\\D <<-E\"F\" <<G\n1\nA B\n2\nC\n3\nD\n\t4\n\tEF\n5\nG\nrest\n"
    docs = heredocs(text)
    assert [(d.delimiter, d.closed) for d in docs] == [
        ("A B", True), ("C", True), ("D", True), ("EF", True), ("G", True)]
    assert blank_heredocs(text).split("\n")[-2] == "rest"
    assert len(blank_heredocs(text)) == len(text)


def test_a_sourced_scripts_heredoc_body_is_not_followed(tmp_path: Path) -> None:
    # a body mentioning `source` is text, in a sourced file too
    (tmp_path / "env.sh").write_text("cat > x <<EOF\nsource ./evil.sh\nPREC=fp8\nEOF\nPREC=bf16\n")
    (tmp_path / "evil.sh").write_text("PREC=fp8\n")
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/bash\nsource ./env.sh\naccelerate launch --mixed_precision $PREC t.py\n")
    read = read_paths([str(path)])
    assert read.facts["config.accelerate.mixed_precision"] == "bf16"
    assert not any("evil.sh" in p for p, _ in read.files)
