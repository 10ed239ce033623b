"""An argparse option a Python job file declares (:class:`Arg`, from
``parser.add_argument(...)``: :func:`option_of`) and the value it takes from a launch line's
arguments (:func:`option_value`: ``type=``, ``choices=``, unique prefixes, words the shell makes
at run time), as argparse applies them (CPython Lib/argparse.py at v3.11.9:
https://github.com/python/cpython/blob/v3.11.9/Lib/argparse.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from preflight.reading.pyvalues import Call, Ref, Unresolved
from preflight.reading.shellbranch import maybe_parts


@dataclass(frozen=True)
class Arg:
    """An argparse option (``parser.add_argument("--bf16", action="store_true")``)."""

    dest: str
    flags: tuple[str, ...]
    default: Any
    store: Any          # what a bare flag stores (store_true: True), None when it takes a value
    line: int
    convert: str = "str"    # ``type=``: int | float | str (argparse's default) | other (a
                            # function of the script's: what it returns is not read)
    choices: tuple[Any, ...] | None = None
    action: str = "store"   # store | const (a bare flag) | other (count, append, a class)
    abbrev: bool = True     # a unique prefix of a long flag names it (argparse; not click)
    off: tuple[str, ...] = ()   # flags that store ``not store`` (click's ``--x/--no-x``)
    required: bool = False      # ``required=True``: argparse refuses a command line without it


def typed(raw: str) -> Any:
    low = raw.strip("'\"")
    if low.lower() in ("true", "false"):
        return low.lower() == "true"
    for conv in (int, float):
        try:
            return conv(low)
        except ValueError:
            continue
    return low


def option_of(call: Call) -> Arg | None:
    """The option a ``parser.add_argument("--x", ...)`` call declares (long flags only), with
    its ``type=``, ``choices=`` and ``action=`` as argparse applies them (Lib/argparse.py)."""
    flags = tuple(a for a in call.args if isinstance(a, str) and a.startswith("-"))
    longs = [f for f in flags if f.startswith("--")]
    if not longs:
        return None
    dest = call.kwargs.get("dest")
    if not isinstance(dest, str):
        dest = longs[0][2:].replace("-", "_")
    action = call.kwargs.get("action")
    store: Any = {"store_true": True, "store_false": False}.get(action) \
        if isinstance(action, str) else None
    kind = "store"
    off: tuple[str, ...] = ()
    if isinstance(action, Ref) and action.name == "argparse.BooleanOptionalAction":
        # Lib/argparse.py (3.9+): `--x` stores True, the `--no-x` it adds stores False
        store, off = True, tuple("--no-" + f[2:] for f in longs)
        action = "store_true"
    if action == "store_const":
        store, kind = call.kwargs.get("const"), "const"
    elif isinstance(store, bool):
        kind = "const"
    elif action not in (None, "store"):
        kind = "other"
    default = call.kwargs.get("default", (not store) if isinstance(store, bool) and not off
                              else None)
    conv = call.kwargs.get("type")
    convert = "str" if conv is None else \
        conv.name[9:] if isinstance(conv, Ref) and conv.name in (
            "builtins.int", "builtins.float", "builtins.str") else "other"
    choices = call.kwargs.get("choices")
    return Arg(dest, flags, default, store, call.line, convert,
               tuple(choices) if isinstance(choices, (list, tuple)) else None, kind, off=off,
               required=call.kwargs.get("required") is not False and "required" in call.kwargs)


def shared_dest(first: Arg | None, later: Arg) -> Arg:
    """One option for two ``add_argument`` calls that store to one ``dest``: argparse gives it
    the first one's default (``parse_known_args`` sets each dest once, in the order added) and
    each flag on the command line its own action, the last one winning. ``--fp8`` /
    ``--no_fp8`` (``store_true`` / ``store_false``, one ``dest``) is one switch with its off
    flags; any other pair keeps the first default, and a flag of either is not followed."""
    if first is None or first.line == later.line and first.flags == later.flags:
        return later
    if set(later.flags) <= {*first.flags, *first.off}:
        return first        # the same call read again (a scope's calls are resolved twice)
    if first.action == "const" and later.action == "const" and isinstance(first.store, bool) \
            and later.store is (not first.store):
        return replace(first, off=(*first.off, *later.flags))
    return replace(first, flags=(*first.flags, *later.flags), action="other")


def _converted(opt: Arg, flag: str, raw: str) -> Any:
    """``raw`` as ``type=`` turns it into the option's value, checked against ``choices``."""
    value: Any = raw
    if "$" in raw or "`" in raw:
        # a variable the launch script does not set here (the environment, a `$(...)`)
        return Unresolved(f"{flag} {raw[:40]} is known only when the launch script runs",
                          opt.line)
    if opt.convert == "other":
        # the script's own converter (str2bool, a dtype table): keep the text's reading
        return typed(raw)
    if opt.convert in ("int", "float"):
        try:
            value = int(raw) if opt.convert == "int" else float(raw)
        except ValueError:
            return Unresolved(f"{flag} {raw[:40]!r} is not a{'n int' if opt.convert == 'int' else ' float'}: "
                              "argparse refuses the command line", opt.line)
    if opt.choices is not None and value not in opt.choices:
        if any(not isinstance(c, (str, int, float)) for c in opt.choices):
            return Unresolved(f"{flag} {raw[:40]!r}: its choices are not all known", opt.line)
        return Unresolved(f"{flag} {raw[:40]!r} is not one of the choices {list(opt.choices)} "
                          "(argparse refuses the command line)", opt.line)
    return value


def _matches(word: str, opt: Arg, longs: Iterable[str]) -> bool:
    """argparse takes a unique prefix of a long option (``allow_abbrev``, on by default)."""
    if word in opt.flags or word in opt.off:
        return True
    if not opt.abbrev or not word.startswith("--") or len(word) < 3:
        return False
    mine = [f for f in (*opt.flags, *opt.off) if f.startswith(word)]
    return bool(mine) and not any(f.startswith(word) for f in longs
                                  if f not in opt.flags and f not in opt.off)


def option_value(opt: Arg | None, dest: str, argv: tuple[str, ...] | None, path: str,
                 longs: Iterable[str] = (), label: str | None = None) -> Any:
    """An argparse option's value: from the launch line's arguments ``argv`` when known (the
    last occurrence wins, converted by ``type=``, checked against ``choices=``), else its
    default (a launch line was read and does not pass it), else Unresolved. ``longs``: every
    long flag the script declares (to tell a unique abbreviation)."""
    if opt is None:
        return Unresolved(f"args.{dest} is not an option this file declares")
    if argv is None:
        return Unresolved(f"{label or 'args.' + dest} comes from the command line ({'/'.join(opt.flags)}, "
                          f"default {opt.default!r} at {path}:{opt.line}); no launch line that "
                          "runs this script was read", opt.line)
    others = tuple(longs)
    found: Any = None
    given = False
    for i, word in enumerate(argv):
        if word == "--":
            break       # what follows is positional
        if (may := maybe_parts(word)) is not None:
            # set only in a branch that may not run (reading/shellbranch.py): only an option
            # its value could give is not known (redteam8: `if ..; then F=--fp8; fi` ... $F)
            if (i == 0 or not _takes_value(argv[i - 1])) and any(
                    _matches(w.partition("=")[0], opt, others) for w in may[0].split()):
                given, found = True, Unresolved(f"{label or 'args.' + dest} may be given by "
                                                f"{may[0][:60]!r}: {may[1]}", opt.line)
            continue
        if late_word(word) and (i == 0 or not _takes_value(argv[i - 1])):
            # redteam8: `${X:+--fp8}`, `$(cat flags)`, `"${ARGS[@]}"` are words only the run
            # knows: any flag may come from them, the last one winning
            given, found = True, Unresolved(f"{label or 'args.' + dest} may be given by "
                                            f"{word[:60]!r} on the launch line, which is known "
                                            "only when it runs", opt.line)
            continue
        flag, eq, inline = word.partition("=")
        if not _matches(flag, opt, others):
            continue
        given = True
        if opt.action == "other":
            found = Unresolved(f"{flag} is an option of action the text does not follow",
                               opt.line)
        elif opt.action == "const":
            found = (not opt.store) if _is_off(flag, opt) else opt.store
        else:
            raw = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            found = _converted(opt, flag, raw) if raw is not None and raw[:1] != "\x00" else \
                Unresolved(f"{flag} is given without a value" if raw is None else
                           f"{flag} is given a value set in a branch that may not run")
    if given:
        return found
    if opt.required:
        # argparse exits with "the following arguments are required" (Lib/argparse.py
        # parse_known_args): no value of the file's is the job's
        return Unresolved(f"{label or 'args.' + dest} is a required option ({'/'.join(opt.flags)}) "
                          "the launch line does not give: argparse refuses it", opt.line)
    if isinstance(opt.default, str) and opt.convert in ("int", "float"):
        # argparse passes a string default through type= too
        return _converted(replace(opt, choices=None), "default", opt.default)
    return opt.default


def _is_off(flag: str, opt: Arg) -> bool:
    """Whether ``flag`` (matched by :func:`_matches`, maybe a unique prefix) is an off flag."""
    return flag in opt.off or flag not in opt.flags and \
        not any(f.startswith(flag) for f in opt.flags)


def late_word(word: str) -> bool:
    """A launch-line word the shell makes at run time that may hold any flag: a command
    substitution, a backquote, ``${X:+...}``, an array's ``${A[@]}``. Not ``$@`` / ``$*`` (a
    script's own unknown arguments add nothing) nor a plain ``$NAME``, whose values the script
    sets in its branches (nanochat runs/miniseries.sh l.62-78: ``$DEVICE_BATCH_SIZE_ARG``)."""
    word = word.strip('"')
    return word[:1] in ("$", "`", "\x00") and word not in ("$@", "$*", "${@}", "${*}") and \
        re.fullmatch(r"\$\{?\w+\}?", word) is None


def _takes_value(word: str) -> bool:
    """Whether ``word`` is an option written without ``=`` (the next word may be its value)."""
    return word.startswith("-") and "=" not in word and len(word) > 1
