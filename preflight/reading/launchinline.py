"""Python programs a launch script gives inline: ``python -c '<program>'`` and ``python - <<EOF``.

A practitioner's notes verify a Transformer Engine build with a shell block whose commands are
``python -c '...te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)...'``
(https://github.com/verdimrc/playground-nemo-2.0-gh/blob/6129a1ad5d345ee9628fa6fba4bbdc48a7d3bce3/05-byoc-te-mb/with-ngc-pytorch-25.06-cleanup.md,
holdout20's blog-byoc-te job, verify_te.sh:6-30): the readers looked for a script path after
``python`` and found no job (FP8D-CFG-NO-JOB). The program is now found here, as bash gives it
to Python, and :mod:`preflight.jobs.inlinepy` reads it as a virtual script of the shell file
(findings name that file and line); it is parsed, never run.

- ``python [opts] -c PROGRAM [args]``: the commands the shell kit expands
  (:func:`.shellexpand.launches`: quotes removed -- single, double, ``$'...'`` --, variables put
  in where the walk decides them, branches that do not run skipped, ``bash -c`` strings split
  again); a program with a value decided at run time (``"$CODE"``, ``$(cat x.py)``) or set in
  a branch not decided here is not read, with the reason.
- ``python [opts] [-] <<EOF``: the here-document's body, taken literally under a quoted
  delimiter; an unquoted one whose body expands something (``$``, a backquote) is not read.

A program that never runs (after the script's ``exit``, in a function never called:
:mod:`.shellreach`) is none; the options before ``-c`` are read as CPython reads them
(shell15: ``-Werror::DeprecationWarning -c PROG`` hid its program, the ``c`` of ``-W``'s value
taken for ``-c``).

Bounded: :data:`MAX_PROGRAMS` programs per script, :data:`MAX_PROGRAM_CHARS` characters each
(a longer one is not read, with the reason).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from preflight.reading.shell import heredocs, operator_end
from preflight.reading.shellexpand import TooLarge, launches
from preflight.reading.shellreach import unreached
from preflight.reading.shellwords import split

MAX_PROGRAMS = 8
"""Inline programs read from one script (a real one verifies a build with two or three)."""
MAX_PROGRAM_CHARS = 256 * 1024
"""Characters of one inline program (a real one is a few hundred; the read limit of a file is
1 MiB, and a program on a command line is bounded by ARG_MAX, 2 MiB on Linux)."""

MAX_HEREDOCS = 1024
"""Here-documents looked at for a ``python`` that reads its program from one."""
MAX_HEAD = 512
"""Characters of the line before ``<<`` looked at for that ``python``."""

_PYTHON = re.compile(r"python(?:[23](?:\.\d{1,3})?)?")
# CPython's options that take a value (`python -W ignore -c ...`), v3.12 Modules/main.c
_TAKES_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
_HEREDOC_CMD = re.compile(
    r"(?:^|[;&|(]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:[A-Za-z_]\w*=\S*[ \t]+)*"
    r"(?:\S*/)?python(?:[23](?:\.\d{1,3})?)?(?:[ \t]+-[^\s<>|;&]+(?:[ \t]+[^\s<>|;&-]+)?)*"
    r"(?:[ \t]+-)?[ \t]*(?:\d?<<)",
    re.MULTILINE)


@dataclass(frozen=True)
class Program:
    """One inline program: its text (None when not read: ``why``), the 1-based line of the
    shell file where its text starts, and the words after it (``sys.argv[1:]``)."""

    line: int
    text: str | None
    argv: tuple[str, ...] = ()
    why: str = ""
    offset: int = 0          # where the command stands in the shell file
    exact: bool = True       # its lines are the file's (not so for `$'a\\nb'`, `"a\\<newline>b"`)


def is_python(word: str) -> bool:
    """A command word that starts CPython (``python``, ``python3.11``, ``/opt/conda/bin/python``)."""
    return _PYTHON.fullmatch(os.path.basename(word)) is not None


def programs(text: str, raw: str, outer: dict[str, str] | None = None) -> list[Program]:
    """The inline programs of a script, in order, at most :data:`MAX_PROGRAMS`: ``text`` with
    here-document bodies blanked (its commands), ``raw`` as written (the bodies)."""
    found = _dash_c(text, outer) + _heredoc(raw)
    if found:       # (after the script's `exit`, in a function never called: never run)
        never = unreached(text)
        found = [p for p in found if never(p.offset) is None]
    return sorted(found, key=lambda p: p.offset)[:MAX_PROGRAMS]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _dash_c(text: str, outer: dict[str, str] | None) -> list[Program]:
    if "-c" not in text:
        return []
    try:
        runs = launches(split(text), is_python, outer, limit=MAX_PROGRAMS * 4)
    except TooLarge:
        return []
    found: list[Program] = []
    for run in runs:
        at = _program_at([a.text for a in run.args])
        if at is None:
            continue
        arg = run.args[at]
        line = _line(text, arg.offset)
        argv = tuple(a.text for a in run.args[at + 1:])
        why = ""
        if arg.opaque is not None:
            why = f"the program of `python -c` at line {line} is decided at run time ({arg.opaque})"
        elif arg.conditional is not None:
            why = (f"the program of `python -c` at line {line} is set in an if/case branch "
                   f"(line {_line(text, arg.conditional)}) not decided here")
        elif len(arg.text) > MAX_PROGRAM_CHARS:
            why = (f"the program of `python -c` at line {line} is {len(arg.text):,} characters, "
                   f"over the {MAX_PROGRAM_CHARS:,} read")
        # the text as written from the word's start (after `'`, `"` or `$'`): its newlines are
        # the file's; else a place inside it is put on the line the program starts (redteam14)
        exact = any(text.startswith(arg.text, arg.offset + k) for k in (0, 1, 2))
        found.append(Program(line, None if why else arg.text, argv, why, run.offset, exact))
    return found


def _program_at(words: list[str]) -> int | None:
    """The index of ``-c``'s program among the words after ``python``, or None (a script, ``-m``,
    ``-`` or nothing: no inline program)."""
    how, n = _options(words)
    return n if how == "c" and n < len(words) else None


def _options(words: list[str]) -> tuple[str, int]:
    """CPython's options among ``words`` (the words after ``python``), read as its parser reads
    them (v3.12 Python/getopt.c: a cluster ``-uWerror::c`` is ``-u`` then ``-W`` with the value
    ``error::c``; ``-W`` / ``-X`` take the rest of the word or the next one; ``-c`` / ``-m``
    end the options, their value glued or next): ("c", index of the program), ("glued", n)
    (``-cCODE``: not taken apart here), ("m", n), ("file", index of the script or ``-``),
    ("end", n) (no more words: the program is standard input), ("error", n) (a value missing:
    Python stops with a usage error)."""
    n = 0
    while n < len(words):
        word = words[n]
        if word == "--":
            return "file", n + 1
        if word == "-" or not word.startswith("-"):
            return "file", n
        if word.startswith("--"):
            if word in _TAKES_VALUE and n + 1 >= len(words):
                return "error", n
            n += 2 if word in _TAKES_VALUE else 1
            continue
        for k in range(1, len(word)):
            ch = word[k]
            if ch == "c":
                return ("glued", n) if word[k + 1:] else ("c", n + 1)
            if ch == "m":
                return "m", n
            if ch in "WX":
                if not word[k + 1:] and n + 1 >= len(words):
                    return "error", n               # "Argument expected for the -W option"
                n += 0 if word[k + 1:] else 1      # the value: glued on, or the next word
                break
        n += 1
    return "end", n


def _heredoc(text: str) -> list[Program]:
    if "<<" not in text:
        return []
    found: list[Program] = []
    for doc in heredocs(text)[:MAX_HEREDOCS]:
        if len(found) >= MAX_PROGRAMS:
            break
        head = text.rfind("\n", max(doc.at - MAX_HEAD, 0), max(doc.at, 0)) + 1
        # (a `python - <<EOF` line is short: a longer head is no such command, and a line of
        # 20,000 `<<A` is searched once per operator otherwise)
        cmd = None if doc.at < 0 or doc.at - head >= MAX_HEAD else \
            _HEREDOC_CMD.search(text, head, doc.at + 3)
        if cmd is None or not _stdin_program(cmd.group(0)):
            continue
        body = text[doc.start:doc.body_end if doc.body_end >= doc.start else doc.end]
        if doc.strip_tabs:
            body = re.sub(r"(?m)^\t+", "", body)
        line = _line(text, doc.start)
        why = ""
        if _stdin_again(text, doc.at):
            why = (f"python's standard input at line {doc.line} is redirected again after the "
                   f"here-document (<<{doc.delimiter}): the last redirection is its program")
        elif not doc.closed:
            why = (f"the here-document (<<{doc.delimiter}) of `python` at line {doc.line} is "
                   "never closed")
        elif not doc.quoted and re.search(r"[$`]", body):
            why = (f"the program python reads from the here-document at line {doc.line} expands "
                   f"shell values (<<{doc.delimiter} unquoted, a `$` or backquote in it): not "
                   "read as written")
        elif len(body) > MAX_PROGRAM_CHARS:
            why = (f"the program in the here-document at line {doc.line} is {len(body):,} "
                   f"characters, over the {MAX_PROGRAM_CHARS:,} read")
        found.append(Program(line, None if why else body, (), why, doc.at))
    return found


def _stdin_program(cmd: str) -> bool:
    """Whether the ``python [opts] [-] <<`` matched reads its program from the here-document:
    bash feeds file descriptor 0 only (``3<<EOF`` is another one), and ``-c``/``-m`` (a
    program or module given) or ``-W``/``-X`` (they take the next word) do not read stdin."""
    head = cmd.rstrip()[:-2]
    if re.search(r"[ \t][1-9]\Z", head):       # `python 3<<EOF`, not `python3<<EOF`
        return False
    words = re.sub(r"[ \t]0\Z", "", head).split()     # `python 0<<EOF`: fd 0 is stdin
    at = next((n for n, w in enumerate(words) if _PYTHON.fullmatch(os.path.basename(w))), None)
    opts = words[at + 1:] if at is not None else []
    how, n = _options(opts)
    return how == "end" or how == "file" and opts[n:] == ["-"]


_REDIRECT_IN = re.compile(r"(?:^|[ \t])0?<(?![(<])|<<")


def _stdin_again(text: str, at: int) -> bool:
    """Whether the command of the ``<<`` at ``at`` redirects standard input again later on its
    line (``python - <<A <<B``, ``<<EOF < file``): bash applies redirections left to right."""
    end = operator_end(text, at)
    if end is None:
        return False
    stop = text.find("\n", end)
    rest = re.split(r"[|;&]", text[end:stop if stop >= 0 else len(text)], maxsplit=1)[0]
    return _REDIRECT_IN.search(rest) is not None
