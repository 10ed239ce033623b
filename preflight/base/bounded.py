"""Reading files we do not control: regular files only, never more than a given number of bytes.

Issue 13 item 2: a package's ``METADATA`` that was a symlink to ``/dev/zero`` was read whole (the
run reached the OOM killer at 24 GB) and one that was a FIFO hung the run forever; a FIFO in a rule
folder hung ``rules lint``. Here a path is opened with ``O_NONBLOCK`` (opening a FIFO without a
writer then returns at once instead of waiting for one), checked with ``fstat`` on the open file
(no window between the check and the read), refused unless it is a regular file, and read in
chunks up to ``limit`` bytes, or only up to the end of a header when ``stop`` is given.

Used by the packages probe, the rule loader, snapshots, baselines and the config reader
(``reading/parse.py``). Every file read is remembered by identity (:func:`files_read`): the outputs
(``-o``, ``--write-baseline``) are never written over anything this run read, whoever read it
(issue 21 item 3: the ``pyproject.toml`` read for ``[tool.fp8-doctor]``, a DeepSpeed JSON a YAML
names, a sourced script, a rule file of a pack, the baseline itself).
"""

from __future__ import annotations

import os
import stat

_CHUNK = 64 * 1024
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


_READ: set[tuple[int, int, int]] = set()


def files_read() -> frozenset[tuple[int, int, int]]:
    """``(device, inode, ctime_ns)`` of every file read since :func:`forget_reads`."""
    return frozenset(_READ)


def identity(st: os.stat_result) -> tuple[int, int, int]:
    """What :func:`files_read` compares: the file, not its name (a hard link or another
    spelling is the same file; ``ctime`` tells a new file that reuses a deleted one's inode)."""
    return st.st_dev, st.st_ino, st.st_ctime_ns


def forget_reads() -> None:
    """Start a new run's record (the CLI does it as each command starts)."""
    _READ.clear()


class NotRegularFile(OSError):
    """The path names something other than a regular file (after following symlinks)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind


class TooLarge(OSError):
    """The file is longer than the reader's limit (only raised when ``partial`` is False)."""


def kind_of(mode: int) -> str:
    """What a non-regular ``st_mode`` is, in words."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: str | os.PathLike[str], limit: int, *, stop: bytes | None = None,
               partial: bool = False) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``.

    ``stop``: stop reading once this byte string has been read (a header's end); the result then
    ends at it. Past ``limit`` without ``stop`` found: :class:`TooLarge`, unless ``partial``,
    which returns the first ``limit`` bytes. Raises :class:`NotRegularFile` for a FIFO, device,
    socket or folder (the open never blocks and the file is not read), and ``OSError`` as ``open``
    does.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | \
        getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        before = os.stat(name).st_mode
    except ValueError as exc:  # a NUL byte in the path
        raise FileNotFoundError(str(exc)) from None
    if not stat.S_ISREG(before):
        # Refused before the open: opening some devices has effects of its own (a tape rewinds).
        raise NotRegularFile(name, kind_of(before))
    fd = os.open(name, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the stat and the open
            raise NotRegularFile(name, kind_of(st.st_mode))
        _READ.add(identity(st))
        buf = bytearray()
        while len(buf) <= limit:
            want = min(_CHUNK, limit + 1 - len(buf))
            chunk = os.read(fd, want)
            if not chunk:
                break
            start = max(len(buf) - len(stop) + 1, 0) if stop else 0
            buf += chunk
            if stop:
                at = buf.find(stop, start, limit)
                if at >= 0:
                    return bytes(buf[: at + len(stop)])
            if len(chunk) < want and len(buf) == st.st_size:
                # A short read that reached the size fstat gave: the end, without one more read
                # to see it (a check reads ~300 files, the rules against their index; issue 26
                # item 4). Where the size is no guide (/proc reports 0), the loop reads on to EOF.
                break
    finally:
        os.close(fd)
    if len(buf) > limit:
        if not partial:
            raise TooLarge(f"{name} is over the {limit:,}-byte limit for this file")
        del buf[limit:]
    return bytes(buf)
