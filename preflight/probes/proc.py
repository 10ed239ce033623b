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

- :func:`run`: start, wait, collect - one child.
- :func:`start` / :func:`collect`: several children in parallel (start all, then collect each;
  every child has its own deadline, counted from its start). :meth:`Child.done` and
  :meth:`Child.expired` let a caller poll several children and collect each as it finishes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

# How long the output may take to arrive after the group was killed; past it, something outside
# the group holds the pipes and the output is given up.
KILL_GRACE_S = 2.0
# A child that has already exited may take this long to hand over its output, even past its
# deadline (in a parallel collect the deadline may pass while an earlier child is collected).
EXITED_GRACE_S = 5.0

Output = int | IO[Any]


@dataclass(frozen=True)
class ProcResult:
    """How a child process ended; ``error`` is set when it could not be started."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.error


@dataclass(frozen=True)
class Child:
    """A started child (from :func:`start`); hand it to :func:`collect` exactly once."""

    argv: tuple[str, ...]
    proc: subprocess.Popen[str] | None   # None: it could not be started (see ``error``)
    started: float                       # time.monotonic()
    deadline: float
    error: str = ""

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def done(self) -> bool:
        """True once the child has exited (or never started); never blocks."""
        return self.proc is None or self.proc.poll() is not None

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL ``proc``'s process group (it leads its own session); at least ``proc`` itself."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()  # a no-op once proc has been reaped


def start(argv: Sequence[str], timeout: float, *, env: Mapping[str, str] | None = None,
          cwd: str | None = None, stdout: Output = subprocess.PIPE,
          stderr: Output = subprocess.PIPE) -> Child:
    """Start ``argv`` in its own session; never raises (a failed start is ``Child.error``).

    ``env=None`` inherits this process's environment; an explicit mapping, even an empty one, is
    the child's whole environment. ``stdout`` / ``stderr`` may be open files instead of pipes
    (then the result's text is empty).
    """
    now = time.monotonic()
    args = tuple(str(a) for a in argv)
    try:
        proc = subprocess.Popen(
            list(args), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, text=True,
            errors="replace", env=dict(env) if env is not None else None, cwd=cwd,
            start_new_session=True)
    except OSError as exc:
        return Child(args, None, now, now, error=f"{args[0]}: {exc.strerror or exc}")
    return Child(args, proc, now, now + timeout)


def _close_pipes(proc: subprocess.Popen[Any]) -> None:
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def collect(child: Child) -> ProcResult:
    """Wait for ``child`` until its deadline, then kill its group; never raises.

    Whatever the child left running in its group is killed as well, so nothing it started
    outlives this call.
    """
    proc = child.proc
    if proc is None:
        return ProcResult(None, "", "", error=child.error)
    remaining = child.deadline - time.monotonic()
    if proc.poll() is not None:
        remaining = max(remaining, EXITED_GRACE_S)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=max(remaining, 0.01))
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc)
        try:
            out, err = proc.communicate(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            # Something outside the group (it called setsid) still holds the pipes: give up on
            # the output rather than wait for it.
            out, err = "", ""
            _close_pipes(proc)
            try:
                proc.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:  # pragma: no cover - an unkillable (D-state) child
                pass
    else:
        kill_group(proc)  # leftovers of a finished child
    return ProcResult(proc.returncode, out or "", err or "", timed_out=timed_out,
                      seconds=time.monotonic() - child.started)


def run(argv: Sequence[str], timeout: float, *, env: Mapping[str, str] | None = None,
        cwd: str | None = None) -> ProcResult:
    """Run ``argv``; never raises, never waits longer than ``timeout`` plus the kill grace."""
    return collect(start(argv, timeout, env=env, cwd=cwd))


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
