"""Where a report goes: ``-o FILE`` (guarded, atomic) or stdout (closed, full or broken pipes).

fp8-doctor only reads: the one file it writes is the one named with ``-o``, and never one of its
inputs (issue 13, item 1: ``check job/ds.json -o job/ds.json`` used to replace the DeepSpeed
config with the report). So, before anything runs:

- :func:`refuse_input_as_output` compares ``-o`` with every input by identity (``os.path.samefile``:
  device and inode, so a symlink or a hard link to an input is caught as well as the same
  spelling): config files, files the folder scan would read in a given folder, a snapshot being
  replayed, rule files and files in rule folders.

and when writing:

- :func:`write_report` writes ``-o`` through a temporary file in the same folder, renamed into
  place (``os.replace`` is atomic on POSIX), so an interrupted or failed run never leaves half a
  report, and a symlinked ``-o`` is followed (the link stays a link). A target that is not a
  regular file (``/dev/stdout``, ``/dev/null``, a pipe) cannot be renamed over and is written
  in place.
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
                           snapshot: str | None = None, rules: Sequence[str] = ()) -> None:
    """Raise :class:`OutputError` when ``output`` is (a link to) one of the inputs.

    Nothing is compared when ``output`` does not exist yet: a new file cannot be an input.
    """
    if not output or not os.path.lexists(output):
        return
    if os.path.isdir(output):
        raise OutputError(f"-o {output}: is a folder, not a file")
    candidates: list[tuple[str, str]] = []
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
            raise OutputError(f"-o {output} is {what}{shown}; fp8-doctor never writes over its "
                              "inputs: choose another file")


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)   # replacing a file keeps its mode
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask                           # what open(target, "w") would give


def write_atomic(output: str, data: str) -> None:
    """Write ``data`` to ``output`` via a temporary file renamed into place.

    Raises :class:`OutputError` naming the file on any OS error; the temporary file is removed
    on every failure, including KeyboardInterrupt.
    """
    target = os.path.realpath(output)   # follow a symlink: the link itself stays
    try:
        st = os.stat(target)
    except OSError:
        st = None
    encoded = data.encode("utf-8", "surrogateescape")
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            # /dev/stdout, /dev/null, a FIFO: nothing to rename over; written in place.
            with open(target, "wb") as fh:
                fh.write(encoded)
            return
        import tempfile  # only when writing a file: ~5 ms of every check's start-up otherwise

        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                   suffix=".fp8-doctor.tmp", dir=os.path.dirname(target) or ".")
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(encoded)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
        raise


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
    refuse_input_as_output(output, configs=configs, snapshot=getattr(args, "snapshot", None),
                           rules=rules)
    if getattr(args, "chart", None):      # speedup --chart is a second output: same rule
        refuse_input_as_output(args.chart, configs=configs + [output or ""],
                               snapshot=getattr(args, "snapshot", None), rules=rules)
