"""Which of the files read make up the job: a folder is scanned, but only one job may come out.

Files name other files (``accelerate launch --config_file a.yaml``, accelerate's
``deepspeed_config_file``, HF ``--deepspeed ds.json``, Megatron ``--yaml-cfg``). That gives a
graph: a **root** is a file no other file read names; a root together with everything it names,
transitively, is one **candidate job** (a launch script plus the YAML and JSON it names).

- Files the user named (not found by a folder scan) are always kept, with what they name.
- A folder root that names nothing, of a kind that another candidate names but does not start
  with, is an unused leftover and is left out quietly (``ds_zero3_unused.json`` beside an
  accelerate YAML that names ``ds_zero2.json``).
- Two candidates *conflict* when they hold different files of one kind (two launch scripts, two
  accelerate YAMLs that each name their own DeepSpeed JSON). Conflicting folder candidates are
  all left out, together with every file only they name, and reported: reading one of them, or
  mixing their files, would describe a job nobody runs. A folder candidate that conflicts with a
  file the user named is left out quietly (the named file says which one).
- What is left is one job (e.g. an accelerate YAML beside a TrainingArguments YAML).

Files come out root first, then what it names in the order it names them, so a launch script's
command-line flags win over the config file they override (accelerate >= 1.5, PR #3409).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from preflight.facts import Unknown
from preflight.reading.types import ConfigProblem, ReaderOutput


@dataclass(frozen=True)
class FileRead:
    """One file read: where it came from and what it names."""

    path: str
    kind: str
    out: ReaderOutput
    origin: str                  # "given" (named by the user) | "folder" (scanned) | "linked"


def one_job(files: Sequence[FileRead], problems: list[ConfigProblem]) -> list[FileRead]:
    """The files of the one job among ``files``; problems for folders holding several jobs."""
    reals = [os.path.realpath(f.path) for f in files]
    by_real = dict(zip(reals, files))
    names = {real: [r for r in dict.fromkeys(os.path.realpath(link.path) for link in f.out.linked)
                    if r in by_real and r != real] for real, f in zip(reals, files)}
    named = {r for targets in names.values() for r in targets}
    roots = [real for real, f in zip(reals, files) if real not in named or f.origin == "given"]
    jobs = {root: _closure(root, names) for root in roots}
    reached = {r for job in jobs.values() for r in job}
    for real in reals:              # a cycle of files naming each other: its first file leads
        if real not in reached:
            roots.append(real)
            jobs[real] = _closure(real, names)
            reached.update(jobs[real])
    given = [r for r in roots if by_real[r].origin == "given"]
    folder = [r for r in roots if by_real[r].origin != "given"]

    def kinds(root: str) -> dict[str, frozenset[str]]:
        out: dict[str, set[str]] = {}
        for real in jobs[root]:
            out.setdefault(by_real[real].kind, set()).add(real)
        return {k: frozenset(v) for k, v in out.items()}

    shape = {root: kinds(root) for root in roots}

    def conflict(a: str, b: str) -> bool:
        return any(k in shape[b] and shape[a][k] != shape[b][k] for k in shape[a])

    keep = list(given)
    candidates = [r for r in folder if not any(conflict(r, g) for g in given)]
    candidates = [r for r in candidates if not _unused(r, candidates + given, jobs, by_real)]
    groups = _conflict_groups(candidates, conflict)
    for group in groups:
        if len(group) == 1:
            keep.extend(group)
        else:
            problems.append(_ambiguous(group, jobs, by_real, shape))
    order = {real: n for n, real in enumerate(reals)}
    out: list[str] = []
    for root in sorted(keep, key=order.__getitem__):
        for real in jobs[root]:
            if real not in out:
                out.append(real)
    return [by_real[r] for r in out]


def _closure(root: str, names: dict[str, list[str]]) -> list[str]:
    """``root`` and what it names, transitively: pre-order, in naming order, each once."""
    out: list[str] = []
    todo = [root]
    while todo:
        cur = todo.pop()
        if cur in out:
            continue
        out.append(cur)
        todo.extend(reversed(names[cur]))
    return out


def _unused(root: str, others: list[str], jobs: dict[str, list[str]],
            by_real: dict[str, FileRead]) -> bool:
    """A lone file of a kind that another candidate names but does not start with."""
    if len(jobs[root]) != 1:
        return False
    kind = by_real[root].kind
    return any(other != root and by_real[other].kind != kind and
               any(by_real[r].kind == kind for r in jobs[other][1:]) for other in others)


def _conflict_groups(roots: list[str], conflict: Callable[[str, str], bool]) -> list[list[str]]:
    """Roots joined by conflicts (transitively), each group in the roots' order."""
    groups: list[list[str]] = []
    for root in roots:
        joined = [g for g in groups if any(conflict(root, other) for other in g)]
        merged = [r for g in joined for r in g] + [root]
        groups = [g for g in groups if g not in joined] + [merged]
    order = {r: n for n, r in enumerate(roots)}
    return sorted((sorted(g, key=order.__getitem__) for g in groups),
                  key=lambda g: order[g[0]])


def _ambiguous(group: list[str], jobs: dict[str, list[str]], by_real: dict[str, FileRead],
               shape: dict[str, dict[str, frozenset[str]]]) -> ConfigProblem:
    """One problem naming every candidate job of a folder that holds several."""
    kinds = [k for k in shape[group[0]] if all(k in shape[r] for r in group)] or \
        [by_real[group[0]].kind]
    paths = [by_real[r].path for r in group]
    folder = os.path.commonpath([os.path.dirname(p) or "." for p in paths])

    def label(root: str) -> str:
        name = os.path.relpath(by_real[root].path, folder)
        rest = [os.path.basename(by_real[r].path) for r in jobs[root][1:]]
        return f"{name}, which names {' and '.join(rest)}" if rest else name

    lone = all(len(jobs[r]) == 1 for r in group)
    what = f"{len(group)} {kinds[0]} configs" if lone else f"{len(group)} separate {kinds[0]} jobs"
    listed = (", " if lone else "; ").join(label(r) for r in group)
    return ConfigProblem(folder, None, (
        f"the folder holds {what} ({listed}); name the one the job uses (fp8-doctor check "
        "FILE ...); none of them was read"))


def config_unread(read: list[FileRead], owner: tuple[str, str, str] | None,
                  problems: Sequence[ConfigProblem]) -> list[FileRead]:
    """``read`` with ``config.<kind>.base_config`` Unknown on the file that named a config of
    its own framework (``owner``: its real path, kind, the ``file:line`` naming it) that could
    not be read (``problems``): what that config asks is not known. redteam11: ``llamafactory-
    cli train bad.yaml`` (malformed, a list at the top) was an error, yet "FP8: no"."""
    if owner is None:
        return read
    real, kind, source = owner
    why = next((p for p in problems if p.level == "error"), None)
    name = f"config.{kind}.base_config"
    out = []
    for f in read:
        if why is not None and os.path.realpath(f.path) == real and f.kind == kind and \
                not isinstance(f.out.facts.get(name), Unknown):
            facts = {**f.out.facts, name: Unknown(f"{source}: the config it names could not be "
                                                  f"read ({why.message[:120]}): the settings "
                                                  "it holds are not known")}
            f = FileRead(f.path, f.kind, ReaderOutput(facts, {**f.out.provenance, name: source},
                                                      f.out.problems, f.out.linked), f.origin)
        out.append(f)
    return out
