"""Run the smoke child(ren) with a timeout and read their JSON back; never raises, never hangs.

Children are started and collected with :mod:`preflight.base.proc`: each gets its own process
group, so a timeout kills it *and* anything it started (compile workers, a stuck NCCL helper), and
a child that finished leaves nothing running. Its stdout and stderr go to one pipe read as it is
written (a chatty child never blocks on a full pipe), of which only the last
:data:`OUTPUT_TAIL_BYTES` are kept: a flooding child costs neither disk (issue 13: 4.3 GB written
to the temp folder in 10 s) nor memory, and is ended by its timeout like a hang; a merely verbose
one (``TORCH_LOGS=+dynamo``) is not failed for it. The result file is read up to
:data:`RESULT_MAX_BYTES`. A child that dies or is killed leaves the results of
the stages it finished; the stage it was in names the place of the crash or hang.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.base import isolate, proc
from preflight.smoke.cache import Launch

Progress = Callable[[str], None]
OUTPUT_TAIL_BYTES = 1024 * 1024
"""What is kept of a smoke child's stdout + stderr: its end, where the error is."""
RESULT_MAX_BYTES = 16 * 1024 * 1024
"""The longest result document read back (a few KiB in practice)."""


@dataclass(frozen=True)
class ChildRun:
    """How one child ended: its result document (possibly partial) and what went wrong."""

    doc: dict[str, Any]
    status: str            # ok | timeout | crash
    error: str | None
    returncode: int | None
    seconds: float
    stderr_tail: str = ""
    device: str = ""


@dataclass(frozen=True)
class _Live:
    child: proc.Child
    workdir: str
    device: str
    part: str | None = None


def _spawn(request: dict[str, Any] | None, timeout: float, command: Sequence[str] | None,
           env: Mapping[str, str] | None, *, part: str | None = None,
           launch: Launch | None = None) -> _Live | ChildRun:
    """Start one child. ``request`` None: it starts now and waits for :func:`send` (``--wait``);
    ``part``: one part of the step (child.py); ``launch``: its interpreter flags and
    environment for the bytecode cache (``cache.launch``)."""
    # proc.temp_dir: recorded before it exists, so an interrupt anywhere cannot leave it behind
    workdir = proc.temp_dir("fp8-doctor-smoke-")
    if workdir is None:
        raise OSError("no temporary folder could be made for the smoke child")
    req_path = os.path.join(workdir, "request.json")
    if request is not None:
        try:
            with open(req_path, "w", encoding="utf-8") as fh:
                json.dump(request, fh)
        except BaseException:
            _cleanup(workdir)
            raise
    # isolate: nothing from the job or the cwd importable, ``preflight`` itself found (issue 21)
    launch = launch or Launch()
    python = isolate.python_argv(*launch.flags)
    argv = list(command or (*python, "-m", "preflight.smoke.child"))
    argv += [req_path, os.path.join(workdir, "result.json")]
    argv += (["--part", part] if part else []) + (["--wait"] if request is None else [])
    child_env = isolate.python_env(extra={**(env or {}), **launch.set_env,
                                          "PYTHONUNBUFFERED": "1"})
    for name in launch.drop_env:
        child_env.pop(name, None)
    child = proc.start(argv, timeout, env=child_env, stderr=subprocess.STDOUT,
                       max_bytes=OUTPUT_TAIL_BYTES, keep_tail=True)
    live = _Live(child, workdir, (request or {}).get("device", ""), part)
    if child.error:
        _cleanup(workdir)
        return ChildRun({}, "crash", f"could not start the smoke child: {child.error}", None, 0.0,
                        "", live.device)
    return live


STAGE_POLL_S = 0.25
"""How often the running children's stage is read for the progress display."""


class _StageReporter:
    """Reports each stage a running child enters ("smoke child on cuda:0: te (12 s)"), read from
    the result file at most every :data:`STAGE_POLL_S`, so a slow or hung step shows where it is
    while it runs (issue 12: the progress was one line)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.started = self.next_look = time.monotonic()
        self.seen: dict[int, str] = {}

    def poll(self, lives: Sequence[_Live | ChildRun], results: Sequence[ChildRun | None]) -> None:
        now = time.monotonic()
        if now < self.next_look:
            return
        self.next_look = now + STAGE_POLL_S
        for i, live in enumerate(lives):
            if results[i] is not None or isinstance(live, ChildRun):
                continue
            stage = _stage(live)
            if stage and stage != "done" and stage != self.seen.get(i):
                self.seen[i] = stage
                self.progress(f"smoke child on {live.device}{_named(live)}: {stage} "
                              f"({now - self.started:.0f} s)")


def _stage(live: _Live) -> str | None:
    """The stage the child is in, from the result file it rewrites after every stage change
    (child.py writes it atomically; a partial or missing file is simply no news)."""
    try:
        with open(os.path.join(live.workdir, "result.json"), encoding="utf-8") as fh:
            doc = json.loads(fh.read(1 << 20))
    except (OSError, ValueError):
        return None
    stage = doc.get("stage") if isinstance(doc, dict) else None
    return str(stage)[:60] if stage else None


def _finish(live: _Live, timeout: float) -> ChildRun:
    res = proc.collect(live.child)  # kills the group: on timeout, and leftovers of a finished run
    seconds = round(res.seconds, 3)
    doc: dict[str, Any] = {}
    try:
        with open(os.path.join(live.workdir, "result.json"), "rb") as fh:
            raw = fh.read(RESULT_MAX_BYTES + 1)
        loaded = json.loads(raw) if len(raw) <= RESULT_MAX_BYTES else None
        doc = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError, RecursionError):
        pass
    tail = res.stdout[-4000:]
    _cleanup(live.workdir)
    rc = res.returncode
    stage = doc.get("stage", "start")
    if res.timed_out:
        return ChildRun(doc, "timeout", f"no answer within {timeout:g} s (during: {stage})",
                        rc, seconds, tail, live.device)
    fatal = doc.get("fatal")
    if fatal:
        return ChildRun(doc, "crash", f"{fatal.get('text')} (during: {fatal.get('stage')})",
                        rc, seconds, tail, live.device)
    if rc != 0 or not doc.get("done"):
        why = _describe_exit(rc)
        last = proc.error_line(tail, 500)
        return ChildRun(doc, "crash", f"{why} during: {stage}" + (f"; {last}" if last else ""),
                        rc, seconds, tail, live.device)
    return ChildRun(doc, "ok", None, rc, seconds, tail, live.device)


def _named(live: _Live) -> str:
    return f" ({live.part})" if live.part else ""


def _describe_exit(rc: int | None) -> str:
    if rc is not None and rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exited with code {rc}"


def _cleanup(workdir: str) -> None:
    for name in ("request.json", "request.json.tmp", "result.json", "result.json.tmp"):
        try:
            os.unlink(os.path.join(workdir, name))
        except OSError:
            pass
    proc.remove_dir(workdir)


def spawn(request: dict[str, Any] | None, timeout: float, *,
          command: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
          part: str | None = None, launch: Launch | None = None) -> _Live | ChildRun:
    """Start one child (see :func:`_spawn`); a failure to start is a crashed :class:`ChildRun`."""
    try:
        return _spawn(request, timeout, command, env, part=part, launch=launch)
    except OSError as exc:  # the request or work folder could not be written
        return ChildRun({}, "crash", f"could not start the smoke child: {exc}",
                        None, 0.0, "", (request or {}).get("device", ""))


def send(live: _Live | ChildRun, request: dict[str, Any]) -> _Live | ChildRun:
    """Give a waiting child its request (written whole, then renamed into place)."""
    if isinstance(live, ChildRun):
        return live
    path = os.path.join(live.workdir, "request.json")
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        os.replace(path + ".tmp", path)
    except OSError as exc:
        abandon(live)
        return ChildRun({}, "crash", f"could not give the smoke child its request: {exc}",
                        None, 0.0, "", request.get("device", ""))
    return _Live(live.child, live.workdir, request.get("device", live.device), live.part)


def run_children(requests: Sequence[dict[str, Any]], timeout: float, *,
                 command: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
                 progress: Progress = lambda _: None) -> list[ChildRun]:
    """Start every request as its own child at once; each gets ``timeout`` seconds."""
    return collect_all([spawn(req, timeout, command=command, env=env) for req in requests],
                       timeout, progress)


def collect_all(lives: Sequence[_Live | ChildRun], timeout: float,
                progress: Progress = lambda _: None) -> list[ChildRun]:
    """Wait for every started child (reporting stages), each within its own deadline."""
    results: list[ChildRun | None] = [x if isinstance(x, ChildRun) else None for x in lives]
    stages = _StageReporter(progress)
    try:
        while any(r is None for r in results):
            stages.poll(lives, results)
            for i, live in enumerate(lives):
                if results[i] is not None or isinstance(live, ChildRun):
                    continue
                if live.child.done():
                    run = results[i] = _finish(live, timeout)
                    progress(f"smoke child on {live.device}{_named(live)} finished in "
                             f"{run.seconds:.1f} s")
                elif live.child.expired():
                    results[i] = _finish(live, timeout)
                    progress(f"smoke child on {live.device}{_named(live)} timed out after "
                             f"{timeout:g} s; killed")
            time.sleep(0.05)
    finally:
        # Ctrl-C (or any error) mid-run: kill the children still running and remove their work
        # folders, which a normal finish does in _finish (issue 13, item 7).
        for i, live in enumerate(lives):
            if results[i] is None and isinstance(live, _Live):
                abandon(live)
    return [r for r in results if r is not None]


def abandon(live: _Live | ChildRun) -> None:
    """Kill a child still running at an interrupt and remove its work folder (its output goes
    through a bounded pipe that dies with it: nothing else to close)."""
    if isinstance(live, ChildRun):
        return
    proc.abandon(live.child)   # its group killed, reaped, its private working folder removed
    _cleanup(live.workdir)
