"""Read an override launch line: the command a script runs, its ``--flags``, its ``a.b=c``
overrides and the base config it names, then the base merged with the overrides.

A framework module gives the entry point it is launched by and how its command line is
parsed (:class:`Syntax`); :func:`read_launch` finds that command in the script
(:mod:`.shellexpand`: wrappers such as ``torchrun``, ``uv run``, ``ray job submit --``,
``srun ... bash -c "$CMD"`` come before the entry point and are skipped), sorts its arguments
into flags, overrides and positional arguments, and :func:`merged_facts` builds the job's config
from the base YAML chain and the overrides in the framework's order (:mod:`.layered`).

An argument whose value cannot be known here (``$TP`` from the environment, a ``$(...)``) or
that was assigned in an ``if`` branch the launch line does not share gives an ``Unknown`` value
with the reason, never a guess. A line with more than :data:`~.overrides.MAX_OVERRIDES`
overrides, or an override the framework's parser refuses, is a problem naming its line.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import launchpick, shelldir, shellempty, shellpwd
from preflight.reading.launch import not_training
from preflight.reading.layered import Layered, load_chain
from preflight.reading.overrides import (
    MAX_OVERRIDES,
    Override,
    OverrideError,
    is_dotlist,
    parse_flag,
    parse_hydra,
)
from preflight.reading.parse import ParseError, parse_toml, parse_yaml, read_text
from preflight.reading.refs import locate, named, outside
from preflight.reading.shellcalls import CWD, folder_of, walk
from preflight.reading.shellexpand import Arg, Launch, TooLarge, launch_args, launches
from preflight.reading.shellwords import Split, split
from preflight.reading.types import ConfigProblem, Linked


@dataclass(frozen=True)
class Syntax:
    """How a framework's command line is parsed."""

    entry: Callable[[str], bool]            # is this word the entry point?
    value_flags: frozenset[str] = frozenset()   # flags that take a value (``--recipe X``)
    dotted_flags: bool = False              # ``--a.b value`` are overrides (torchtitan)
    all_flags: bool = False                 # every ``--key value`` not in value_flags is an
                                            # override (NeMo-Automodel's parse_cli_argv)
    typing: str = "yaml"                    # how ``--a.b value`` is typed: yaml | python


@dataclass
class LaunchRead:
    """What one launch command says."""

    path: str
    launch: Launch | None = None
    overrides: list[tuple[Override, Source]] = field(default_factory=list)
    flags: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    positional: list[tuple[Any, Source]] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)
    folder: tuple[str | None, str | None] | None = None
    """The folder the command runs in when the script changed it (``cd DIR``): (absolute
    folder, None) or (None, why not known); None: the usual places."""
    started: str | None = None
    """The folder a calling script ran this one from (looked in first when there is no cd)."""

    def flag(self, *names: str) -> tuple[Any, Source] | None:
        """The last value given for any spelling in ``names``."""
        hits = [self.flags[n] for n in names if n in self.flags]
        return max(hits, key=lambda h: (h[1].line or 0)) if hits else None

    def yaml_positional(self) -> tuple[Any, Source] | None:
        """The first positional argument naming a YAML file (``arctic_training run.yml``)."""
        return next(((v, s) for v, s in self.positional
                     if isinstance(v, str) and v.endswith((".yaml", ".yml"))), None)


def find_launch(path: str, text: str, syntax: Syntax,
                outer: dict[str, str] | None = None) -> LaunchRead:
    """The first command in ``text`` that runs ``syntax.entry`` and trains (else the first
    that runs it at all: a script that only evaluates), its arguments sorted (``outer``:
    variables set by the scripts it sources). NeMo-RL's ``run_eval.py``, verl's generation and
    Megatron-Bridge's inference scripts before the training command are not the job's config
    (:func:`preflight.reading.launch.not_training`)."""
    out = LaunchRead(path)
    # comments are the lexer's to skip (strip_comments would also blank a quoted `#`)
    text = text.replace("\r\n", "\n")
    starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def where(offset: int) -> Source:
        return Source(path, bisect.bisect_right(starts, offset))

    words = split(text)
    walked = walk(path, text, outer)
    outer = _with_pwd(outer, walked)
    used: list[tuple[int, str]] = []    # `$PWD` read as the launch folder (assumed: said)
    pwd = shellpwd.lookup(walked, path, outer, used)
    if words.truncated_at is not None:
        out.problems.append(ConfigProblem(path, where(words.truncated_at).line, (
            "the script has too many words to read past this line (no real launch script "
            "does); only what comes before it was read"), cut=True))
    try:
        launch = launch_args(words, lambda w: syntax.entry(w) and not not_training(w), outer,
                             pwd) or launch_args(words, syntax.entry, outer, pwd)
    except TooLarge as exc:
        out.problems.append(ConfigProblem(path, where(exc.offset).line, (
            "the script's variables expand to megabytes of text here (values that repeat "
            "other values); refusing to expand them"), cut=True))
        return out
    if launch is None:
        return out
    runs = (outer or {}).get(shelldir.RUNS)      # `$0` of a sourced script: who sources it
    # the script's folder put in for every reader of `launch.args` (redteam11: prime-rl,
    # torchtune and Megatron-Bridge's perf launcher read `"$(dirname "$0")/x.toml"` raw, an
    # internal marker in the path: "not found")
    launch = replace(launch, args=shelldir.resolved(launch.args, path, runs))
    out.launch = launch
    said = [*launch.before, *launch.args]            # read as empty, said (shellempty)
    for arg in (said[i] for i in shellempty.standalone([a.text for a in said])):
        if (unset := shellempty.unset_name(arg)) is not None:
            shellempty.note(path, where(arg.offset).line, unset, out.problems, text)
    if used and walked.start is not None and any(
            folder in a.text for _, folder in used for a in (launch.entry, *launch.args)):
        line = where(used[0][0]).line or 1
        out.problems.append(ConfigProblem(path, line, shellpwd.assumed_note(
            path, line, *walked.start), level="info", code="assumed_folder"))
    moved = walked.folder_at(launch.offset)
    if moved.path or moved.why:
        out.folder = folder_of(moved, path, outer)
    out.started = (outer or {}).get(CWD)
    _read_args(out, list(launch.args), syntax, where)
    _differing(out, words, syntax, outer, where)
    return out


def _with_pwd(outer: dict[str, str] | None, walked: Any) -> dict[str, str] | None:
    """``$PWD`` for the launch line of a script another script of the job runs from a known
    folder (:data:`CWD`), where the script never changes folder (no ``cd`` / ``pushd``: then
    ``$PWD`` is that folder throughout). holdout24 DGX Cloud torchtitan recipe: ``cd
    deepseek_v3/pretrain/torchtitan; sbatch launch.sh`` and ``LLMB_REPO=$PWD`` ... ``--job.
    config_file=$LLMB_REPO/deepseek_v3_671b.toml``: the TOML was "not set in the script". A
    folder out of the read boundary, or a script read alone, keeps it a run-time value."""
    start = (outer or {}).get(CWD)
    if not outer or not start or "PWD" in outer or any(
            f.path or f.why for _, f in walked.folders):       # (a cd: not this folder)
        return outer
    from preflight.reading.boundary import current

    boundary = current()
    folder = os.path.normpath(start)
    if not os.path.isabs(folder) or (boundary is not None and not boundary.allows(folder)):
        return outer
    return {**outer, "PWD": folder}


# argparse takes `-1` / `-.5` as a value, not an option, when no option looks like a negative
# number (CPython 3.11 Lib/argparse.py `_negative_number_matcher`): `--ckpt.save_steps -1`
_NEGATIVE = re.compile(r"-\d+\Z|-\d*\.\d+\Z")


def _read_args(out: LaunchRead, args: list[Arg], syntax: Syntax,
               where: Callable[[int], Source]) -> None:
    """Sort one launch command's arguments into overrides, flags and positionals."""
    path = out.path
    count = 0
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        src = where(arg.offset)
        why = _unknown(arg, where)
        body = arg.text
        if body.startswith("-") and not body.startswith("---") and len(body) > 1 and \
                not _NEGATIVE.match(body):
            flag, eq, raw = body.lstrip("-").partition("=")
            value: Any = raw if eq else None
            override = flag not in syntax.value_flags and (
                syntax.all_flags or (syntax.dotted_flags and "." in flag))
            takes = flag in syntax.value_flags or override
            if not eq and i < len(args) and (not args[i].text.startswith("-") or
                                             _NEGATIVE.match(args[i].text)) and (
                    takes or not (syntax.dotted_flags or syntax.all_flags or
                                  is_dotlist(args[i].text))):
                value = args[i].text
                why = why or _unknown(args[i], where)
                i += 1
            if override:
                count += 1
                if count > MAX_OVERRIDES:
                    out.problems.append(_too_many(path, src))
                    break
                try:
                    out.overrides.append((parse_flag(flag, value, why, syntax.typing), src))
                except OverrideError as exc:
                    out.problems.append(_refused(path, src, exc))
                continue
            out.flags[flag] = (Unknown(why) if why else (True if value is None else value), src)
        elif is_dotlist(body):
            count += 1
            if count > MAX_OVERRIDES:
                out.problems.append(_too_many(path, src))
                break
            try:
                out.overrides.append((parse_hydra(body, why), src))
            except OverrideError as exc:
                out.problems.append(_refused(path, src, exc))
        else:
            out.positional.append((Unknown(why) if why else body, src))


def _differing(out: LaunchRead, words: Split, syntax: Syntax, outer: dict[str, str] | None,
               where: Callable[[int], Source]) -> None:
    """Another command of the script that runs the entry point and trains (a sweep, a baseline
    before the FP8 run, or a decoy in a function never called, behind ``if false`` / ``true
    ||``, which are not followed here: redteam2 hid an FP8 rollout so) makes each setting the
    commands give differently Unknown, naming their lines: the first is not taken for the job."""
    assert out.launch is not None
    try:
        found = launches(words, lambda w: syntax.entry(w) and not not_training(w), outer)
    except TooLarge:
        return
    others = [lr for lr in found if lr.offset != out.launch.offset]
    if not others:
        return
    reads = [out]
    for other in others:
        read = LaunchRead(out.path)
        _read_args(read, list(shelldir.resolved(other.args, out.path, (outer or {}).get(
            shelldir.RUNS))), syntax, where)
        reads.append(read)
    lines = ", ".join(str(where(lr.offset).line) for lr in [out.launch, *others])
    at = where(out.launch.offset)

    def differ(name: str, values: list[Any]) -> Unknown | None:
        return launchpick.differ(name, values, lines)
    given = [{ov.path: ov.value for ov, _ in read.overrides} for read in reads]
    mine = {ov.path: src for ov, src in out.overrides}
    for key in dict.fromkeys(k for g in given for k in g):
        why = differ(".".join(key), [g.get(key, "(not given)") for g in given])
        if why is not None:
            out.overrides.append((Override("force", key, why, "(several launch lines)"),
                                  mine.get(key, at)))
    for flag in dict.fromkeys(f for read in reads for f in read.flags):
        why = differ(f"--{flag}", [read.flags[flag][0] if flag in read.flags else "(not given)"
                                   for read in reads])
        if why is not None:
            out.flags[flag] = (why, out.flags[flag][1] if flag in out.flags else at)


def _unknown(arg: Arg, where: Callable[[int], Source]) -> str | None:
    if arg.opaque:
        return arg.opaque
    if arg.conditional is not None:
        return (f"set inside an if/case branch (line {where(arg.conditional).line}) that the "
                "launch command is not in; whether it applies depends on the condition")
    return None


def _refused(path: str, src: Source, exc: OverrideError) -> ConfigProblem:
    if exc.bound:      # our limit, not the framework's: the setting is left unread
        return ConfigProblem(path, src.line, f"{exc}: not read", level="warning")
    return ConfigProblem(path, src.line, (
        f"{exc}; the framework's override parser would stop the job here"))


def _too_many(path: str, src: Source) -> ConfigProblem:
    return ConfigProblem(path, src.line, (
        f"more than {MAX_OVERRIDES:,} overrides on one launch line; only those before this "
        "line were read (no real job has that many)"), level="warning", cut=True)


@dataclass
class Merged:
    facts: dict[str, Any]
    provenance: dict[str, str]
    linked: tuple[Linked, ...]
    base: str | None             # the base config file read, if any


def merged_facts(read: LaunchRead, kind: str, base: tuple[Any, Source] | None,
                 style: str = "paths", key: str = "--config",
                 layered: Layered | None = None) -> Merged:
    """The base config named by ``base`` (its ``defaults:`` chain too) with the launch line's
    overrides applied in order, as ``config.<kind>.*`` facts.

    The base file is also returned as a :class:`Linked` so the job holds it (read again on its
    own, its values lose to these: the launch script's facts come first). A key the launch line
    deletes (``~a.b``) is kept as ``null`` so the base file's value cannot come back."""
    config = layered or Layered()
    linked: list[Linked] = []
    base_path = None
    unread: str | None = None
    if base is not None and isinstance(base[0], str) and "$" not in base[0] and \
            read.folder is not None and read.folder[0] is None and \
            not os.path.isabs(os.path.expanduser(base[0])):
        # `cd $ROOT` before it: the relative path is taken from a folder not known here
        unread = f"{key} {base[0]} is a relative path, and {read.folder[1]}"
    elif base is not None and isinstance(base[0], str) and "$" not in base[0]:
        target, src = base
        here = read.folder[0] if read.folder is not None else read.started
        if here is not None and not os.path.isabs(os.path.expanduser(target)) and (
                read.folder is not None or locate(os.path.join(here, target), read.path)):
            # relative to the folder the command runs in (after `cd DIR`, or the caller's)
            target = os.path.normpath(os.path.join(here, target))
        found = locate(target, read.path)
        linked.append(named(target, kind, read.path, src, key=key, line=src.line))
        unread = (f"{key} {target} lies outside the job and was not read"
                  if found is None and outside(target, read.path) else
                  f"{key} {target} was not found here")
        if found is not None:
            try:
                parse = parse_toml if style == "toml" else parse_yaml
                chain = load_chain(found, parse(read_text(found)), style)
                config.merge(chain.config.data,
                             lambda p: chain.config.where.get(p, found))
                base_path, unread = found, None
                if chain.problems or chain.unread:
                    why = chain.unread[0] if chain.unread else chain.problems[0].message
                    unread = (f"{key} {target}: part of its defaults chain was not read "
                              f"({why[:120]})")
            except ParseError as exc:
                unread = f"{key} {target} could not be read ({exc.message[:80]})"
    elif base is not None:
        value = base[0]
        unread = (f"{key}: {value.reason}" if isinstance(value, Unknown) else
                  f"{key} {str(value)[:80]!r} is decided at run time")
    before = set(_leaves(config))
    for ov, src in read.overrides:
        config.apply(ov, src)
    try:
        config.resolve()
    except ParseError as exc:
        read.problems.append(ConfigProblem(read.path, None, exc.message))
    facts, prov = config.facts(f"config.{kind}")
    if unread is not None and base is not None:
        # the settings the launch line does not override come from a file not read: a rule
        # that needs one of them is undetermined, never answered from defaults
        facts[f"config.{kind}.base_config"] = Unknown(unread)
        prov[f"config.{kind}.base_config"] = base[1]
    elif base_path is not None and base is not None:
        facts[f"config.{kind}.base_config"] = base_path
        prov[f"config.{kind}.base_config"] = base[1]
    for path, src in _deleted(read, before, config):
        name = f"config.{kind}." + ".".join(path)
        facts[name], prov[name] = None, src
    return Merged(facts, prov, tuple(linked), base_path)


def _leaves(config: Layered) -> list[tuple[str, ...]]:
    out = []
    todo: list[tuple[Any, tuple[str, ...]]] = [(config.data, ())]
    while todo:
        node, path = todo.pop()
        if isinstance(node, dict) and node:
            todo.extend((v, (*path, str(k))) for k, v in node.items())
        elif path:
            out.append(path)
    return out


def _deleted(read: LaunchRead, before: set[tuple[str, ...]], config: Layered,
             ) -> list[tuple[tuple[str, ...], Source]]:
    """Leaves of the base that an override removed (``~key``, or ``key=null`` / a value that
    replaces the mapping: redteam5, ``actor.megatron.fp8_config=null`` left the base's
    ``fp8_config.mode`` in the job), with that override's line."""
    now = set(_leaves(config))
    out: list[tuple[tuple[str, ...], Source]] = []
    for ov, src in read.overrides:
        n = len(ov.path)
        out.extend((p, src) for p in before if p[:n] == ov.path and p not in now)
    return out


def base_unread(facts: Any, kind: str) -> Unknown | None:
    """Why the base config a launch line named was not read (None: read, or none named)."""
    value = facts.get(f"config.{kind}.base_config")
    return value if isinstance(value, Unknown) else None
