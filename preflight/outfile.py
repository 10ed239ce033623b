"""Where a report goes: ``-o FILE`` (guarded, atomic) or stdout (closed, full or broken pipes).

fp8-doctor only reads: the one file it writes is the one named with ``-o``, and never one of its
inputs (issue 13, item 1: ``check job/ds.json -o job/ds.json`` used to replace the DeepSpeed
config with the report). So, before anything runs:

- :func:`refuse_input_as_output` compares ``-o`` with every input by identity (``os.path.samefile``:
  device and inode, so a symlink or a hard link to an input is caught as well as the same
  spelling): config files, files the folder scan would read in a given folder, a snapshot being
  replayed, rule files and files in rule folders.

and when writing (issue 21 item 3, the write boundary):

- :func:`write_report` writes ``-o`` through a temporary file in the same folder, renamed into
  place (``os.replace`` is atomic on POSIX), so an interrupted or failed run never leaves half a
  report. Only a regular file is written: a symbolic link is refused, never followed (a pull
  request shipping the Action's ``fp8-doctor.sarif`` as a link replaced a dotfile), and so is a
  FIFO (the write blocked), a device or a folder; and never a file this run read, compared by
  identity with every file read through :mod:`preflight.base.bounded` (the pyproject.toml
  read for ``[tool.fp8-doctor]``, a DeepSpeed JSON a YAML names, a sourced script, a pack's
  rule file, the baseline, the snapshot), checked again just before the rename.
  ``--write-baseline`` goes through the same :func:`write_atomic`.
- stdout that is closed, full (``/dev/full``) or gone (``| head``) ends with a one-line error
  and exit 2 (the report could not be delivered, like an unwritable ``-o``), never a traceback.

:func:`guard_std_streams` runs first of all: a closed stdin/stdout/stderr is re-opened on
``/dev/null`` so that no file we open later takes descriptor 1 or 2 (a progress line would land
in the report, a child's stderr in the user's file), and progress never falls back to stdout
(``print(file=None)`` writes to stdout: with stderr closed, progress corrupted the JSON).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from preflight.errors import UserInputError

STDIO = {0: "stdin", 1: "stdout", 2: "stderr"}


class OutputError(UserInputError):
    """The report cannot go where it was asked to (``-o`` names an input, or is unwritable,
    or stdout is closed or full); exit code 2."""


def guard_std_streams() -> frozenset[str]:
    """Re-open closed standard descriptors on ``/dev/null``; return the names of those closed.

    Idempotent. ``sys.stdout`` / ``sys.stderr`` that Python set to None (the descriptor was
    closed at start-up) become ``/dev/null`` writers, so argparse's ``--help`` and every progress
    ``print`` have somewhere harmless to go.
    """
    closed: set[str] = set()
    for fd, name in STDIO.items():
        try:
            os.fstat(fd)
        except OSError:
            closed.add(name)
            devnull = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            closed.add(name)
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    return frozenset(closed)


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


# Every suffix the config reader's folder scan reads, and more (a superset refuses more, never
# less), down to a depth past the scan's: self-contained, so that a change in the reader's
# private scan (or its module moving) cannot silently switch this protection off.
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".sh", ".bash", ".args", ".slurm",
                    ".sbatch", ".txt", ".cfg", ".ini", ".conf", ".py")
_FOLDER_DEPTH = 7            # the reader scans 6 levels (jobs/scan.py SCAN_DEPTH)
_FOLDER_MAX_ENTRIES = 20_000   # a job folder holds tens of files; never walk a whole disk


def _folder_files(folder: str) -> list[str]:
    """Files in ``folder`` the config reader could read (see :data:`_CONFIG_SUFFIXES`)."""
    found: list[str] = []
    seen = 0
    for root, dirs, files in os.walk(folder):   # errors (an unreadable subfolder) are skipped
        depth = os.path.relpath(root, folder).count(os.sep) + (root != folder)
        if depth >= _FOLDER_DEPTH:
            dirs[:] = []
        seen += len(files) + len(dirs)
        found += [os.path.join(root, f) for f in files if f.lower().endswith(_CONFIG_SUFFIXES)]
        if seen > _FOLDER_MAX_ENTRIES:
            break
    return found


def _rule_files(path: str) -> Iterable[str]:
    if not os.path.isdir(path):
        return [path]
    out: list[str] = []
    for root, _dirs, files in os.walk(path):
        out.extend(os.path.join(root, f) for f in files)
        if len(out) > 10_000:  # a rule folder is tens of files; do not walk a whole disk
            break
    return out


def refuse_input_as_output(output: str | None, *, configs: Sequence[str] = (),
                           snapshot: str | None = None, rules: Sequence[str] = (),
                           flag: str = "-o", others: Sequence[tuple[str, str]] = ()) -> None:
    """Raise :class:`OutputError` when ``output`` is (a link to) one of the inputs, or is
    anything but a regular file (:func:`_target`: a symbolic link, a FIFO, a folder).

    Nothing is compared when ``output`` does not exist yet: a new file cannot be an input.
    """
    if not output or _target(output, flag) is None:
        return
    candidates: list[tuple[str, str]] = list(others)
    for path in configs:
        files = _folder_files(path) if os.path.isdir(path) else [path]
        candidates += [(f, "a config file this run reads") for f in files]
    if snapshot:
        candidates.append((snapshot, "the snapshot being replayed"))
    for path in rules:
        candidates += [(f, "a rule file this run loads") for f in _rule_files(path)]
    for path, what in candidates:
        if _same(output, path):
            shown = "" if os.path.normpath(path) == os.path.normpath(output) else f" ({path})"
            raise OutputError(f"{flag} {output} is {what}{shown}; fp8-doctor never writes over "
                              "its inputs: choose another file")


def _target(output: str, flag: str) -> os.stat_result | None:
    """The state of the file ``output`` names, or None when there is none; raises
    :class:`OutputError` for anything fp8-doctor must not write: a symbolic link (never
    followed: a pull request that ships ``fp8-doctor.sarif`` as a link to a dotfile had the
    Action replace the dotfile), a folder, a FIFO or device (a FIFO blocks the write until a
    reader comes), or a file this run read (by identity, :func:`bounded.files_read`)."""
    from preflight.base import bounded

    _no_linked_folder(output, flag)
    try:
        st = os.lstat(output)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(f"cannot write {output}: {why}") from None
    if stat.S_ISLNK(st.st_mode):
        try:
            to = f" (to {os.readlink(output)})"
        except OSError:
            to = ""
        raise OutputError(f"{flag} {output} is a symbolic link{to}; fp8-doctor never writes "
                          "through a symbolic link: remove it or choose another file")
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{flag} {output}: is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"{flag} {output} is {bounded.kind_of(st.st_mode)}, not a regular "
                          "file; fp8-doctor writes only regular files (use the shell's > for "
                          "anything else)")
    if bounded.identity(st) in bounded.files_read():
        raise OutputError(f"{flag} {output} is a file this run read; fp8-doctor never writes "
                          "over its inputs: choose another file")
    return st


def check_target(output: str, flag: str = "-o") -> None:
    """Raise :class:`OutputError` now when ``output`` is nothing fp8-doctor may write (see
    :func:`_target`); for an output decided late (``--chart``), checked before the work."""
    _target(output, flag)


def _no_linked_folder(output: str, flag: str) -> None:
    """Refuse a relative ``output`` whose folders (below the current one) hold a symbolic link.

    Those folders are what a checked-out repository controls: red team, a pull request that
    ships ``reports`` as a link to ``~/.ssh`` turned a workflow's ``-o reports/x`` into a write
    there (the last component was never followed, the folders were). An absolute path, and
    the folders above the current one, are the user's own choice."""
    if os.path.isabs(output):
        return
    parts = os.path.normpath(output).split(os.sep)[:-1]
    here = ""
    for part in parts:
        if part in ("", ".", ".."):
            here = os.path.join(here, part) if part else here
            continue
        here = os.path.join(here, part)
        if os.path.islink(here):
            raise OutputError(f"{flag} {output}: its folder {here} is a symbolic link (to "
                              f"{os.readlink(here)}); fp8-doctor never writes through a "
                              "symbolic link: name the real folder")


def write_atomic(output: str, data: str | bytes, *, flag: str = "-o") -> None:
    """Write ``data`` to the regular file ``output`` via a temporary file renamed into place.

    ``data``: text (written as UTF-8) or bytes (``--chart``'s PNG).
    Refused (:class:`OutputError`, exit 2) before anything is written, and checked again just
    before the rename, by :func:`_target`: a symbolic link, anything not a regular file, a file
    this run read. The rename replaces the name itself, so a link planted in between is replaced,
    not followed. A replaced file keeps its mode. Raises :class:`OutputError` naming the file on
    any OS error; the temporary file is removed on every failure, including KeyboardInterrupt.
    """
    st = _target(output, flag)
    encoded = data if isinstance(data, bytes) else _encode(data)
    try:
        import tempfile  # only when writing a file: ~5 ms of every check's start-up otherwise

        # mkstemp opens O_CREAT | O_EXCL: never an existing file, never through a link
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.",
                                   suffix=".fp8-doctor.tmp", dir=os.path.dirname(output) or ".")
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(encoded)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), _mode_for(st))
        _target(output, flag)
        os.replace(tmp, output)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
        raise


def _encode(data: str) -> bytes:
    """UTF-8; a lone surrogate that is no escaped byte (``"\\ud800"`` from a JSON config) is
    written as its escape rather than failing the write (an internal error, red team)."""
    try:
        return data.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return data.encode("utf-8", "backslashreplace")


def _mode_for(st: os.stat_result | None) -> int:
    if st is not None:
        return stat.S_IMODE(st.st_mode)                 # replacing a file keeps its mode
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask                               # what open(target, "w") would give


def _silence_stdout() -> None:
    """Point descriptor 1 at /dev/null, so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_stdout(data: str, *, closed: bool = False) -> None:
    """Write the report to stdout. A reader that went away (``| head``) is not an error: the
    exit code still stands. A closed or full stdout raises :class:`OutputError`."""
    if closed:
        raise OutputError("stdout is closed: the report has nowhere to go (use -o FILE)")
    try:
        try:
            sys.stdout.write(data)
        except UnicodeEncodeError:
            # A terminal that cannot show the check marks still gets the report.
            sys.stdout.flush()
            sys.stdout.buffer.write(data.encode(sys.stdout.encoding or "utf-8", "replace"))
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except (OSError, ValueError) as exc:
        # ENOSPC (/dev/full), EBADF, EIO, or a closed file object (ValueError).
        _silence_stdout()
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(f"cannot write the report to stdout: {why}") from None


def write_report(text: str, output: str | None, *, stdout_closed: bool = False) -> None:
    """The report, ending with a newline, to ``output`` (atomic) or stdout."""
    data = text if text.endswith("\n") else text + "\n"
    if output:
        write_atomic(output, data)
    else:
        write_stdout(data, closed=stdout_closed)


def guard_output(args: Any, *, stdout_closed: bool) -> None:
    """Refuse, before anything runs, an ``-o`` that names an input or a closed stdout."""
    from preflight.base import bounded

    bounded.forget_reads()      # a new run: what it reads from here on is its inputs
    output = getattr(args, "output", None)
    if not output and stdout_closed:
        raise OutputError("stdout is closed: the report has nowhere to go (use -o FILE)")
    configs = list(getattr(args, "paths", None) or ())
    configs += [p for p in (getattr(args, "model_config", None),) if p]
    rules = list(getattr(args, "rules", None) or ())
    if args.command == "rules":
        rules += configs   # `rules lint PATH`: the positional paths are rule files
        configs = []
    elif args.command in ("check", "report", "snapshot") and not configs \
            and not getattr(args, "snapshot", None):
        from preflight.jobs.defaults import default_paths

        configs = default_paths()   # accelerate's default config, read when no path is given
    snapshot = getattr(args, "snapshot", None)
    refuse_input_as_output(output, configs=configs, snapshot=snapshot, rules=rules)
    # second outputs: the same rule (files found while the run reads, such as a pyproject.toml
    # or a linked DeepSpeed JSON, are caught by write_atomic itself)
    for flag, extra in (("--chart", getattr(args, "chart", None)),
                        ("--write-baseline", getattr(args, "write_baseline", None))):
        if extra:
            if output and (os.path.abspath(extra) == os.path.abspath(output)
                           or _same(extra, output)):
                # one file, two writers: the second replaced the first (a new file is no
                # input yet, so the identity check below cannot see it)
                raise OutputError(f"{flag} and -o name the same file ({extra})")
            others = [(p, what) for p, what in ((output, "the report's -o"), (
                getattr(args, "baseline", None), "the baseline this run reads")) if p]
            refuse_input_as_output(extra, configs=configs, snapshot=snapshot, rules=rules,
                                   flag=flag, others=others)
