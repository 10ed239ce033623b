"""A script the launch script runs (``bash x.sh``) that cannot be read (redteam3, issue 21): a
FIFO, a folder, a link to ``/dev/zero``, a file that is not UTF-8 or holds NUL bytes was skipped
without a word, so a wrapper whose training command is in it came out "cannot tell which
framework" with no line. Now each is a finding at the calling line, and nothing is read from
it (a FIFO is never opened)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight.jobs.read import read_paths

ACC = b"accelerate launch --mixed_precision fp8 train.py\n"


def _make(path: Path, what: str) -> None:
    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
    elif what == "dev/zero":
        path.symlink_to("/dev/zero")
    elif what == "utf-16":
        path.write_bytes(b"\xff\xfe" + ACC.decode().encode("utf-16-le"))
    elif what == "nul":
        path.write_bytes(b"X=1\x00\n" + ACC)


@pytest.mark.parametrize("what", ["fifo", "folder", "dev/zero", "utf-16", "nul"])
def test_an_unreadable_called_script_is_a_finding_at_the_calling_line(tmp_path: Path,
                                                                      what: str) -> None:
    (tmp_path / ".git").mkdir()
    _make(tmp_path / "inner.sh", what)
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\nMP=fp8 bash inner.sh\n")
    read = read_paths([str(script)])
    hits = [p for p in read.problems if p.path == str(script) and "inner.sh" in p.message]
    assert [p.line for p in hits] == [3], [str(p) for p in read.problems]


def test_a_readable_called_script_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "inner.sh").write_bytes(b"accelerate launch --mixed_precision $MP train.py\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nMP=fp8 bash inner.sh\n")
    read = read_paths([str(script)])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8" and not read.problems
