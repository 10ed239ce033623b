"""A job module a script calls into that is not read (redteam3, issue 21): a FIFO, a folder, a
link out of the job or to ``/dev/zero``, UTF-16, NUL bytes, a syntax error or a file over the size
limit was skipped without a word (``jobs/pyimports.py``: "reported when the user names it"), so the
values the script passes it were lost and the check said only "no setting found in train.py".
Now each is a finding at the line of the script that calls into it; nothing is opened outside
the job and no FIFO is opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts
from preflight.jobs.read import read_paths

HELP = ("import transformer_engine.pytorch as te\ndef run(fp8):\n"
        "    with te.fp8_autocast(enabled=fp8):\n        pass\n")
MAIN = "import os\nfrom helpers import run\nrun(fp8=True)\n"


def _make(job: Path, what: str) -> None:
    target = job / "helpers.py"
    if what == "fifo":
        os.mkfifo(target)
    elif what == "folder":
        target.mkdir()
    elif what == "dev/zero":
        target.symlink_to("/dev/zero")
    elif what == "outside":
        outside = job.parent / "outside.py"
        outside.write_text(HELP)
        target.symlink_to(outside)
    elif what == "utf-16":
        target.write_bytes(b"\xff\xfe" + HELP.encode("utf-16-le"))
    elif what == "nul":
        target.write_bytes(HELP.encode() + b"\x00")
    elif what == "syntax":
        target.write_text("def run(fp8:\n")
    elif what == "huge":
        target.write_text(HELP + "x = 1\n" * 300_000)


@pytest.mark.parametrize("what", ["fifo", "folder", "dev/zero", "outside", "utf-16", "nul",
                                  "syntax", "huge"])
def test_an_unread_job_module_is_a_finding_at_the_importing_line(tmp_path: Path,
                                                                 what: str) -> None:
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    _make(job, what)
    script = job / "train.py"
    script.write_text(MAIN)
    read = read_paths([str(script)])
    hits = [p for p in read.problems if p.path == str(script) and "helpers.py" in p.message]
    assert [p.line for p in hits] == [3], [str(p) for p in read.problems]


def test_a_readable_module_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELP)
    script = tmp_path / "train.py"
    script.write_text(MAIN)
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True and not read.problems
