"""The ``fp8-doctor`` command line: parse, run the command from the table, map errors to exit codes.

Exit codes (DESIGN.md contract): 0 no finding at or above ``--fail-on``; 1 such findings;
2 usage error (bad flag, a path that does not exist, a bad ``--assume``, ``-o`` naming an input,
and a report that cannot be delivered: unwritable ``-o``, stdout closed or full); 3 internal
error; 130 interrupted (Ctrl-C), from fp8-doctor's first line on (143 SIGTERM, 129 SIGHUP: see
preflight/_startup.py, where the console script starts).
stdout carries the report only; progress and errors go to stderr (nowhere when it is closed).
The commands, their arguments and their code are in :mod:`preflight.commands` (one table).
Module-level imports are stdlib only; the console script starts in :mod:`preflight._startup`,
whose handlers are in place before this module loads (issue 13 item 7, issue 21 item 8).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from preflight.commands import COMMANDS, build_parser  # the command table (stdlib only)
from preflight.outputs import (  # the exit codes, defined once (stdlib-only module)
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
)

GC_THRESHOLD = (200_000, 30, 30)
"""The collector's thresholds while a command runs (see :func:`main`)."""

__all__ = ["COMMANDS", "EXIT_INTERNAL", "EXIT_USAGE", "build_parser", "entry", "main"]


def _fatal(code: int, msg: str, tip: str | None = None) -> NoReturn:
    from preflight.commands.console import say

    say(f"fp8-doctor: error: {msg}")
    if tip:
        say(f"  tip: {tip}")
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    # Start-up allocates tens of thousands of objects that all live to the end (modules, the
    # compiled rules), so the default threshold (700) runs ~80 young collections that find almost
    # nothing: ~10 ms of a 0.17 s check (issue 14, item 4). The higher threshold mypy sets for
    # the same reason (mypy/build.py) keeps collection on and bounded (peak RSS unchanged, 23 MB).
    old = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Also while the package loads or argparse runs (issue 13: an early Ctrl-C printed a
        # traceback and the process died by the signal instead of exiting 130).
        from preflight.base.signals import reason

        _fatal(EXIT_INTERRUPTED, reason())
    finally:
        gc.set_threshold(*old)   # main() is also called in-process (tests, the cluster mode)


def entry() -> int:
    """The console script and ``python -m preflight``: :func:`main`, then a prompt exit.

    Once the report is out, every ``finally`` has run (temporary folders removed, children
    reaped) and the streams are flushed, the process leaves with ``os._exit``: tearing down the
    interpreter (its modules and the compiled rules) took 20-40 ms of a 0.2 s check, for nothing
    (issue 14, item 4). It is also what makes Ctrl-C exit 130: CPython 3.11 remembers a
    KeyboardInterrupt that passed through ``exec`` (dataclasses build their ``__init__`` with
    it) even when it was caught, and would end the process by SIGINT instead of with our code.
    A ``SystemExit`` that carries a message (not a number) leaves the ordinary way.
    The console script starts in :func:`preflight._startup.entry` (module path, signals), which
    calls this; :func:`preflight.base.signals.finish` kills any child still running and turns 130
    into 128 + the signal when SIGTERM or SIGHUP ended the run (issue 21 item 8).
    """
    # The process ends after main(), so the run's thresholds stay: main() restores the ones it
    # found, and with the default (700) the next allocation collected the ~17k young objects of
    # the whole run, 7-12 ms just before os._exit (issue 26 item 4).
    gc.set_threshold(*GC_THRESHOLD)
    try:
        code: int = main()
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        code = exc.code or 0
    if _flush_failed(sys.stdout) and code in (0, 1):
        code = EXIT_USAGE   # the end of the report could not be delivered (a full disk, EPIPE)
    _flush_failed(sys.stderr)
    from preflight.base.signals import finish

    finish(code)


def _flush_failed(stream: object) -> bool:
    """True when writing out what is buffered failed; a closed or absent stream has nothing."""
    try:
        stream.flush()   # type: ignore[attr-defined]
    except OSError:
        return True
    except (ValueError, AttributeError):
        pass
    return False


def _main(argv: Sequence[str] | None) -> int:
    from preflight.commands import console

    console.start()
    words = list(sys.argv[1:] if argv is None else argv)
    first = words[0] if words and words[0] in COMMANDS else None
    parser = build_parser(first)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        console.guard_output(args)
        return COMMANDS[args.command].run(args)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks for users
        from preflight.errors import UserInputError

        if isinstance(exc, UserInputError):
            _fatal(EXIT_USAGE, str(exc))
        if os.environ.get("FP8_DOCTOR_DEBUG"):
            raise
        _fatal(EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {exc}",
               "re-run with FP8_DOCTOR_DEBUG=1 for the traceback and report it")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(entry())
