"""Safety of ``fix.commands``: what a rule may tell a user to paste into a shell.

A fix command is printed exactly as written (never interpolated) and must be safe to run as
printed (DESIGN.md). Rule packs come from other people too (``--rules``), and a reviewer skims a
one-line command, so every command is checked when the rule loads; a refusal is a load error.

A command is accepted when it is **one simple command**: printable ASCII; no shell syntax but
quoting (no pipes, lists, redirections, substitutions, globs, ``~`` or ``$``); starting with an
allow-listed program whose subcommands, options and operands are checked against its entry in
:data:`PROGRAMS`. The list holds what the bundled rules need: ``pip`` (or ``python -m pip``) to
install, upgrade or remove a package from the default index, fp8-doctor itself, and the read-only
GPU diagnostics ``nvidia-smi`` (queries only) and ``dcgmi diag``. Anything else (an environment
variable to set, a config line to change) belongs in ``fix.text``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from preflight.base.versions import InvalidRange, compile_specifier

# Outside quotes these make the line more than one simple command (| & ; ( )), redirect (< >),
# expand (* ? [ ] ~ { }), start a comment (#) or expand history (!).
_SHELL_SYNTAX = frozenset("|&;<>()*?[]~{}#!")
# Anywhere, even inside double quotes, these expand or escape ($ `) or hide text (\).
_NEVER = frozenset("$`\\")


@dataclass(frozen=True)
class Program:
    """What one allow-listed program may be given."""

    subcommands: frozenset[str] = frozenset()
    """Allowed first arguments (``pip install``); empty: no subcommand."""
    subcommand_required: bool = True
    options: frozenset[str] | None = frozenset()
    """Allowed options; ``None``: any option except ``denied``."""
    takes_value: frozenset[str] = frozenset()
    """Options whose value is the next word (``-d CLOCK``) unless written ``--opt=value``."""
    denied: frozenset[str] = frozenset()
    operands: str = "none"
    """What other words may be: ``none``, ``any`` or ``requirement`` (PEP 508, no URL)."""


_PIP = Program(
    subcommands=frozenset({"install", "uninstall", "show", "list"}),
    options=frozenset({"-U", "--upgrade", "--pre", "--no-deps", "--force-reinstall",
                       "--no-cache-dir", "--no-build-isolation", "-y", "--yes"}),
    operands="requirement",
)

PROGRAMS: dict[str, Program] = {
    "pip": _PIP,
    "fp8-doctor": Program(
        subcommands=frozenset({"check", "snapshot", "report", "smoke", "rules"}),
        options=None, denied=frozenset({"-o", "--output"}), operands="any"),  # -o writes a file
    "nvidia-smi": Program(
        subcommands=frozenset({"topo", "nvlink"}), subcommand_required=False,
        options=frozenset({"-q", "--query", "-d", "--display", "-L", "--list-gpus", "-i", "--id",
                           "-x", "--xml-format", "--query-gpu", "--query-compute-apps",
                           "--format", "-m", "--matrix", "-s", "--status", "-h", "--help"}),
        takes_value=frozenset({"-d", "--display", "-i", "--id", "--query-gpu",
                               "--query-compute-apps", "--format"})),
    "dcgmi": Program(
        subcommands=frozenset({"diag", "discovery"}),
        options=frozenset({"-r", "--run", "-j", "--json", "-l", "--list", "-v", "--verbose",
                           "-g", "--group", "-i"}),
        takes_value=frozenset({"-r", "--run", "-g", "--group", "-i"})),
}
"""The allow-list, by program name (documented in docs/rule-format.md, "Fix commands")."""

_PYTHON_M = {("python", "-m", "pip"): "pip", ("python3", "-m", "pip"): "pip"}


def unsafe_reason(command: str) -> str | None:
    """Why ``command`` may not be printed as a fix command, or None when it is acceptable."""
    bad = sorted({c for c in command if not " " <= c <= "~"})
    if bad:
        return f"only printable ASCII is allowed (found {', '.join(repr(c) for c in bad)})"
    never = sorted(_NEVER & set(command))
    if never:
        return f"{' '.join(never)} may expand or escape text in a shell"
    syntax = _outside_quotes(command)
    if syntax is None:
        return "unbalanced quotes"
    words = shlex.split(command)
    if not words:
        return "empty command"
    for prefix, name in _PYTHON_M.items():
        if tuple(words[:3]) == prefix:
            words = [name, *words[3:]]
    program = PROGRAMS.get(words[0])
    if program is None:
        if "=" in words[0]:
            return "setting environment variables is not a command here; say it in fix.text"
        return (f"{words[0]!r} is not an allowed program (allowed: "
                f"{', '.join(PROGRAMS)}, python -m pip)")
    if syntax:
        return (f"shell syntax outside quotes ({' '.join(syntax)}): a fix command is one simple "
                "command, with no pipes, lists, redirections, globs or ~")
    return _check_arguments(words[0], program, words[1:])


def _outside_quotes(command: str) -> list[str] | None:
    """Shell-syntax characters outside quotes (sorted); None if a quote is left open."""
    found: set[str] = set()
    quote = ""
    for ch in command:
        if quote:
            if ch == quote:
                quote = ""
            elif quote == '"' and ch == "!":  # bash expands history inside double quotes
                found.add(ch)
        elif ch in "'\"":
            quote = ch
        elif ch in _SHELL_SYNTAX:
            found.add(ch)
    return None if quote else sorted(found)


def _check_arguments(name: str, program: Program, args: list[str]) -> str | None:
    if program.subcommands:
        if args and args[0] in program.subcommands:
            args = args[1:]
        elif program.subcommand_required or (args and not args[0].startswith("-")):
            return (f"{name} may only be run as {name} "
                    f"{'|'.join(sorted(program.subcommands))}")
    pending_value = False
    for word in args:
        if pending_value:
            pending_value = False
            continue
        if word.startswith("-") and word != "-":
            option, has_value, _ = word.partition("=")
            allowed = (option not in program.denied and not _is_short_form(option, program.denied)
                       if program.options is None else option in program.options)
            if not allowed:
                return f"option {option} is not allowed for {name}"
            pending_value = option in program.takes_value and not has_value
            continue
        reason = _operand(name, program.operands, word)
        if reason:
            return reason
    return None


def _is_short_form(option: str, denied: frozenset[str]) -> bool:
    """``-ofile`` is ``-o file``."""
    return any(len(d) == 2 and option.startswith(d) for d in denied)


def _operand(name: str, kind: str, word: str) -> str | None:
    if kind == "any":
        return None
    if kind == "requirement":
        if _plain_requirement(word):
            return None
        # Anything unusual gets packaging's full PEP 508 parser (imported only then: it pulls in
        # markers, tags, logging and platform, ~12 ms that every check would otherwise pay).
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            req = Requirement(word)
        except InvalidRequirement:
            return (f"{word!r} is not a package requirement such as 'accelerate>=1.11.0' "
                    "(no paths, files or URLs)")
        if req.url:
            return f"{word!r} installs from a URL; fix commands install from the default index"
        return None
    return f"unexpected argument {word!r} for {name}"


_PLAIN = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(\[[A-Za-z0-9._,-]+\])?(.*)")


def _plain_requirement(word: str) -> bool:
    """``name[extras]`` with an optional specifier the rule engine's own PEP 440 parser accepts:
    certainly a valid PEP 508 requirement without a URL (what every bundled fix command is)."""
    m = _PLAIN.fullmatch(word)
    if m is None:
        return False
    if not m.group(3):
        return True
    try:
        compile_specifier(m.group(3))
    except InvalidRange:
        return False
    return True
