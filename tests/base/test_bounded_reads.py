"""bounded.read_bytes stops at a short read that reaches the file's size (issue 26 item 4: a
check reads ~300 files, each with one ``read`` more than it needs), and still reads to the end
where the size says nothing (``/proc`` reports 0) or the file is longer than one chunk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight.base import bounded


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size each ``os.read`` returned (the real read runs)."""
    sizes: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        data = real(fd, n)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(bounded.os, "read", counting)
    return sizes


def test_a_small_file_takes_one_read(tmp_path: Path, reads: list[int]) -> None:
    path = tmp_path / "rule.yaml"
    path.write_bytes(b"id: FP8D-X-0001\n" * 10)
    assert bounded.read_bytes(path, 1 << 20) == path.read_bytes()
    assert reads == [160]


def test_an_empty_file(tmp_path: Path, reads: list[int]) -> None:
    path = tmp_path / "empty.yaml"
    path.write_bytes(b"")
    assert bounded.read_bytes(path, 100) == b""
    assert reads == [0]


def test_a_file_of_several_chunks_is_read_whole(tmp_path: Path, reads: list[int]) -> None:
    data = os.urandom(3 * bounded._CHUNK + 17)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert bounded.read_bytes(path, len(data)) == data
    assert reads == [bounded._CHUNK] * 3 + [17]
    with pytest.raises(bounded.TooLarge):
        bounded.read_bytes(path, len(data) - 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc")
def test_a_file_whose_size_says_nothing_is_read_to_its_end(reads: list[int]) -> None:
    assert os.stat("/proc/self/status").st_size == 0
    text = bounded.read_bytes("/proc/self/status", 1 << 20)
    assert b"Name:" in text and text.endswith(b"\n")
    assert reads[-1] == 0      # read until EOF, as before
