"""Megatron-family flags from what reaches the training command (issue 22: reading the job as
it is written).

A Megatron launch script holds more ``--flags`` than its command gets: Pai-Megatron-Patch's
examples/qwen3/run_mcore_qwen3.sh (alibaba/Pai-Megatron-Patch @ a098ca5a) writes the flags of
every precision in ``if [ $PR = fp16 ] ... elif [ $PR = fp8 ]`` arms (:319-333) and builds
``comm_overlap_option`` (:277-316) that its ``run_cmd="torchrun ... pretrain_qwen.py
${megatron_options} ... ${pr_options} ..."; eval ${run_cmd}`` (:505-510) never names. Read
text-wide, a BF16 run (``PR=$9=bf16``) was FP8 "yes" and ``--tp-comm-overlap`` made FP8D-TE-0049
fire (holdout12). Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh (``torchrun
${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${GPT_MODEL_ARGS[@]} ...``) and slime's scripts/run-*.sh
(``python3 train.py ${MODEL_ARGS[@]} ${PERF_ARGS[@]} ...``) build theirs the same way.

So the script is walked as the shell runs it (:func:`.shellexpand.launches`: variables and
arrays expanded into the command, ``eval $run_cmd`` / ``bash -c "$CMD"`` re-split, ``if`` /
``elif`` / ``case`` arms decided from values the script or its caller binds, ``$1`` ..
``${27}`` from the calling line) and the flags are those of each training launch (the ``.py``
the line runs, not a conversion or evaluation script), each at the ``file:line`` where it is
written. A flag from a branch the text does not decide, or from a value such a branch may have
replaced (:mod:`.shellmaybe`), is Unknown with the reason, never "given"; launches that differ
give a flag Unknown naming their lines. A script that cannot be walked here (past the shell
kit's bounds) or runs no training script (an argument file, a file of variables it sources)
is read text-wide as before (:func:`.megatron_args.read_args_text`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_yq
from preflight.reading import shellempty
from preflight.reading.launch import not_training
from preflight.reading.parse import MAX_FACTS_PER_FILE, MAX_ITEMS_PER_FILE, fact_value
from preflight.reading.pyenviron import Noted
from preflight.reading.shellexpand import MAX_ARGS, Arg, Launch, TooLarge, launches
from preflight.reading.shellvars import typed
from preflight.reading.shellwords import split
from preflight.reading.types import ConfigProblem, cut_short

MAX_LAUNCHES = 16
"""Training launches of one script read (a real one has one to three)."""
MAX_FLAGS = 10_000
"""Flags read from one launch or, text-wide, one file (Megatron-LM has about 600, and each costs
time to read)."""


def too_many_flags(path: str, line: int) -> ConfigProblem:
    """The cut where a launch (or a file read text-wide) passes :data:`MAX_FLAGS` flags."""
    return ConfigProblem(path, line, (
        f"more than {MAX_FLAGS:,} --flags; only those before this line were read (no real job "
        "has that many)"), cut=True)

# a flag as argparse takes it: `--name` or `--name=value`; a word with a blank in it is a value
# (argparse `_parse_optional`: "if it contains a space, it was meant to be a positional")
_FLAG = re.compile(r"--([A-Za-z0-9][A-Za-z0-9_-]*)(?:=(.*))?", re.S)
# run-time words that may hold flags: a loop's variable, a file's text (`$(cat args.txt)`);
# a variable never set in the script and other commands' output (`$(seq 16 8 256)`, values
# of slime's --sglang-cuda-graph-bs) are taken as the text-wide read took them: no flags
_HIDES = re.compile(r"for loop|may be set by what the caller sources|substitution '\$\(\s*(?:cat|xargs|jq|yq|python)\b")
# `--name=` and a value with a run-time part (`--runtime-env-json="${JSON}"`)
_NAMED = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*=")
_DOTTED = re.compile(r"--([A-Za-z0-9][A-Za-z0-9_.-]*)(?:=(.*))?", re.S)
# a word that is one run-time value and nothing else
_WHOLE = re.compile(r"\$(?:\{?[A-Za-z0-9_@*#]+\}?|\(\.\.\.\))|`\.\.\.`")


@dataclass(frozen=True)
class Arity:
    """How the flags of one parser take values."""

    bare: frozenset[str]            # store_true: never a value
    needs: frozenset[str]           # exactly one value (argparse refuses the flag bare)
    multi: frozenset[str]           # nargs '+' / '*'
    dotted: bool = False            # `--a.b v` is a flag (Primus's nested overrides)


@dataclass
class Read:
    """Flags read from the walked launches."""

    facts: dict[str, Any] = field(default_factory=dict)
    prov: dict[str, Any] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    text: str = ""          # the script, for what it sets anywhere (shellempty.assigned)


def walk(text: str, outer: dict[str, str] | None) -> list[Launch] | None:
    """The training launches of ``text`` that may run (at most :data:`MAX_LAUNCHES` + 1), or
    None: the script cannot be walked here, or runs no training script."""
    return commands(text, outer, _training, MAX_LAUNCHES + 1) or None


def not_walked(path: str, what: str) -> ConfigProblem:
    """The warning a reader gives when :func:`commands` returns None (the script is past the
    shell reader's bounds): ``what`` (e.g. "its finetrainers flags were") was not read."""
    return ConfigProblem(path, 1, "the script could not be walked here (past the shell reader's "
                         f"bounds): {what} not read", level="warning", cut=True)


def commands(text: str, outer: dict[str, str] | None, entry: Callable[[str], bool],
             limit: int) -> list[Launch] | None:
    """The commands of ``text`` that may run whose command word ``entry`` takes (at most
    ``limit``), as the shell expands them; [] when none, None when the script cannot be walked
    here (cut short by the shell kit's bounds, or too large to expand)."""
    words = split(text)
    if words.truncated_at is not None:
        return None
    try:
        return launches(words, entry, outer, limit=limit)
    except TooLarge:
        return None


def _training(word: str) -> bool:
    return word.endswith(".py") and not not_training(word)


def read(path: str, text: str, found: Sequence[Launch], prefix: str, arity: Arity) -> Read:
    """The flags of ``found`` (from :func:`walk` on ``text``, the file at ``path``)."""
    out = Read(text=text)
    lines = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line(offset: int) -> int:
        return _line(lines, offset)

    if len(found) > MAX_LAUNCHES:
        out.problems.append(ConfigProblem(path, line(found[MAX_LAUNCHES].offset), (
            f"more than {MAX_LAUNCHES} training launches; only the first were read (no real "
            "job has that many)"), level="warning", cut=True))
        found = found[:MAX_LAUNCHES]
    # `$(yq 'EXPR' FILE)` words read from the YAML where they can be (megatron_yq.py)
    per = [_one(path, megatron_yq.expanded(path, text, lr), prefix, arity, line, out)
           for lr in found]
    names: dict[str, None] = {}
    for got in per:
        names.update(dict.fromkeys(got))
    at = ", ".join(str(line(lr.offset)) for lr in found)
    for name in names:
        if len(out.facts) >= MAX_FACTS_PER_FILE and name not in out.facts:
            cut_short(out.facts, out.prov, name, next(g[name][1] for g in per if name in g))
            break
        held = [g.get(name) for g in per]
        first = next(h for h in held if h is not None)
        flag = "--" + name[len(prefix) + 1:].replace("_", "-")
        if all(h is not None and repr(h[0]) == repr(first[0]) for h in held):
            out.facts[name], out.prov[name] = first
        else:
            out.facts[name] = Unknown(f"the training launches at lines {at} differ in {flag}: "
                                      "which one runs is not known here")
            out.prov[name] = first[1]
    for lr in found:
        if len(lr.args) >= MAX_ARGS:    # the walk keeps no more: what follows, which wins,
            out.problems.append(ConfigProblem(path, line(lr.args[-1].offset), (  # is not read
                f"more than {MAX_ARGS:,} arguments on the training launch; only those before "
                "this line were read (no real job has that many)"), level="warning", cut=True))
            break
    for lr in found:
        if lr.maybe_cut is not None:
            out.problems.append(ConfigProblem(path, line(lr.maybe_cut), (
                "a variable the training launch expands holds more values from if/case "
                "branches not decided here than are read: what the rest give was not read"),
                level="warning", cut=True))
            break
    return out


def _line(lines: list[int], offset: int) -> int:
    return bisect.bisect_right(lines, offset)


def _one(path: str, lr: Launch, prefix: str, arity: Arity, line: Any,
         out: Read) -> dict[str, tuple[Any, Source]]:
    """One launch's flags: (value, where written) per fact name; a flag only some branch
    gives is Unknown."""
    got: dict[str, tuple[Any, Source]] = {}
    start = line(lr.offset)
    _flags(path, lr.before, prefix, arity, line, got, out, own=False)
    _flags(path, lr.args, prefix, arity, line, got, out)
    if assumed := [n for a in lr.args if (n := shellempty.unset_name(a)) is not None and
                   not shellempty.assigned(out.text, n)][:4]:
        # what the launch gives stands on $EXTRA_ARGS holding nothing (argparse keeps the last)
        said = ", ".join(shellempty.assumption(n) for n in assumed)
        got = {k: (v, Noted(w.path, w.line, said) if isinstance(w, Source) else w)
               for k, (v, w) in got.items()}
    maybe: dict[str, tuple[Any, Source]] = {}
    # the other values' words come from an undecided arm by definition: compared as written,
    # so a flag both values carry alike (`X="$X --more"` in a run-time `if`, after the PR arm
    # added --fp8-format: holdout21 Megatron-MoE-ModelZoo) stays given
    _flags(path, lr.maybe, prefix, arity, line, maybe, out, own=False, arm=False)
    for name, (value, where) in maybe.items():
        if name in got and repr(got[name][0]) == repr(value):
            continue        # the same either way
        flag = "--" + name[len(prefix) + 1:].replace("_", "-")
        got[name] = (Unknown(f"{flag} may be given (line {where.line}, in or replaced by an "
                             "if/case branch the text does not decide): whether it reaches the "
                             f"training launch at line {start} is not known"), where)
    return got


def _flags(path: str, args: Sequence[Arg], prefix: str, arity: Arity, line: Any,
           got: dict[str, tuple[Any, Source]], out: Read, own: bool = True,
           arm: bool = True) -> None:
    """The flags of ``args`` in order (argparse keeps the last occurrence); ``own``: the
    training script's own arguments (a run-time word there may hold more flags); ``arm``: a
    word set in an undecided if/case arm makes its flag Unknown (False: the caller compares)."""
    budget = [MAX_ITEMS_PER_FILE]
    n = 0
    count = 0
    while n < len(args):
        arg = args[n]
        n += 1
        pattern = _DOTTED if arity.dotted else _FLAG
        m = None if arg.opaque and not _NAMED.match(arg.text) else pattern.fullmatch(arg.text)
        if m is None:
            if own and arg.opaque and _HIDES.search(arg.opaque) and not any(
                    p.cut for p in out.problems):   # `for f in ...; do CMD="$CMD $f"`
                out.problems.append(ConfigProblem(path, line(arg.offset), (
                    f"the training launch gets {arg.text[:60]!r}, decided at run time "
                    f"({arg.opaque[:80]}): the flags it may hold were not read"),
                    level="warning", cut=True))
            elif own and (unset := shellempty.unset_name(arg)) is not None:
                shellempty.note(path, line(arg.offset), unset, out.problems, out.text)
            continue
        count += 1
        if count > MAX_FLAGS:
            out.problems.append(too_many_flags(path, line(arg.offset)))
            return
        flag = m.group(1).rstrip("-")
        if not flag:
            continue
        used = [arg]
        value: Any
        if m.group(2) is not None:
            value = Unknown(f"{arg.text[:60]!r} is decided at run time: {arg.opaque}") if \
                arg.opaque and _WHOLE.fullmatch(m.group(2)) else typed(m.group(2), {})
        elif flag in arity.bare:
            value = True
        else:
            values: list[Any] = []
            while n < len(args) and not _is_flag(args[n], arity.dotted):
                used.append(args[n])
                values.append(_value(args[n]))
                n += 1
                if flag not in arity.multi:
                    break
            if flag in arity.multi:
                value = fact_value(values, budget)
            elif values:
                value = values[0]
            elif flag in arity.needs:
                why = (f"--{flag} has no value here; Megatron's argparse would stop with "
                       "'expected one argument'")
                out.problems.append(ConfigProblem(path, line(arg.offset), why))
                value = Unknown(why)
            else:
                value = True
        cond = next((a.conditional for a in used if a.conditional is not None), None)
        if arm and cond is not None and not isinstance(value, Unknown):
            value = Unknown(f"--{flag} is set from line {line(cond)}, in an if/case branch the "
                            "text does not decide: whether it reaches the training launch is "
                            "not known")
        name = f"{prefix}.{flag.replace('-', '_')}"
        got.pop(name, None)     # argparse keeps the last one; keep insertion order too
        got[name] = (value, Source(path, line(arg.offset)))


def _is_flag(arg: Arg, dotted: bool = False) -> bool:
    return not arg.opaque and (_DOTTED if dotted else _FLAG).fullmatch(arg.text) is not None


def _value(arg: Arg) -> Any:
    """A value word: typed (numbers). One the script cannot know at all (``$X`` from the
    environment, ``$(...)``) is Unknown with the reason (as text, ``--fp8-format $FMT`` read
    as FP8 "no"); one with a known part stays as written (``$BASE/GLM-5.2-FP8``: the checkpoint
    readers find its FP8 name, intent reads it as set at launch)."""
    if arg.opaque and _WHOLE.fullmatch(arg.text):
        return Unknown(f"{arg.text[:60]!r} is decided at run time: {arg.opaque}")
    return arg.text if arg.opaque else typed(arg.text, {})
