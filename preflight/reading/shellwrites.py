"""The files a shell script writes itself (``cat > acc.yaml <<EOF``, ``tee``, ``echo ... >``,
``cp`` / ``mv`` / ``ln`` / ``install`` / ``rsync``, ``sed -i``, ``curl -o``, ``wget -O``) before
a line that uses them.

Why (redteam4, issue 21): launch scripts generate configs and scripts (a Slurm script writing an
accelerate YAML or an inner ``run.sh`` from a here-document, then launching with it). What runs
is what the script wrote, not the file of that name in the job folder: a stale ``acc.yaml``
saying ``bf16`` beside a script that writes ``mixed_precision: fp8`` into it was read as the
job's config, FP8 "no". Such a file is not read for the job; the line that uses it gets a
warning and, where it holds the framework's settings, they are Unknown.

A write is recognised by its shape on one line, scanned word by word (linear; a line past
:data:`MAX_LINE` characters is not scanned); its target is compared as a path, as written and
relative to the script's folder (``cp acc.yaml $OUT/acc.yaml`` writes another file; a target
built from a variable is not matched: not covered).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.base.digits import ascii_digits
from preflight.facts import Unknown
from preflight.reading.types import ConfigProblem, Linked

MAX_LINE = 4096
"""Characters of one line scanned for writes."""
MAX_NAMES = 256
"""Files remembered per script."""
UNSEEN = "\0unseen"
"""The key under which :func:`writes` puts the first line it could not scan for writes (too
long, past :data:`MAX_CHARS`, past :data:`MAX_NAMES` files): any file used after it may be
written there."""

_ASSIGN = re.compile(r"^[A-Za-z_]\w*\+?=")
MAX_CHARS = 262144
"""Characters of a script scanned in all (past them, later writes are not seen)."""
_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", "|&", ";;"}
_WRITE = {">", ">>", ">|", "&>", "&>>", ">&"}
_LAST = {"cp", "mv", "ln", "install", "rsync"}
_HINTS = (">", "tee", "cp", "mv", "ln", "install", "rsync", "sed", "curl", "wget", "perl",
          "yq", "sponge", "dd")


_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_PYWRITE = re.compile(r"""\bopen\(\s*(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?(['"])[wax]b?\+?\3"""
                      r"""|\bPath\(\s*(['"])([^'"\n]+)\4\s*\)\.write_(?:text|bytes)\(""")


def _name(word: str, variables: Mapping[str, str] | None = None) -> str:
    """A write target as a path to compare (``./`` and ``a/../`` folded; ``$CFG`` / ``${CFG}``
    as the script sets it, where that is known text)."""
    if "$" in word and variables:
        word = _VAR.sub(lambda m: v if isinstance(v := variables.get(m.group(1) or m.group(2)),
                                                  str) and "$" not in v else m.group(0), word)
    return os.path.normpath(word) if word else ""


def _command(words: list[str], line: int, out: dict[str, int],
             variables: Mapping[str, str] | None) -> None:
    """The files one simple command (its words, quotes removed, operators apart) writes."""
    targets: list[str] = []
    args: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _WRITE or word[-1:] == ">" and word.strip("<>&|") == "":
            target = words[i + 1] if i + 1 < len(words) else ""
            if word in _WRITE and not (word == ">&" and ascii_digits(target)) and \
                    target not in ("-", ""):
                targets.append(target)
            if args and ascii_digits(args[-1]) and words[i - 1] == args[-1]:
                args.pop()               # `2> f`: the descriptor, no argument
            i += 2
            continue
        if word in ("<", "<<", "<<<", "<>", "<&"):
            i += 2
            continue
        if args or not _ASSIGN.match(word):
            args.append(word)
        i += 1
    base = os.path.basename(args[0]) if args else ""
    rest = args[1:]
    if base == "tee":
        targets += [w for w in rest if not w.startswith("-")]
    elif base in _LAST and (to := _target_dir(rest)) is not None:
        # `cp -t DIR a.yaml` / `--target-directory=DIR` (redteam5): DIR/<each source>
        targets += [os.path.join(to, os.path.basename(w)) for w in rest if not w.startswith("-")
                    and w != to]
    elif base in _LAST and len(rest) > 1:
        targets.append(rest[-1])
    elif base in ("sed", "perl", "yq") and rest and any(
            w.startswith(("-i", "--in-place", "--inplace")) or
            base == "perl" and w.startswith("-") and "i" in w[1:] and not w.startswith("--")
            for w in rest):
        targets.append(rest[-1])         # (perl -pi -e, yq -i: redteam5)
    elif base == "sponge" and rest:
        targets.append(rest[-1])
    elif base == "dd":
        targets += [w[3:] for w in rest if w.startswith("of=")]
    elif base in ("curl", "wget"):
        flag = "-o" if base == "curl" else "-O"
        for j, word in enumerate(rest):
            if word in (flag, "--output", "--output-document") and j + 1 < len(rest):
                targets.append(rest[j + 1])
            elif word.startswith(("--output=", "--output-document=")):
                targets.append(word.split("=", 1)[1])
    for target in targets:
        name = _name(target, variables)
        if name and len(out) < MAX_NAMES:
            out.setdefault(name, line)
        elif name:
            out.setdefault(UNSEEN, line)


command_writes = _command
"""The files one simple command (its words, quotes removed) writes, into ``out`` (name -> line):
:mod:`.shellfiles` forgets what it knew of them."""


def _target_dir(rest: list[str]) -> str | None:
    for j, word in enumerate(rest):
        if word in ("-t", "--target-directory") and j + 1 < len(rest):
            return rest[j + 1]
        if word.startswith("--target-directory="):
            return word.split("=", 1)[1]
    return None


def writes(text: str, variables: Mapping[str, str] | None = None,
           code: str | None = None) -> dict[str, int]:
    """The path of each file ``text`` writes (as written, normalised; ``variables``: what the
    script's ``$NAME`` hold) -> the line of its first write. Words are split as the shell quotes them (:mod:`shlex`, operators apart); a line
    whose quotes do not close there is not scanned."""
    out: dict[str, int] = {}
    budget = MAX_CHARS
    # Python in a here-document (`python - <<EOF`, bodies blanked in ``text``: ``code`` has them)
    # opening the file for writing (redteam5)
    for number, line in enumerate((text if code is None else code).splitlines()[:20000], 1):
        if ("open(" in line or ".write_" in line) and len(line) <= MAX_LINE:
            for m in _PYWRITE.finditer(line):
                if len(out) < MAX_NAMES:
                    out.setdefault(_name(m.group(2) or m.group(5), variables), number)
    for number, raw in enumerate(text.splitlines(), 1):
        if not any(h in raw for h in _HINTS):
            continue
        budget -= len(raw)
        if len(raw) > MAX_LINE or budget < 0:
            # not scanned: what it (or any later line) writes is not known, so a file used
            # after it may be one it writes (redteam5: a stale acc.yaml was read as the job)
            out.setdefault(UNSEEN, number)
            if budget < 0:
                break
            continue
        lexer = shlex.shlex(raw, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:               # a quote closed on a later line
            continue
        words: list[str] = []
        for token in tokens:
            if token in _OPERATORS or set(token) <= set(";&|()") and token:
                if words:
                    _command(words, number, out, variables)
                words = []
            else:
                words.append(token)
        if words:
            _command(words, number, out, variables)
    return out


def written_before(written: dict[str, int], path: str, line: int | None,
                   folder: str) -> int | None:
    """The line where the script (in ``folder``) writes ``path`` before ``line`` (None: it does
    not; a use with no line counts any write). The path is compared as named and relative to
    ``folder``: ``cp acc.yaml $OUT/acc.yaml`` (a copy kept with the outputs) is another file."""
    names = {_name(path), _name(os.path.relpath(os.path.abspath(path), folder)), UNSEEN}
    at = min((written[n] for n in names if n in written), default=None)
    return at if at is not None and (line is None or at < line) else None


def unwritten(path: str, written: dict[str, int], links: Sequence[Linked], kind: str | None,
              problems: list[ConfigProblem], facts: dict[str, Any]) -> list[Linked]:
    """``links`` (files the script ``path`` names) less those it writes before the line naming
    them, each said at that line; one holding ``kind``'s settings makes them Unknown
    (``config.<kind>.base_config`` in ``facts``; ``base_config`` where ``kind`` is None),
    never the stale file's."""
    kept: list[Linked] = []
    for link in links:
        at = None if link.included or link.after else \
            written_before(written, link.path, link.line, os.path.dirname(os.path.abspath(path)))
        if at is None:
            kept.append(link)
            continue
        name = os.path.basename(link.path)
        if len(problems) < MAX_NAMES:
            how = (f"which this script writes itself at line {at}" if written.get(UNSEEN) != at
                   else f"which line {at} of this script may write (a line not scanned: too "
                        "long, or past the bounds of the scan)")
            problems.append(ConfigProblem(path, link.line, (
                f"uses {name[:120]!r}, {how}: what runs is what it writes, not the file of "
                "that name in the job, so that file was not read"), level="warning",
                code="reference"))
        if (kind is None or link.kind == kind) and not link.optional:
            # kind None: the framework is not known yet (the scripts a launch line runs)
            facts.setdefault(f"config.{kind}.base_config" if kind else "base_config", Unknown(
                f"{name[:80]} is written by the launch script at line {at}: the settings it "
                "holds when the job runs are not known"))
    return kept
