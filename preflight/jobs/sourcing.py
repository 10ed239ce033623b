"""``source FILE`` / ``. FILE`` in a launch script: followed inside the job, never executed.

Megatron-LM's example scripts keep shared settings in a script they ``source``; read alone, the
main script's ``--${PRECISION:-bf16}`` and ``$GPT_ARGS`` were empty, and the two scripts in one
folder looked like two jobs (issue 14). :func:`sourced` finds the files a script sources (its own
folder, then the current directory; ``$(dirname "$0")``-style prefixes mean the script's folder),
reads them bounded (:data:`MAX_DEPTH` levels, :data:`MAX_FILES` files, each through the same
size-capped reader as any config) and returns them with the variables they assign. A path built
from other variables is not guessed at. A file outside the job (``~/.bashrc``,
``/etc/environment``, ``../../x``, a symlink out of the job: :mod:`.boundary`) is never read: it
is a warning at the ``source`` line (issue 21 item 2).
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.reading import launchroot, shelldir
from preflight.reading.boundary import outside_reference, refuse
from preflight.reading.parse import ParseError, read_text
from preflight.reading.shell import blank_heredocs, heredocs
from preflight.reading.shellargs import ENVIRON
from preflight.reading.shellexpand import Eval, TooLarge
from preflight.reading.shellexports import SOURCED, encode, exported_names
from preflight.reading.shellheredoc import kept_text
from preflight.reading.shellstops import errexit
from preflight.reading.shellvars import collect_variables, strip_comments
from preflight.reading.shellwords import split
from preflight.reading.shellwrites import writes, written_before
from preflight.reading.types import ConfigProblem

MAX_DEPTH = 3
MAX_FILES = 8

_SOURCE = re.compile(r"""^[ \t]*(?:source|\.)[ \t]+"""
                     r"""("[^"\n]+"|'[^'\n]+'|(?:\$\([^)\n]*\)|[^\s;&|])+)""", re.M)
# `$SCRIPT_DIR/` / `$DIR/` set where this script cannot see (its caller): taken as the script's
# own folder. `$(dirname "$0")/`, `$(dirname $SCRIPT_PATH)/` with SCRIPT_PATH="${BASH_SOURCE[0]}"
# (Megatron-LM examples/rl/model_configs/*.sh @ d98e8a6), `${BASH_SOURCE%/*}/` and a SCRIPT_DIR
# the script computes are read as bash computes them (reading/shelldir.py: _evaluated).
_SELF_DIR = re.compile(r"""^"?\$\{?(?:SCRIPT_DIR|DIR)\}?"?/""")




def _candidates(raw: str, script: str, runs: str | None = None
                ) -> tuple[list[str], str | None]:
    """Existing files ``source RAW`` in ``script`` may mean (its folder first, then the current
    directory), and the path it names when that is certain: one under the script's own folder
    (the ``$(dirname ...)`` / ``$SCRIPT_DIR`` idioms) and not built from other variables. A
    plain relative path is resolved by bash from the launch directory, which is not known here,
    and an absolute one is a file of the machine the job runs on: neither is certain."""
    raw = raw.strip("\"'")
    relative = bool(_SELF_DIR.match(raw)) or shelldir.starts(raw)
    raw = shelldir.settle(raw, script, runs) if shelldir.starts(raw) else \
        _SELF_DIR.sub(lambda _: os.path.dirname(os.path.abspath(script)) + os.sep, raw)
    if "$" in raw or "`" in raw:
        return [], None
    raw = os.path.expanduser(raw)
    cands = [raw] if os.path.isabs(raw) else [os.path.join(os.path.dirname(script), raw), raw]
    return ([os.path.normpath(c) for c in cands if os.path.isfile(c)],
            os.path.normpath(cands[0]) if relative else None)


def _missing(raw: str, named: str, script: str, body: str, pos: int) -> ConfigProblem:
    """``source RAW`` names a file of the job that is not there (slime v0.3.1's
    scripts/low_precision/*.sh source ``${SCRIPT_DIR}/../scripts/models/...``, which names
    scripts/scripts/models/)."""
    line = body.count("\n", 0, pos) + 1
    stops = errexit(body, pos)
    where = os.path.relpath(named)
    where = named if where.startswith("..") else where
    then = (f"under `set -e` (line {stops}) bash stops the script at this line, so the job "
            "would not start" if stops is not None else
            "bash goes on without it, so the variables and flags it would set are missing from "
            "the launch line")
    return ConfigProblem(
        script, line, f"sources {shelldir.shown(raw.strip(chr(34) + chr(39)))!r}, which is {where} (the path "
        f"starts at this script's folder), and no such file exists: {then}; its settings were "
        "not read",
        level="warning", code="reference",
        fix="Fix the path (bash resolves it from the current directory, or from the script's "
            "folder where it starts with $(dirname ...) / $SCRIPT_DIR); if the file exists where "
            "the job is launched, name it too when you run fp8-doctor.")


_CD = re.compile(r"(?:^|[;&|(]|\bthen|\bdo|\belse)\s*(?:cd|pushd)\b", re.MULTILINE)
"""A ``cd`` / ``pushd`` command: after one, the folder a relative ``source`` path is taken from
is where it went, not the repository's top."""

_REF = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _substituted(raw: str, text: str, at: int) -> str:
    """``source ./${training_script}``: each ``$NAME`` the script set before that line to a
    literal value put in (OpenRLHF's slurm wrapper, examples/scripts/train_nonrl_slurm.sh at
    v0.11.0: ``readonly training_script="train_dpo_llama.sh"``); any other is left, and the
    path is then not guessed at."""
    if "$" not in raw or not _REF.search(raw):
        return raw
    variables = collect_variables(text[:at])

    def put(m: re.Match[str]) -> str:
        value = variables.get(m.group(1) or m.group(2))
        ok = value is not None and not re.search(r"[$`\x00\s]", value)
        return value if ok and value is not None else m.group(0)
    return _REF.sub(put, raw)


def _evaluated(text: str, at: int, variables: dict[str, str]) -> str | None:
    """The path the ``source`` at ``at`` names as the shell kit expands it there, when it is
    under the script's own folder (:mod:`preflight.reading.shelldir`'s marker: ``source
    "$(dirname "$0")/../lib/env.sh"``, whose nested quotes the line pattern cut); else None."""
    end = text.find("\n", at)
    words = split(text[:len(text) if end < 0 else end])
    ev = Eval({k: v for k, v in variables.items() if not re.search(r"[$`]", v)})
    try:
        ev.prepare(words)
        for st in words.statements:
            if st.offset < at:
                ev.step(st)
                continue
            fields = ev.command(st)
            if len(fields) < 2 or any(s.opaque for s in fields[1]):
                return None
            got = "".join(s.text for s in fields[1])
            return got if shelldir.starts(got) else None
    except TooLarge:
        return None
    return None


def _target(raw: str, script: str, line: int, runs: str | None = None, above: bool = False,
            ) -> tuple[str | None, launchroot.Found]:
    """The file to follow, or None; one that lies only outside the job is reported
    (:func:`preflight.reading.boundary.outside_reference`), never read; ``above``: a plain
    relative path found nowhere else is looked up from the folders above ``script`` (that
    lookup returned too: the caller warns when two folders hold it)."""
    found, named = _candidates(raw, script, runs)
    inside = [c for c in found if not refuse(c)]
    if inside:
        return inside[0], launchroot.Found()
    if found:
        outside_reference(found[0], script, line, "sources")
    if found or not above or named is not None:
        return None, launchroot.Found()
    # a path relative to the repository's top, where the job is launched (reading/launchroot)
    where = launchroot.find(raw.strip("\"'"), script)
    return where.path, where


def sourced(script: str, text: str, missing: list[ConfigProblem] | None = None,
            inherited: dict[str, Any] | None = None) -> tuple[list[str], dict[str, str]]:
    """Files ``script`` sources (transitively, bounded) and the variables they set; a file of the
    job it names that does not exist is added to ``missing``. ``inherited``: what the caller
    gives; its environment (``PR=fp8 bash s.sh``) is what a sourced ``export PR=${PR:-bf16}``
    keeps (holdout21: read without it, every run of the ModelZoo wrapper was BF16)."""
    found: list[str] = []
    names = str((inherited or {}).get(ENVIRON) or "").split(",")
    variables: dict[str, str] = {n: v for n, v in (inherited or {}).items()
                                 if n in names and isinstance(v, str) and n.isidentifier()}
    todo = [(script, text, 0)]
    reals = {os.path.realpath(script)}      # the script and what it sources: followed once
    exports: dict[str, tuple[str, ...] | None] = {}     # what each exports (shellexports)
    while todo:
        path, body, depth = todo.pop(0)
        clean = strip_comments(body)
        wrote = writes(clean, collect_variables(clean, variables))
        walks = 0
        for m in _SOURCE.finditer(clean):
            line = body.count("\n", 0, m.start(1)) + 1
            walks += "$" in m.group(1)      # each a walk of the text before it: a few
            raw = (_evaluated(clean, m.start(), variables) if "$" in m.group(1) and
                   walks <= MAX_FILES else None) or _substituted(m.group(1), clean, m.start())
            above = _CD.search(clean, 0, m.start()) is None    # a `cd` before it decides
            target, where = _target(raw, path, line, script, above)
            at = written_before(wrote, target, line, os.path.dirname(os.path.abspath(path))) \
                if target is not None else None
            if target is not None and at is not None:
                # the script writes it first (`cat > env.sh <<EOF`): the file in the job is
                # not what is sourced (redteam4)
                if missing is not None and len(missing) < MAX_FILES:
                    missing.append(ConfigProblem(path, line, (
                        f"sources {os.path.basename(target)[:120]!r}, which this script writes "
                        f"itself at line {at}: the file of that name in the job is not what "
                        "runs, so it was not read"), level="warning", code="reference"))
                continue
            if target is None and missing is not None:
                cands, named = _candidates(raw, path, script)
                if not cands and named is not None and not refuse(named) and \
                        len(missing) < MAX_FILES:
                    missing.append(_missing(raw, named, path, clean, m.start(1)))
                said = where.problem(path, line, "sources", raw.strip("\"'"))
                if said is not None and len(missing) < MAX_FILES:
                    missing.append(said)
            if target is None or os.path.realpath(target) in reals:
                continue
            if len(found) >= MAX_FILES:
                return found, {**variables, SOURCED: encode(exports)}
            try:
                # a here-document's body is text: no `source` or assignment in it counts,
                # unless a variable takes it (`read -r -d '' CMD <<EOF`: reading/shellheredoc)
                raw = read_text(target)
                docs = heredocs(raw)          # once, for the text run and the one expanded
                inner = blank_heredocs(raw, docs)
            except (ParseError, OSError):
                continue          # the job reader reports it when it reads that file itself
            found.append(target)
            reals.add(os.path.realpath(target))
            exports[target] = exported_names(inner)
            # the sourced file sees what the script set before this line (ModelZoo's
            # `${TRAINING_SCRIPT_PATH:-"${MEGATRON_PATH}/pretrain_gpt.py"}`, MEGATRON_PATH set
            # by the wrapper above its `source`: holdout21)
            scope = collect_variables(clean[:m.start()], variables, script=path)
            variables = collect_variables(kept_text(raw, docs) if "<<" in raw else inner,
                                          scope, script=target, runs=script)
            if depth + 1 < MAX_DEPTH:
                todo.append((target, inner, depth + 1))
    return found, {**variables, SOURCED: encode(exports)} if exports else variables


_MAX_PUT = 200_000      # characters put in, in all (bounds the text searched)


def expanded(text: str, outer: dict[str, str]) -> str:
    """``text`` with each ``$NAME`` a sourced script (or the caller) sets put in, to find the
    framework whose command only that value holds: OpenRLHF's slurm wrapper sources the
    script that builds ``training_commands`` and runs ``torchrun ... -m ${training_commands}``
    (examples/scripts/train_nonrl_slurm.sh at v0.11.0). "" when nothing is put in."""
    if not outer or "$" not in text:
        return ""
    put = [0]           # characters put in so far: at most _MAX_PUT in all

    def sub(m: re.Match[str]) -> str:
        value = outer.get(m.group(1) or m.group(2))
        if value is None or value.startswith("\x00") or put[0] + len(value) > _MAX_PUT:
            return m.group(0)
        put[0] += len(value) + 1
        return value
    out = _REF.sub(sub, text)
    return out if put[0] else ""
