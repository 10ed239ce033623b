"""Child processes with a hard timeout that also kills the child's own children.

The one place in fp8-doctor that spawns a child with a timeout (probes, the import probe, the
smoke step, the collectives child all use it). ``subprocess.run(timeout=...)`` kills only the
direct child: a grandchild (a shell wrapper around a hung ``nvidia-smi``, a ``sleep`` in a script,
a compile worker, an NCCL helper) lives on, and with ``communicate`` on pipes it holds them open so
the wait never ends. Here each child leads its own session; on timeout the whole process group
gets SIGKILL and the output is read with a bounded wait, so a hang costs ``timeout`` plus at most
:data:`KILL_GRACE_S`, even when a grandchild left the group (``setsid``) and keeps the pipes.
After a child exits on its own, what it left running in its group is killed too.
Hung ``nvidia-smi`` is a known field problem (NordicHPC/sonar#92, netdata/netdata#18690).

Output read through pipes is bounded while it is read: a reader thread per pipe keeps at most
``max_bytes`` (default :data:`MAX_OUTPUT_BYTES`) and, past it, stops reading and kills the
group, so a child that prints forever costs that much memory and no more (issue 13: an
``nvidia-smi`` printing forever was buffered to 6.7 GB). The result says ``overflowed``.

Every child starts in a private, empty working folder made here (unless the caller names one)
and removed with whatever the child wrote there once it is collected or killed: nothing in the
caller's current folder is on a Python child's ``sys.path`` (issue 21 item 1; the argv and
environment of Python children come from :mod:`preflight.base.isolate`). Children not yet
collected are remembered, so an interrupt kills them all (:func:`kill_all`, called by the entry
points on SIGINT / SIGTERM and before they exit): a hung ``nvidia-smi`` or NVML child in its own
session never sees the terminal's Ctrl-C and would otherwise outlive fp8-doctor.

Process groups are POSIX: where ``os.setsid`` / ``os.killpg`` do not exist (Windows), a child gets
its own process group through ``CREATE_NEW_PROCESS_GROUP`` and a timeout kills the child itself;
:data:`GROUP_KILL` says which of the two this platform gets.

- :func:`run`: start, wait, collect - one child.
- :func:`start` / :func:`collect`: several children in parallel (start all, then collect each;
  every child has its own deadline, counted from its start). :meth:`Child.done` and
  :meth:`Child.expired` let a caller poll several children and collect each as it finishes.
- :func:`abandon`: kill a started child that will not be collected; :func:`kill_all`: all of them.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from preflight.base import isolate
from preflight.base.signals import held
from preflight.base.tempdirs import remove_all, remove_dir, temp_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

# How long the output may take to arrive after the group was killed; past it, something outside
# the group holds the pipes and the output is given up.
KILL_GRACE_S = 2.0
# A child that has already exited may take this long to hand over its output, even past its
# deadline (in a parallel collect the deadline may pass while an earlier child is collected).
EXITED_GRACE_S = 5.0
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
"""Default cap on what is kept of one pipe of one child; past it the child's group is killed."""
_CHUNK = 64 * 1024
GROUP_KILL = hasattr(os, "killpg") and hasattr(os, "setsid")
"""True where a timeout kills the child's whole process group (POSIX), not only the child."""

Output = int | IO[Any]
PIPE = -1
"""``subprocess.PIPE``, the default of :func:`start` (a test holds them equal): subprocess itself
(with locale and selectors, ~3 ms) is imported when a child starts, and a check on a machine
without an NVIDIA driver starts none (issue 26 item 4)."""


@dataclass(frozen=True)
class ProcResult:
    """How a child process ended; ``error`` is set when it could not be started."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""
    seconds: float = 0.0
    overflowed: int = 0   # the cap in bytes when a pipe went past it (the group was killed)
    dropped: int = 0      # bytes not kept from the start of the output (``keep_tail``)

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and not self.timed_out and not self.error
                and not self.overflowed)

    @property
    def overflow_reason(self) -> str:
        return f"killed: output over {self.overflowed:,} bytes" if self.overflowed else ""


class _Capture:
    """Reads one pipe in a daemon thread, keeping at most ``limit`` bytes.

    Past the limit, by default, it calls ``on_overflow`` (which kills the child's group) and
    stops reading, so neither memory nor the time spent reading grows with what the child
    prints. With ``tail`` it keeps reading and keeps only the last ``limit`` bytes (``dropped``
    counts the rest): for a child whose chatter is no fault and whose end says what went wrong.
    """

    def __init__(self, stream: IO[bytes], limit: int, on_overflow: Any, *,
                 tail: bool = False) -> None:
        self.stream = stream
        self.limit = limit
        self.tail = tail
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.dropped = 0
        self.over = False
        self._on_overflow = on_overflow
        self.thread = threading.Thread(target=self._read, name="fp8-doctor-pipe", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        fd = self.stream.fileno()
        try:
            while True:
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    return
                room = self.limit - self.size
                if len(chunk) > room and not self.tail:
                    self._keep(chunk[:room])
                    self.over = True
                    self._on_overflow()
                    return
                self._keep(chunk)
                while self.size > self.limit:  # tail: drop whole chunks, then part of one
                    first = self.chunks.popleft()
                    cut = min(len(first), self.size - self.limit)
                    self.size -= cut
                    self.dropped += cut
                    if cut < len(first):
                        self.chunks.appendleft(first[cut:])
        except (OSError, ValueError):  # the pipe was closed under us
            return

    def _keep(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)

    def text(self) -> str:
        raw = b"".join(self.chunks).decode("utf-8", "replace")
        return raw.replace("\r\n", "\n").replace("\r", "\n")  # as text=True pipes did


@dataclass(frozen=True)
class Child:
    """A started child (from :func:`start`); hand it to :func:`collect` exactly once."""

    argv: tuple[str, ...]
    proc: subprocess.Popen[bytes] | None   # None: it could not be started (see ``error``)
    started: float                         # time.monotonic()
    deadline: float
    error: str = ""
    captures: tuple[_Capture | None, _Capture | None] = (None, None)  # stdout, stderr readers
    workdir: str = ""                      # the private working folder made for it ("" none)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def done(self) -> bool:
        """True once the child has exited (or never started); never blocks."""
        return self.proc is None or self.proc.poll() is not None

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL ``proc``'s process group (it leads its own session); at least ``proc`` itself.

    Without ``os.killpg`` (Windows) only the child itself can be killed.
    """
    killpg = getattr(os, "killpg", None)
    if killpg is not None and GROUP_KILL:
        try:
            killpg(proc.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()  # a no-op once proc has been reaped
    except OSError:
        pass


_LIVE: dict[int, Child] = {}     # started and not yet collected, by pid
_LIVE_LOCK = threading.Lock()


def _forget(child: Child) -> None:
    if child.proc is not None:
        with _LIVE_LOCK:
            _LIVE.pop(child.proc.pid, None)


def abandon(child: Child) -> None:
    """Kill a started child's group, reap it and remove its working folder; never raises."""
    _forget(child)
    if child.proc is not None:
        kill_group(child.proc)
        try:
            child.proc.wait(timeout=KILL_GRACE_S)
        except BaseException:  # noqa: BLE001 - unkillable (D state) or a second Ctrl-C
            pass
        _close_pipes(child.proc)
    remove_dir(child.workdir)


def kill_all() -> int:
    """Kill every child started and not yet collected (their whole process groups) and remove
    their working folders; returns how many there were. For interrupts and the last moment
    before an entry point exits: nothing fp8-doctor started outlives it."""
    with _LIVE_LOCK:
        live = list(_LIVE.values())
    for child in live:
        if child.proc is not None:
            kill_group(child.proc)
    for child in live:
        abandon(child)
    remove_all()   # folders whose maker was interrupted before it could say whose they are
    return len(live)


def _session_kwargs() -> dict[str, Any]:
    """How to start a child in its own process group on this platform."""
    if GROUP_KILL:
        return {"start_new_session": True}
    if sys.platform == "win32":  # pragma: no cover - CI runs Linux; tested by simulation
        import subprocess

        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    return {}


def start(argv: Sequence[str], timeout: float, *, env: Mapping[str, str] | None = None,
          cwd: str | None = None, stdout: Output = PIPE,
          stderr: Output = PIPE, max_bytes: int = MAX_OUTPUT_BYTES,
          keep_tail: bool = False) -> Child:
    """Start ``argv`` in its own session; never raises (a failed start is ``Child.error``).

    ``cwd=None`` (what every caller in fp8-doctor uses) gives the child a private, empty working
    folder, removed when it is collected. ``env=None`` inherits this process's environment; an
    explicit mapping, even an empty one, is the child's whole environment. ``stdout`` / ``stderr`` may be open files instead of pipes
    (then the result's text is empty), or ``subprocess.STDOUT`` for stderr. Each pipe is read as
    the child writes it, keeping at most ``max_bytes``; past that the child's group is killed,
    or with ``keep_tail`` the child goes on and only the last ``max_bytes`` are kept.
    """
    import subprocess

    now = time.monotonic()
    args = tuple(str(a) for a in argv)
    # no library from the job on the loader's path (LD_LIBRARY_PATH / LD_PRELOAD, issue 21)
    env = isolate.loader_env(os.environ if env is None else env) or env
    workdir = ""
    with held():   # no interrupt between the folder, the child and recording them
        if cwd is None:
            workdir = temp_dir() or ""
            cwd = workdir or ("/" if os.name == "posix" else None)
        try:
            proc = subprocess.Popen(
                list(args), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                env=dict(env) if env is not None else None, cwd=cwd, **_session_kwargs())
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in argv or env
            remove_dir(workdir)
            why = getattr(exc, "strerror", None) or exc
            return Child(args, None, now, now, error=f"{args[0]}: {why}")
        with _LIVE_LOCK:
            _LIVE[proc.pid] = _bare_child(proc, workdir)   # replaced by the Child below

    def overflow() -> None:
        kill_group(proc)

    captures = tuple(_Capture(pipe, max_bytes, overflow, tail=keep_tail)
                     if pipe is not None else None for pipe in (proc.stdout, proc.stderr))
    child = Child(args, proc, now, now + timeout, captures=(captures[0], captures[1]),
                  workdir=workdir)
    with _LIVE_LOCK:
        _LIVE[proc.pid] = child
    return child


def _bare_child(proc: subprocess.Popen[bytes], workdir: str) -> Child:
    """The record of a child between its start and its :class:`Child` (no readers yet)."""
    return Child((), proc, 0.0, 0.0, workdir=workdir)


def collect(child: Child) -> ProcResult:
    """Wait for ``child`` until its deadline, then kill its group; never raises.

    Whatever the child left running in its group is killed as well, so nothing it started
    outlives this call.
    """
    proc = child.proc
    if proc is None:
        return ProcResult(None, "", "", error=child.error)
    try:
        return _collect(child, proc)
    except BaseException:   # Ctrl-C / SIGTERM while waiting: the child must not outlive us
        abandon(child)
        raise


def _collect(child: Child, proc: subprocess.Popen[bytes]) -> ProcResult:
    import subprocess  # loaded: the child was started

    remaining = child.deadline - time.monotonic()
    if proc.poll() is not None:
        remaining = max(remaining, EXITED_GRACE_S)
    timed_out = False
    readers = [c for c in child.captures if c is not None]
    end = time.monotonic() + max(remaining, 0.01)
    try:
        proc.wait(timeout=max(remaining, 0.01))
        # It exited; its output must reach EOF by the same deadline. A grandchild in its group
        # that still holds the pipes makes it a timeout, as it did with communicate().
        for reader in readers:
            reader.thread.join(max(end - time.monotonic(), 0.01))
        timed_out = any(r.thread.is_alive() for r in readers)
    except subprocess.TimeoutExpired:
        timed_out = True
    kill_group(proc)  # on timeout; and leftovers of a finished child
    for reader in readers:
        # After the kill the output arrives within the grace, unless something outside the
        # group (it called setsid) holds the pipe: then the rest of the output is given up.
        reader.thread.join(KILL_GRACE_S)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:  # pragma: no cover - an unkillable (D-state) child
        pass
    if not any(r.thread.is_alive() for r in readers):
        _close_pipes(proc)
    _forget(child)
    remove_dir(child.workdir)
    out, err = child.captures
    over = [c.limit for c in readers if c.over]
    return ProcResult(proc.returncode, out.text() if out else "", err.text() if err else "",
                      timed_out=timed_out and not over, seconds=time.monotonic() - child.started,
                      overflowed=over[0] if over else 0, dropped=sum(c.dropped for c in readers))


def _close_pipes(proc: subprocess.Popen[Any]) -> None:
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def run(argv: Sequence[str], timeout: float, *, env: Mapping[str, str] | None = None,
        cwd: str | None = None, max_bytes: int = MAX_OUTPUT_BYTES) -> ProcResult:
    """Run ``argv``; never raises, never waits longer than ``timeout`` plus the kill grace,
    never keeps more than ``max_bytes`` of either pipe."""
    return collect(start(argv, timeout, env=env, cwd=cwd, max_bytes=max_bytes))


# An unindented "pkg.module.SomeError: message" line: the last one is the exception that ended it.
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:?")
_ERRORISH = ("Error", "error", "Fatal", "Abort")


def error_line(text: str, limit: int) -> str:
    """The one line of a child's stderr (or an exception's text) that says what went wrong.

    The last ``SomeError: message`` line (a Python traceback ends with it), else the last line
    that mentions an error, a fatal signal or an abort (``Fatal Python error: Segmentation
    fault``), else the last non-empty line; whitespace collapsed, cut at ``limit`` characters.
    """
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    line = next((ln for ln in reversed(lines) if _EXC_LINE.match(ln)), None) or next(
        (ln for ln in reversed(lines) if any(w in ln for w in _ERRORISH)), lines[-1])
    return line if len(line) <= limit else line[: limit - 1] + "…"
