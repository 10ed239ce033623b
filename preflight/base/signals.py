"""Signals in fp8-doctor's own processes: SIGINT, SIGTERM and SIGHUP unwind the run cleanly.

Installed by the entry points (:mod:`preflight._startup`) before anything else runs (issue 21
item 8): a signal becomes a KeyboardInterrupt in the main thread, so ``finally`` blocks remove
temporary folders, and :func:`finish` kills every child still running before the process exits
with 128 + the signal. :class:`held` keeps a signal from cutting a few lines in two (a child
started but not yet recorded: :mod:`.proc`). The state lives here, in the floor, because
:mod:`.proc` needs it and the entry points sit above everything (issue 25: ``base.proc``
imported ``_startup``, which imports the CLI).

Like :mod:`preflight._startup`, this module imports only ``os`` and ``sys`` (and not ``from
__future__``): it is loaded before the module path is cleaned.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

_received: "list[int]" = []
_held = [0]                  # > 0 inside held(): a signal waits for its end
_pending: "list[int]" = []


def _on_signal(signum: int, frame: "FrameType | None") -> None:
    if not _received:
        _received.append(signum)
    if _held[0]:
        _pending.append(signum)
        return
    raise KeyboardInterrupt


class held:
    """A few lines no signal may cut in two: between making a child's folder, starting it and
    recording both (``proc.start``), an interrupt would leave a child or a folder nobody knows
    of. A signal that comes meanwhile is raised when the block ends. Without our handlers (a
    library user's process) it changes nothing."""

    def __enter__(self) -> None:
        _held[0] += 1

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        _held[0] -= 1
        if not _held[0] and _pending:
            _pending.clear()
            if kind is None:
                raise KeyboardInterrupt


def install_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP unwind the main thread as KeyboardInterrupt (``finally``
    blocks run), and :func:`exit_code` remembers which one it was.

    Through ``_signal`` (built into the interpreter; ``signal`` wraps it in enums, a few
    hundred microseconds of imports during which SIGTERM would still kill the process where it
    stands)."""
    import _signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(_signal, name, None)
        if number is None:
            continue
        try:
            if name == "SIGINT" and _signal.getsignal(number) == _signal.SIG_IGN:
                continue   # started in the background with Ctrl-C ignored (nohup, `&`): keep it
            _signal.signal(number, _on_signal)
        except (OSError, ValueError):   # not the main thread (embedded), or not allowed
            pass


def exit_code(code: int) -> int:
    """``code``, or 128 + the signal that interrupted the run (130 for Ctrl-C)."""
    if code == 130 and _received:
        return 128 + _received[0]
    return code


def finish(code: int) -> "NoReturn":
    """Kill every child still running (with its group) and leave with ``code`` at once."""
    _ignore_signals()
    proc = sys.modules.get("preflight.base.proc")
    if proc is not None:
        try:
            proc.kill_all()
        except BaseException:  # noqa: BLE001 - leaving anyway
            pass
    os._exit(exit_code(code))


def reason() -> str:
    """What ended the run, for its last line: interrupted (Ctrl-C), terminated, hung up."""
    return {15: "terminated (SIGTERM)", 1: "hung up (SIGHUP)"}.get(
        _received[0] if _received else 2, "interrupted")


def terminated() -> bool:
    """True when SIGTERM or SIGHUP (a launcher or the system stopping us), not Ctrl-C, came."""
    return bool(_received) and _received[0] != 2


def hold_signals() -> None:
    """Ignore further SIGINT / SIGTERM / SIGHUP: what runs now is the last, bounded step."""
    _ignore_signals()


def _ignore_signals() -> None:
    """While cleaning up, a second Ctrl-C must not abort the cleanup half-way."""
    import _signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(_signal, name, None)
        if number is not None:
            try:
                _signal.signal(number, _signal.SIG_IGN)
            except (OSError, ValueError):
                pass
