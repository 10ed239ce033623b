"""bounded.read_bytes: regular files only, never more than the limit, never blocks on a FIFO."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.base.bounded import NotRegularFile, TooLarge, read_bytes


def test_limit_and_partial(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a" * 1000)
    assert read_bytes(path, 1000) == b"a" * 1000
    with pytest.raises(TooLarge):
        read_bytes(path, 999)
    assert read_bytes(path, 10, partial=True) == b"a" * 10


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_fifo_device_and_folder_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    start = time.monotonic()
    for path, kind in ((fifo, "a FIFO"), (link, "a character device"), (tmp_path, "a folder")):
        with pytest.raises(NotRegularFile) as err:
            read_bytes(path, 10)
        assert err.value.kind.startswith(kind)
    assert time.monotonic() - start < 30   # a blocked FIFO waits forever; load takes seconds


def test_missing_file_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "absent", 10)
    with pytest.raises(FileNotFoundError):
        read_bytes(str(tmp_path / "nul\x00byte"), 10)


@settings(max_examples=60, deadline=None)
@given(head=st.binary(max_size=300).filter(lambda b: b"\n\n" not in b),
       body=st.binary(max_size=300), limit=st.integers(0, 700))
def test_stop_ends_the_read_at_the_first_header_end(tmp_path_factory: pytest.TempPathFactory,
                                                    head: bytes, body: bytes,
                                                    limit: int) -> None:
    path = tmp_path_factory.mktemp("h") / "METADATA"
    # A head ending in "\n" would make the stop start one byte earlier: strip it.
    head = head.rstrip(b"\n")
    path.write_bytes(head + b"\n\n" + body)
    got = read_bytes(path, limit, stop=b"\n\n", partial=True)
    want = head + b"\n\n"
    assert got == (want if len(want) <= limit else (head + b"\n\n" + body)[:limit])


def test_a_header_end_one_byte_past_the_limit_is_not_returned(tmp_path: Path) -> None:
    path = tmp_path / "METADATA"
    path.write_bytes(b"abc\n\nbody")
    assert read_bytes(path, 4, stop=b"\n\n", partial=True) == b"abc\n"
    assert read_bytes(path, 5, stop=b"\n\n", partial=True) == b"abc\n\n"
