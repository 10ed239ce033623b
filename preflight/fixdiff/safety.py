"""The write boundary of ``check --diff`` (issue 21, items 3 and 5): what a diff may name and show.

``fp8-doctor check job/ --diff | git apply`` runs on repositories the user did not write, so the
diff is an output a stranger can shape. Three holes were found in it (issue 21): a folder name
with a newline put a ``+++``/``new mode`` line of the attacker's choosing into the patch (``git
apply`` and ``patch -p1`` then patched and ``chmod +x``-ed a script outside the job); a tab cut
the name short for ``patch`` (another file was patched); a snapshot with hostile provenance made
``--diff`` read and print lines of ``~/.docker/config.json``. The rules here close them:

- a file is named in a header only when it was read in this run (``config.files``, from the
  paths the user named, never a snapshot's provenance), lies inside a job root the user named
  and inside the working directory (the patch is applied from there), by real path, so a
  symlink out of the job does not count;
- its relative name is written as is, never quoted: a name with a control character (newline,
  tab, escape ...), a backslash or a double quote (which ``git apply`` reads as C-quoting), an
  empty, ``.`` or ``..`` part, or a ``.git`` part is refused with the reason;
- the file is opened without following a final symlink, without blocking (a FIFO), must be a
  regular UTF-8 text file of at most :data:`MAX_BYTES` without NUL bytes (``git apply`` would
  take it for binary);
- every ``#`` line above the diff is one line with control characters escaped
  (:func:`comment`), so text from a rule pack or a config cannot break out of the comment.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterable

MAX_BYTES = 1 << 20
"""A config file larger than this is not edited (the readers stop at the same size)."""
MAX_LINE = 4096
"""The longest line an edit looks at: line regexes on 100 KB of spaces took 20-120 s (issue 21,
item 6); no config line a fix touches comes near this."""


class Refused(ValueError):
    """A file ``--diff`` will not name or show, with the reason."""


def escape(text: str) -> str:
    """``text`` with every control / format / separator character written as ``\\xNN`` /
    ``\\uNNNN`` (so it stays one line and shows what it is)."""
    out = []
    for ch in text:
        if unicodedata.category(ch)[0] in "CZ" and ch != " ":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100
                       else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def plain(line: str) -> bool:
    """Whether a diff line (ending in ``\\n``, ``\\r\\n`` or nothing) has no control, format
    or separator character but tabs: a terminal shows it as it is and ``git apply`` applies."""
    body = line[:-2] if line.endswith("\r\n") else line.rstrip("\n")
    return all(ch == "\t" or unicodedata.category(ch)[0] not in "CZ" or ch == " "
               for ch in body)


def comment(text: str) -> str:
    """Text for ``#`` lines: whitespace runs (newlines too) folded to one space, then what is
    left of control characters escaped (see :func:`escape`)."""
    return escape(" ".join(text.split()))


def _unsafe_part(part: str) -> str | None:
    if part in ("", ".", ".."):
        return f"a path part {part!r}"
    if part.lower() == ".git":
        return "a .git folder"
    for ch in part:
        if ch in "\\\"":
            return f"the character {ch!r} (git reads it as quoting)"
        if not ch.isprintable() or unicodedata.category(ch)[0] == "Z" and ch != " ":
            return f"the control character U+{ord(ch):04X}"
    if part != part.strip(" "):
        return "a space at the start or end of a name"
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def header_name(path: str, cwd: str, roots: Iterable[str], read: Iterable[str]) -> str:
    """The name ``path`` gets in the diff (relative to ``cwd``, ``/``-separated), or
    :class:`Refused` with the reason. ``roots``: the job folders the user named (a named file's
    folder); ``read``: the files this run read."""
    real = os.path.realpath(path)
    if real not in {os.path.realpath(p) for p in read}:
        raise Refused("not a file this run read (a snapshot's provenance is not a file to edit)")
    real_roots = [os.path.realpath(r) for r in roots]
    if not any(_inside(real, r) for r in real_roots):
        raise Refused("outside the job folder you named")
    base = os.path.realpath(cwd)
    rel = os.path.relpath(real, base)
    if os.path.isabs(rel) or rel.split(os.sep)[0] == ".." or rel == ".":
        raise Refused("outside the current folder, from which the patch is applied (run "
                      "--diff from the job's folder or a folder above it)")
    parts = rel.split(os.sep)
    for part in parts:
        why = _unsafe_part(part)
        if why:
            raise Refused(f"its name holds {why}: never written into a patch")
    # Built from real paths, the name has no symlink on the way from cwd: git refuses to patch
    # "beyond a symbolic link", and patch would follow one out of the job.
    return "/".join(parts)


def read_text(path: str) -> str:
    """The file's text, read without following a final symlink or blocking on a FIFO; only a
    regular UTF-8 text file of at most :data:`MAX_BYTES` (else :class:`Refused`)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("a symbolic link") from None
        raise Refused(f"cannot open it ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > MAX_BYTES:
            raise Refused(f"larger than {MAX_BYTES // 1024} KB")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_BYTES:
        raise Refused(f"larger than {MAX_BYTES // 1024} KB")
    if b"\0" in data:
        raise Refused("holds NUL bytes (git apply would take it for a binary file)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"not UTF-8 text (byte {exc.start})") from None
