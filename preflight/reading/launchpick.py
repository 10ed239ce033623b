"""Which of a launch script's commands is the job, for the readers that take one command line
from the text (``accelerate launch``, HF Trainer flags, ``llamafactory-cli train``, ``axolotl
train``).

Those readers take the first match of a pattern. A decoy before the real command (redteam2, issue
21: ``accelerate launch --mixed_precision bf16`` in a function never called, behind ``if false``
or ``true ||``, in a ``case`` arm that does not match) was read as the job, and the FP8 command
after it never: FP8 "no", exit 0. Here the script's statements are walked as the override
readers walk them (:func:`.shellexpand.launches`: ``if`` / ``case`` decided where the values are
known, here-document bodies skipped); a framework says which of its commands train
(``Launch.trains`` on its record: the words they start with, or a flag they carry), so its other
commands (``export``, ``merge-lora``, a script named ``eval.py``) never count. Then:

- a training command in a branch that does not run is blanked (lines kept), never read;
- one training command that may run: read as before;
- one in a function never called or after the script's ``exit`` is none (it never runs:
  :func:`.shellexpand.launches` drops it, :mod:`.shellreach`);
- several (a sweep, a baseline, a decoy behind ``true ||``): each is read on its own, and a setting they give differently is Unknown naming their lines
  (:func:`differ`, the override readers' rule), as is each key of the config files they name
  that differs between those files. What each run reads for a setting is its command line's
  value, else the config file it names (holdout19: a command notebook of seven ``llamafactory-cli
  train`` lines, all BF16 from their YAMLs or ``--bf16``): alike in every run, it holds
  whichever runs, and its provenance says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from preflight.base.digits import ascii_digits
from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import shellempty
from preflight.reading.launch import blank, command_at, not_training
from preflight.reading.parse import MAX_FACTS_PER_FILE, ParseError, parse_yaml, read_text
from preflight.reading.pyenviron import Noted
from preflight.reading.refs import locate, resolve_missing
from preflight.reading.shellexpand import TooLarge, launches
from preflight.reading.shellvars import strip_comments
from preflight.reading.shellwords import split
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

MAX_COMMANDS = 16
"""Training commands of one script read apart (a real sweep has a few); past it, every setting
the script gives is Unknown (the one that is the job may be among those not read)."""

Reader = Callable[[str, str, dict[str, str]], ReaderOutput]
Asks = Callable[[ReaderOutput], "bool | None"]
"""Whether one launch's reading asks for FP8 (None: not known); given by the job walk, which
derives the intent (the readers' kit knows no framework)."""


def differ(name: str, values: Sequence[Any], lines: str) -> Unknown | None:
    """Unknown when ``values`` (one per training command, at ``lines``) are not all the same."""
    if len({repr(v) for v in values}) == 1:
        return None
    return Unknown(f"the script runs the training command {len(values)} times (lines "
                   f"{lines}) with {name} given differently; which run is the job is not "
                   "known here")


def _matcher(trains: Sequence[tuple[str, ...]]) -> tuple[Callable[[str], bool],
                                                          Callable[[list[str], int], bool]]:
    firsts = {seq[0] for seq in trains}

    def entry(word: str) -> bool:
        return os.path.basename(word) in firsts or word.split("=", 1)[0] in firsts

    def training(words: list[str], at: int) -> bool:
        """Whether the command ``words``, whose word ``at`` :func:`entry` accepts, is the
        framework's training command, not a script whose name says it evaluates, exports or
        merges (``accelerate launch eval.py``, ``python evaluate.py --output_dir o``)."""
        head, tail = words[at], words[at + 1:]
        if not any((os.path.basename(head) == seq[0] or head.split("=", 1)[0] == seq[0]) and
                   tail[:len(seq) - 1] == list(seq[1:]) for seq in trains):
            return False
        script = next((w for n, w in enumerate(words) if w.endswith(".py") or
                       (n and words[n - 1] in ("-m", "--module"))), None)
        return script is None or not not_training(script)
    return entry, training


def _commands(text: str, trains: Sequence[tuple[str, ...]],
              outer: dict[str, str] | None
              ) -> tuple[list[int], list[int], list[tuple[int, str]]] | None:
    """(offsets of the training commands that may run, of those that do not, and where the
    running ones expand a variable the script never sets, read as empty: :mod:`.shellempty`),
    or None when the script cannot be walked here (too large: read as before)."""
    entry, training = _matcher(trains)
    words = split(text)
    if words.truncated_at is not None:
        return None
    try:
        found = launches(words, entry, outer, limit=4 * MAX_COMMANDS)
    except TooLarge:
        return None
    runs = [lr for lr in found if training(
        [a.text for a in (*lr.before, lr.entry, *lr.args)], len(lr.before))]
    running = [lr.offset for lr in runs]
    unset = [(a.offset, n) for lr in runs for words in ([*lr.before, *lr.args],)
             for a in (words[i] for i in shellempty.standalone([w.text for w in words]))
             if (n := shellempty.unset_name(a)) is not None]
    # every command written in the script that trains, whether it runs or not
    written: list[int] = []
    for st in words.statements:
        if st.assign is not None or st.test is not None:
            continue
        texts = ["".join(p.text for p in w) for w in st.words]
        at = next((n for n, t in enumerate(texts) if entry(t)), None)
        if at is not None and training(texts, at):
            written.append(st.offset)
    return running, [o for o in written if o not in running], unset


def _span(text: str, offset: int, starts: list[int]) -> tuple[int, int]:
    """From the command's start to its line's end, or to the next command's start there."""
    _, end = command_at(text, offset)
    after = [s for s in starts if offset < s < end]
    return offset, min(after) if after else end


def read(reader: Reader, path: str, text: str, outer: dict[str, str],
         trains: Sequence[tuple[str, ...]], asks: Asks | None = None) -> ReaderOutput:
    """``reader`` on ``text``, each of whose training commands (``trains``) is read apart
    (``asks``: whether one command's reading asks for FP8, :func:`merged`)."""
    if not trains:
        return reader(path, text, outer)
    clean = strip_comments(text)
    found = _commands(clean, trains, outer)
    if found is None:
        return reader(path, text, outer)
    running, dead, unset = found
    return _said(_read(reader, path, text, outer, clean, running, dead, asks), path, clean,
                 unset)


def _said(out: ReaderOutput, path: str, clean: str, unset: list[tuple[int, str]]
          ) -> ReaderOutput:
    """The reader's output with the note for each launch word read as empty (where the
    reader took the file: a framework's settings were read from it)."""
    if not unset or not out.facts:
        return out
    problems = list(out.problems)
    for offset, name in unset:
        shellempty.note(path, clean.count("\n", 0, offset) + 1, name, problems, clean)
    return replace(out, problems=tuple(problems))


def _read(reader: Reader, path: str, text: str, outer: dict[str, str], clean: str,
          running: list[int], dead: list[int], asks: Asks | None) -> ReaderOutput:
    every = sorted({*running, *dead})
    if dead:
        text = blank(text, [_span(clean, o, every) for o in dead])
    running = sorted(set(running))
    if len(running) <= 1:
        return reader(path, text, outer)
    more = running[MAX_COMMANDS:]
    running = running[:MAX_COMMANDS]
    outs = [reader(path, blank(text, [_span(clean, o, every) for o in running if o != mine]),
                   outer) for mine in running]
    lines = ", ".join(str(clean.count("\n", 0, o) + 1) for o in running)
    merged = _fp8_runs(outs, lines, asks) or _merged(outs, lines)
    return _too_many(merged, path, clean.count("\n", 0, more[0]) + 1) if more else merged


def _too_many(out: ReaderOutput, path: str, line: int) -> ReaderOutput:
    """More training commands than :data:`MAX_COMMANDS`: (redteam3: nine BF16 decoys in
    functions never called put the FP8 command past the ones compared: FP8 "no")."""
    why = Unknown(f"the script runs the training command more than {MAX_COMMANDS} times "
                  f"(from line {line} on they were not read); which run is the job is not known "
                  "here")
    facts: dict[str, Any] = {n: why for n in out.facts}
    prov = dict(out.provenance)
    for kind in dict.fromkeys(n.split(".")[1] for n in out.facts if n.startswith("config.")):
        facts[f"config.{kind}.base_config"] = why
        prov[f"config.{kind}.base_config"] = Source(path, line)
    return ReaderOutput(facts, prov, (*out.problems, ConfigProblem(path, line, (
        f"the script runs the training command more than {MAX_COMMANDS} times; its settings "
        "are not read from here on (no real launch script does)"), level="warning", cut=True)),
        out.linked)


_ABSENT = "(not given)"
_UNREAD = "(in a config file not read here)"


def merged(outs: list[ReaderOutput], lines: str, asks: Asks | None = None) -> ReaderOutput:
    """One output of several reads of one script (each of its training commands, or each
    command that runs it with other arguments: jobs/scripts.py): a setting they give
    differently is Unknown naming ``lines``; where some of them ask for FP8 (``asks``), the
    job is those (:func:`_fp8_runs`)."""
    return _fp8_runs(outs, lines, asks) or _merged(outs, lines)


def _fp8_runs(outs: list[ReaderOutput], lines: str, asks: Asks | None) -> ReaderOutput | None:
    """The lead's policy (session 43, shell17): a script whose launches differ in FP8
    (holdout21 Megatron MoE model zoo, run_mixtral_8x22B.sh: two BF16 runs of
    ``sbatch_benchmarking.sh``, then ``PR=fp8``) asks for FP8, since the checks are about the
    FP8 run: its settings are that launch's (launches asking FP8 that differ among themselves:
    Unknown, as before), each noted "k of N launches ask FP8". A launch whose FP8 is not known
    keeps FP8 Unknown unless another one asks (None: no launch asks, or ``asks`` not given)."""
    if asks is None or len(outs) < 2:
        return None
    cache: dict[str, dict[str, Any] | None] = {}
    # what each launch asks with the config files it names (`llamafactory-cli train b.yaml`
    # whose b.yaml says fp8: true), its command line winning as in :func:`_merged`
    said = [asks(ReaderOutput({**{k: v for k, v in _files({
        (link.kind, link.key): link for link in out.linked if not link.after}, cache).items()
        if not k.endswith(_UNREAD)}, **out.facts}, out.provenance)) for out in outs]
    fp8 = [n for n, s in enumerate(said) if s is True]
    if not fp8 or len(fp8) == len(outs):
        return None
    each = lines.split(", ")
    each = each if len(each) == len(outs) else [lines] * len(outs)
    at = ", ".join(dict.fromkeys(each[n] for n in fp8))
    at = f"line{'s' if len(fp8) > 1 else ''} {at}" if ascii_digits(at.replace(", ", "")) else at
    note = (f"{len(fp8)} of {len(outs)} launches ask{'s' if len(fp8) == 1 else ''} FP8 "
            f"(at {at}): the job's settings are read from "
            f"{'that launch' if len(fp8) == 1 else 'those launches'}")
    got = _merged([outs[n] for n in fp8], at)
    prov = {name: Noted(src.path, src.line, note) if isinstance(src, Source) and
            not isinstance(got.facts[name], Unknown) else src
            for name, src in got.provenance.items()}
    problems = tuple(dict.fromkeys(p for out in outs for p in out.problems))
    return ReaderOutput(got.facts, prov, problems, got.linked)


def _merged(outs: list[ReaderOutput], lines: str) -> ReaderOutput:
    """What every run reads for a setting: its command line's value, else the config file it
    names (holdout19: a command notebook, seven ``llamafactory-cli train`` lines, six naming a
    YAML with ``bf16: true`` and one giving ``--bf16``: all BF16, whichever runs), else nothing
    (the framework's default). The same for every run: that value holds, noted in its
    provenance; not the same, or in a config file not read here: Unknown naming ``lines``."""
    cache: dict[str, dict[str, Any] | None] = {}
    configs = [{(link.kind, link.key): link for link in out.linked if not link.after}
               for out in outs]
    files = [_files(c, cache) for c in configs]
    slots = list(dict.fromkeys(s for c in configs for s in c))
    same = all(len({c[s].path if s in c else None for c in configs}) == 1 for s in slots)
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    note = f"the {len(outs)} runs at lines {lines} all give this"
    for name in dict.fromkeys(n for out in outs for n in out.facts):
        values = [out.facts[name] if name in out.facts else _value(f, name)
                  for out, f in zip(outs, files)]
        src = next(out.provenance[name] for out in outs if name in out.provenance)
        why = differ(name.split(".", 2)[-1], values, lines)
        facts[name] = why if why is not None else values[0]
        prov[name] = src if why is not None or len(outs) < 2 or not isinstance(src, Source) \
            else Noted(src.path, src.line, note)
    problems = list(dict.fromkeys(p for out in outs for p in out.problems))
    linked = list(dict.fromkeys(link for out in outs for link in out.linked))
    if same:
        return ReaderOutput(facts, prov, tuple(problems), tuple(linked))
    # a config file one command names and another does not (`llamafactory-cli train a.yaml`,
    # then `... b.yaml`): each key the files give differently is Unknown here, where the
    # script's settings win over its files'
    at = next(c[s].source for c in configs for s in c)
    for name in dict.fromkeys(k for f in files for k in f):
        if name in facts:         # compared above, with the command lines
            continue
        if name.endswith(_UNREAD):
            continue
        values = [_value(f, name) for f in files]
        why = differ(
            f"{name.split('.', 2)[-1]} (in the config file each names)", values, lines)
        if why is not None and len(facts) < MAX_FACTS_PER_FILE:
            facts[name], prov[name] = why, at
    for kind in dict.fromkeys(s[0] for s in slots):
        if any(f.get(f"config.{kind}.{_UNREAD}") for f in files):
            name = f"config.{kind}.base_config"
            facts[name] = Unknown(f"the script runs the training command with different config "
                                  f"files (lines {lines}), one of them not read here; which run "
                                  "is the job is not known here")
            prov[name] = at
    return ReaderOutput(facts, prov, tuple(problems), tuple(linked))


def _files(named: dict[tuple[str, str], Linked], cache: dict[str, dict[str, Any] | None]
           ) -> dict[str, Any]:
    """What the config files one run names give, by fact name (the first file naming a key
    wins, as jobs/walk.py reads them); a file not read here puts ``_UNREAD`` under its kind."""
    out: dict[str, Any] = {}
    for (kind, _), link in named.items():
        if link.path not in cache:
            cache[link.path] = _flat(link)
        data = cache[link.path]
        if data is None:
            out[f"config.{kind}.{_UNREAD}"] = True
            continue
        for key, value in data.items():
            out.setdefault(f"config.{kind}.{key}", value)
    return out


def _value(files: dict[str, Any], name: str) -> Any:
    """What one run's config files give for fact ``name`` (``_UNREAD``: one of them, of that
    kind, is not read here; ``_ABSENT``: none gives it)."""
    kind = name.split(".", 2)[1] if name.startswith("config.") and name.count(".") >= 2 else ""
    if files.get(f"config.{kind}.{_UNREAD}"):
        return files.get(name, _UNREAD)
    return files.get(name, _ABSENT)


def _flat(link: Linked) -> dict[str, Any] | None:
    """The keys (dotted) and values of the YAML a command names; None when it is not read
    here (outside the job, found nowhere, not YAML). One not next to the script is looked for
    where the walk looks next (the job's roots: ``llamafactory-cli train qwen/a.yaml`` in
    ``qwen/train.sh``, run from the repository's top)."""
    found = resolve_missing(link, (), ()) if link.missing else locate(link.path, link.path)
    if found is None:
        return None
    try:
        data = parse_yaml(read_text(found)).data
    except ParseError:
        return None
    out: dict[str, Any] = {}

    def walk(value: Any, prefix: str, depth: int) -> None:
        if isinstance(value, dict) and depth < 16:
            for k, v in value.items():
                walk(v, f"{prefix}{k}.", depth + 1)
        elif len(out) < MAX_FACTS_PER_FILE:
            out[prefix.rstrip(".")] = value

    if isinstance(data, dict):
        for k, v in data.items():
            walk(v, f"{k}.", 1)
    return out
