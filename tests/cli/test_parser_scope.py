"""The parser builds only the running command's arguments (issue 14, item 4: start-up time),
while help, completion and "invalid choice" still see every command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from preflight.cli import COMMANDS, build_parser

_PROBE = ("import sys; from preflight.cli import build_parser; build_parser({only!r}); "
          "print(sorted(m for m in sys.modules if m.split('.')[0] == 'preflight' and "
          "(m.split('.')[1:2] in (['smoke'], ['plan'], ['speedup'], ['engine']) or "
          "m.startswith('preflight.commands.') and m.split('.')[2] not in "
          "({only!r}, 'args', 'console'))))")


def _modules_after(only: str | None) -> str:
    res = subprocess.run([sys.executable, "-c", _PROBE.format(only=only)], capture_output=True,
                         text=True, timeout=60, check=True)
    return res.stdout.strip()


def test_a_check_parser_imports_no_other_command() -> None:
    assert _modules_after("check") == "[]"


def test_the_full_parser_still_imports_them() -> None:
    modules = _modules_after(None)
    assert all(f"preflight.commands.{name}" in modules for name in COMMANDS if name != "check")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_registered_whatever_runs(command: str) -> None:
    parser = build_parser("check")
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)          # type: ignore[arg-type]
    # The command's own parser, built alone, knows its arguments.
    own = build_parser(command)
    chosen = next(a for a in own._actions if a.dest == "command").choices[command]  # type: ignore[index]
    assert [a for a in chosen._actions if a.dest != "help"]


def test_the_scoped_parser_parses_like_the_full_one() -> None:
    argv = ["check", "--no-smoke", "--fail-on", "warning", "--format", "json", "job"]
    assert vars(build_parser("check").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_main_leaves_the_garbage_collector_as_it_found_it(capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from preflight.cli import main

    before = gc.get_threshold()
    assert main(["completion", "bash"]) == 0
    assert "fp8-doctor" in capsys.readouterr().out
    assert gc.get_threshold() == before
