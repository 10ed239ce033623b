"""Command lines in shell scripts, framework-neutral: the ``\\``-continued line around a match,
its words, its ``--flag [value]`` pairs, and the facts a line gives with their ``file:line``.

What a framework's flags mean is its own module's business (``accelerate launch`` flags in
:mod:`preflight.frameworks.accelerate_launch`, TrainingArguments flags in
:mod:`preflight.frameworks.hf_trainer`); this module only cuts lines into words the way the
readers of launch lines share.

Values: numbers as int/float, ``true``/``false`` (any case) as bools, bare flags as ``true``;
``$VAR`` / ``${VAR:-default}`` from simple assignments in the same script.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import launchedit
from preflight.reading.parse import MAX_FACTS_PER_FILE, usable_key
from preflight.reading.refs import named
from preflight.reading.shellbranch import argv_word
from preflight.reading.shellvars import collect_variables, expand_flag_names, strip_comments, typed
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput, cut_short

_END = {";", "&&", "||", "|", "&"}
_TOKEN = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|\$\{[^}\n]*\}|[^\s"'])+|\S""")
"""A word: quoted strings and ``${...}`` whole (bash splits neither: ``${FP8:?set FP8}`` is one
word, shell17), else up to a blank; a lone quote that never closes is a word of its own."""

Token = tuple[str, int]          # text, offset in the script


def command_at(text: str, pos: int) -> tuple[int, int]:
    """Start and end offsets of the ``\\``-continued command line that contains ``pos``."""
    start = text.rfind("\n", 0, pos) + 1
    while start > 1 and text[start - 2] == "\\":
        start = text.rfind("\n", 0, start - 1) + 1
    end = pos
    while True:
        nl = text.find("\n", end)
        if nl == -1:
            return start, len(text)
        if text[nl - 1] != "\\":
            return start, nl
        end = nl + 1


_MESSAGE = re.compile(r"[ \t]*(?:echo|printf|logger|log|info|warn|print)\b")


def in_message(text: str, pos: int) -> bool:
    """Whether ``pos`` is in a line that only prints text (``echo "Starting training with
    accelerate launch..."`` runs no accelerate), or in a command that edits, copies or reads
    files and runs none (``sed -i '...' run_script.py``: :mod:`.launchedit`); a quoted command
    kept in a variable (``CMD="accelerate launch ..."``) still counts."""
    start, _ = command_at(text, pos)
    return _MESSAGE.match(text, start) is not None or launchedit.not_run(text, pos)


def find(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` outside a line that only prints (64 tried at most)."""
    for n, m in enumerate(pattern.finditer(text)):
        if n >= 64:
            return None
        # a pattern may match the blank before the command (torchtune's `(?:^|\s)tune run`):
        # that newline ends the line above, which is not the command's (redteam6: an `echo`
        # above hid `tune run` from every reader)
        word = m.group(0)
        if not in_message(text, m.start() + len(word) - len(word.lstrip())):
            return m
    return None


MAX_ARGS = 10_000
"""Words of one command line read; a real launch line has fewer than a hundred, and each word
costs time (900 KB of `--x 1 \\` lines took 1.5 s)."""


def tokens(text: str, start: int, end: int) -> list[Token]:
    """The words of ``text[start:end]`` up to the first ``;``, ``&&``, ``|`` ... (one command)."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text, start, end):
        if m.group(0) == "\\":
            continue
        if m.group(0) in _END or len(out) > MAX_ARGS:
            break
        out.append((m.group(0), m.start()))
    return out


def flags(words: list[Token], bare: set[str] | frozenset[str], stop_at_positional: bool,
          ) -> tuple[list[tuple[str, str | None, int]], int]:
    """``(flag, raw value or None, offset)`` for each ``--flag``; and where parsing stopped
    (the first positional word when ``stop_at_positional``: the training script)."""
    found: list[tuple[str, str | None, int]] = []
    i = 0
    while i < len(words):
        tok, pos = words[i]
        if not tok.startswith("--"):
            if stop_at_positional and not tok.startswith("-"):
                return found, i
            i += 1
            continue
        flag, eq, inline = tok[2:].partition("=")
        raw: str | None = inline if eq else None
        if not eq and flag not in bare and i + 1 < len(words) and \
                not words[i + 1][0].startswith("-"):
            nxt = words[i + 1][0]
            if not (stop_at_positional and nxt.endswith(".py")):
                raw = nxt
                i += 1
        found.append((flag, raw, pos))
        i += 1
        if flag in {"m", "module"} and stop_at_positional:
            return found, i + 1
    return found, len(words)


def value(raw: str | None, variables: dict[str, str]) -> Any:
    """A flag's value as the readers store it (bare flag: true; ``$VAR`` expanded)."""
    if raw is None:
        return True
    got = typed(raw, variables)
    if isinstance(got, str) and got.lower() in {"true", "false"}:
        return got.lower() == "true"
    return got


class Out:
    """What one script gives: facts with their ``file:line``, problems, files it names."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.facts: dict[str, Any] = {}
        self.prov: dict[str, str] = {}
        self.problems: list[ConfigProblem] = []
        self.linked: list[Linked] = []

    def line(self, pos: int) -> int:
        return bisect.bisect_right(self.lines, pos)

    def where(self, pos: int) -> str:
        return Source(self.path, self.line(pos))

    def put(self, name: str, value: Any, pos: int) -> None:
        if len(self.facts) >= MAX_FACTS_PER_FILE and name not in self.facts:
            # 100,000 flags are no launch line; each fact costs time to report
            cut_short(self.facts, self.prov, name, self.where(pos))
            return
        self.facts[name] = value
        self.prov[name] = self.where(pos)

    def put_flags(self, found: list[tuple[str, str | None, int]], kind: str,
                  variables: dict[str, str], follow: dict[str, str] | None = None) -> None:
        """Each ``--flag value`` as ``config.<kind>.<flag>``; a flag of ``follow`` whose value
        ends with its suffix names a config of the framework of that name, which is linked
        (the HF Trainer's and LLaMA-Factory's ``--deepspeed ds.json``)."""
        for flag, raw, pos in found:
            if not usable_key(flag):
                continue
            value_ = value(raw, variables)
            self.put(f"config.{kind}.{flag}", value_, pos)
            suffix = (follow or {}).get(flag)
            if suffix and isinstance(value_, str) and value_.endswith(suffix):
                self.link(value_, flag, pos, f"--{flag}")

    def link(self, target: Any, kind: str | None, pos: int, flag: str, own: bool = False) -> None:
        """``target`` linked to be read as ``kind``; ``own``: it is the file of this launch's
        framework (``accelerate launch --config_file``), so one known only when the script runs
        (``$(mktemp)``, a path out of the job) makes ``config.<kind>.base_config`` Unknown:
        redteam10, FP8 "no" from a config never read."""
        if not isinstance(target, str) or "$" in target:
            if own and kind:
                why = target.reason if hasattr(target, "reason") else repr(str(target)[:80])
                self.put(f"config.{kind}.base_config", Unknown(
                    f"{flag} {why[:160]}: the file is known only when the script runs, the "
                    "settings it holds are not known"), pos)
            return
        self.linked.append(named(target, kind or "", self.path, self.where(pos), key=flag,
                                 line=self.line(pos)))

    def too_long(self, words: list[Token]) -> None:
        """A problem for a command line cut at :data:`MAX_ARGS` words (and the cut)."""
        if len(words) > MAX_ARGS:
            self.problems.append(ConfigProblem(
                self.path, self.line(words[MAX_ARGS][1]),
                f"the command line has more than {MAX_ARGS:,} words; only those before this "
                "line were read (no real launch line is that long)", cut=True))
            del words[MAX_ARGS:]


MAX_SCRIPTS = 8
"""Python scripts taken from one launch script (a real one starts one or two)."""
# `colossalai run [--hostfile F] [--include H] [--nproc_per_node N] ... script.py ARGS`: click
# options then the user script and its args (colossalai/cli/launcher/__init__.py L8-L69 @ v0.5.0)
BIN = r"(?:(?<![^\s;&|(])[^\s;&|()'\"`<>]*/bin/|(?<![\w/.-]))"
"""Where a command word may start: at a word's start, or after a ``.../bin/`` path
(``/opt/conda/bin/python train.py``, ``$VENV/bin/torchrun``: redteam11, such jobs were
unread), never inside another path (``logs/torchrun.txt``)."""
_LAUNCHER = re.compile(
    BIN + r"(?:python[0-9.]*|torchrun|deepspeed|accelerate[ \t]+launch|accelerate-launch|"
    r"composer|srun|mpirun|uv[ \t]+run|colossalai[ \t]+run|"
    r"-m[ \t]+torch\.distributed\.(?:run|launch))(?![\w-])")
LAUNCHER = _LAUNCHER
"""Words that start a launcher (also :mod:`.launchvar`'s, a variable holding them)."""


def launcher_commands(text: str) -> Iterator[tuple[re.Match[str], list[tuple[str, int]]]]:
    """Each command of ``text`` a launcher starts (``python``, ``torchrun``, ``accelerate
    launch``, ...: :data:`_LAUNCHER`), once, with the words after the launcher; none inside a
    message (``echo``, a here-document): :func:`python_scripts`' and ``pymodrun``'s walk."""
    done: set[int] = set()
    for m in _LAUNCHER.finditer(text):
        start, end = command_at(text, m.start())
        if start in done or in_message(text, m.start()):
            continue
        done.add(start)
        yield m, tokens(text, m.end(), end)


def python_scripts(text: str, variables: dict[str, str]) -> list[tuple[str, tuple[str, ...], int]]:
    """``(script, its arguments, offset)`` for each ``.py`` a launcher runs (``python
    train.py ...``, ``torchrun ... train.py ...``, ``accelerate launch ... train.py``): the first
    word ending in ``.py`` after the launcher, with ``$VAR`` expanded, and the words after it."""
    found: list[tuple[str, tuple[str, ...], int]] = []
    for _, words in launcher_commands(text):
        if len(found) >= MAX_SCRIPTS:
            break
        script = next((i for i, (w, _) in enumerate(words)
                       if str(typed(w, variables)).endswith(".py")), None)
        if script is None or words[script][0].startswith("-"):
            continue
        path = str(typed(words[script][0], variables))
        argv = tuple(argv_word(w, text, variables) for w, _ in words[script + 1:])
        found.append((path, argv, words[script][1]))
    return found


_TORCHRUN = re.compile(BIN + r"(?:torchrun|-m[ \t]+torch\.distributed\.run)(?![\w-])")
_SIZE_FLAGS = {"--nproc_per_node": "nproc_per_node", "--nproc-per-node": "nproc_per_node",
               "--nnodes": "nnodes"}


def torchrun_size(text: str, variables: dict[str, str], script_pos: int) -> dict[str, Any]:
    """``{nproc_per_node, nnodes}`` the torchrun before the script at ``script_pos`` gives, as
    whole numbers; a value that is not one (``gpu``, ``auto``, an elastic ``1:4``, ``$N``
    unset) is left out (torch.distributed.run at v2.10.0: ``--nproc-per-node`` takes
    ``auto|cpu|gpu|N``, ``--nnodes`` ``N`` or ``MIN:MAX``)."""
    start, _ = command_at(text, script_pos)
    m = _TORCHRUN.search(text, start, script_pos)
    if m is None:
        return {}
    words = tokens(text, m.end(), script_pos)
    out: dict[str, Any] = {}
    for i, (word, _) in enumerate(words):
        name, eq, value = word.partition("=")
        if name not in _SIZE_FLAGS:
            continue
        if not eq:
            value = words[i + 1][0] if i + 1 < len(words) else ""
        got = str(typed(value, variables)).strip("\"'")
        if re.fullmatch(r"[0-9]{1,6}", got):
            out[_SIZE_FLAGS[name]] = int(got)
    return out


# What a launch script runs after (or beside) training: evaluation, inference, export, merging
# LoRA, checkpoint conversion, serving. Their flags are not the job's config (ms-swift's
# examples/megatron/fp8/lora.sh trains with --merge_lora false, then runs `megatron export
# --merge_lora true` on the BF16 model; held-out benchmark 2026-11-27).
_AFTER_WORDS = frozenset({
    "eval", "evals", "evaluate", "evaluation", "infer", "inference", "export", "exporter",
    "merge", "merger", "merging", "convert", "conversion", "converter", "generate",
    "generation", "serve", "server", "serving", "deploy", "predict", "prediction", "quantize",
    "upload", "download", "preprocess", "prepare", "chat", "sample", "sampling"})
_TRAIN_WORDS = frozenset({"train", "training", "trainer", "pretrain", "finetune", "sft", "ppo",
                          "grpo", "dpo", "rlhf"})


def not_training(script: str) -> bool:
    """Whether a Python script's name says it evaluates, exports, merges, converts or serves
    rather than trains (``eval.py``, ``merge_lora.py``, ``tools/checkpoint/convert.py``,
    ``verl.trainer.main_generation``); a name with a training word (``train_eval.py``) trains."""
    name = re.split(r"[/\\]", script.strip("\"'"))[-1].removesuffix(".py")
    words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w}
    if "." in name:        # a module (-m pkg.mod): its last part names it
        words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", name.rsplit(".", 1)[-1]) if w}
    return bool(words & _AFTER_WORDS) and not words & _TRAIN_WORDS


def blank_commands(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with each ``\\``-continued command line holding a match of ``pattern`` blanked
    (spaces, line breaks kept: every other line keeps its number), so a reader of the rest never
    takes that command's flags for the job's. A line that only prints is left alone."""
    spans: list[tuple[int, int]] = []
    for n, m in enumerate(pattern.finditer(text)):
        if n >= 256:
            break
        if spans and m.start() < spans[-1][1]:
            continue            # in a command already blanked: each line is walked once
        if in_message(text, m.start()):
            continue
        spans.append(command_at(text, m.start()))
    return _blank(text, spans)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue
        out.append(text[at:start])
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        at = end
    out.append(text[at:])
    return "".join(out)


blank = _blank
"""``text`` with each ``(start, end)`` span blanked, line breaks kept."""


def without_after_training(text: str, variables: dict[str, str]) -> str:
    """``text`` with the command lines that run a script :func:`not_training` blanked, when
    another line runs one that trains (a script that only evaluates is still read as it is)."""
    runs = python_scripts(text, variables)
    after = [pos for script, _, pos in runs if not_training(script)]
    if not after or len(after) == len(runs):
        return text
    return _blank(text, list({command_at(text, pos) for pos in after}))


MAX_OTHER_COMMANDS = 16
"""Commands of a tool that do not train (export, merge, eval, ...) whose config is linked."""


def read_tool_script(path: str, text: str, outer: dict[str, str] | None, *,
                     train: re.Pattern[str], other: re.Pattern[str], kind: str, key: str,
                     train_args: Callable[[Out, list[Token], dict[str, str]], None],
                     config_ends: tuple[str, ...], skip_flags: bool = False) -> ReaderOutput:
    """A launch script of a tool with subcommands (``axolotl train``, ``llamafactory-cli
    train``): ``train_args`` reads the words of the first training command; the config file
    each other command names (its first word, or first non-flag word with ``skip_flags``) is
    linked as run after training, never as the job's config."""
    text = strip_comments(text)
    variables = collect_variables(text, outer, script=path)
    text = expand_flag_names(text, variables)
    out = Out(path, text)
    match = find(train, text)
    if match is not None:
        _, end = command_at(text, match.start())
        words = tokens(text, match.end(), end)
        out.too_long(words)
        train_args(out, words, variables)
    for n, cmd in enumerate(other.finditer(text)):
        if n >= MAX_OTHER_COMMANDS or in_message(text, cmd.start()):
            continue
        _, end = command_at(text, cmd.start())
        words = tokens(text, cmd.end(), end)
        first = next((w for w in words if not (skip_flags and w[0].startswith("-"))), None)
        if first is None:
            continue
        config = str(value(first[0], variables))
        if config.lower().endswith(config_ends) and "$" not in config:
            link = named(config, kind, path, out.where(first[1]), key=key,
                         line=out.line(first[1]))
            if not link.missing:
                out.linked.append(replace(link, after=True))
    return ReaderOutput(out.facts, out.prov, tuple(out.problems), tuple(out.linked))
