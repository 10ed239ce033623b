"""The command table: every ``fp8-doctor`` command, its one-line help and where it lives.

One table (as pip's ``commands_dict``) is read by the parser, the dispatcher, ``--help`` and
shell completion: adding a command is one entry here and one module beside this file that
implements :class:`CommandModule` (``add_arguments(parser)`` and ``run(args) -> exit code``).
A command's module is imported only when that command runs or its arguments are asked for
(issue 14 item 4: start-up time; ``benchmarks/bench_check.py``), so this file is standard library
only and :class:`Command` resolves its module lazily.

Command modules share :mod:`.args` (the parser pieces and :func:`.args.options_from`, the one
way from flags to ``api.CheckOptions``) and :mod:`.console` (the report to stdout or ``-o``,
progress and errors to stderr); they import neither :mod:`preflight.cli` nor one another, except
``report``, which is ``check`` with other defaults. ``python -m preflight.cluster`` is the other
front door (:mod:`preflight.cluster.cli`); it builds its options through the same
:func:`.args.options_from`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Protocol, cast

from preflight import __version__
from preflight.outputs import EXIT_HELP


class CommandModule(Protocol):
    """What a command's module provides (mypy checks each one against it, see below)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


@dataclass(frozen=True)
class Command:
    """One command: its name, its help line and the module that implements it."""

    name: str
    help: str
    module: str

    def implementation(self) -> CommandModule:
        return cast(CommandModule, import_module(self.module))

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's flags and positional arguments (imports its module)."""
        self.implementation().add_arguments(parser)

    def run(self, args: argparse.Namespace) -> int:
        """Run the command; its exit code (usage errors raise ``errors.UserInputError``)."""
        return self.implementation().run(args)


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("check", "probe, read configs, evaluate rules, run the smoke step",
            "preflight.commands.check"),
    Command("snapshot", "write the facts of this machine (and configs) as JSON",
            "preflight.commands.snapshot"),
    Command("report", "a redacted Markdown support report (check + all facts)",
            "preflight.commands.report"),
    Command("plan", "the fewest package version changes that clear every version-gated "
                    "finding, proven by re-evaluating the rules", "preflight.commands.plan"),
    Command("speedup", "the FP8 speed-up to expect for this model: a short training trial in "
                       "BF16 and FP8 on this GPU, and a verdict", "preflight.commands.speedup"),
    Command("smoke", "run only the FP8 smoke step", "preflight.commands.smoke"),
    Command("rules", "list, show, lint or test the rule base", "preflight.commands.rules"),
    Command("completion", "print a shell completion script (bash, zsh, fish)",
            "preflight.commands.completion"),
)}
"""Every command, in the order ``--help`` lists them."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole CLI, as one argparse tree.

    ``only``: the command about to run. Every command is still registered (help, completion and
    "invalid choice" see them all), but only that one gets its arguments, so a ``check`` does not
    import the smoke, plan, speedup and rules modules just to describe their flags.
    """
    from preflight.commands.args import Parser

    parser = Parser(
        prog="fp8-doctor",
        description="Preflight checks for FP8 training: probes, known-bug rules, FP8 smoke step.",
        epilog=EXIT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"fp8-doctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS.values():
        p = sub.add_parser(command.name, help=command.help)
        if only is None or only == command.name:
            command.add_arguments(p)
    return parser


if TYPE_CHECKING:  # mypy holds every command's module to CommandModule (no import at run time)
    from preflight.commands import (
        check,
        completion,
        plan,
        report,
        rules,
        smoke,
        snapshot,
        speedup,
    )

    _modules: tuple[CommandModule, ...] = (check, snapshot, report, plan, speedup, smoke, rules,
                                           completion)
