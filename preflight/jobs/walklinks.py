"""What the walk (:mod:`.walk`) does around reading each file: the files a folder's scripts
write (their copies in the folder are not the job's), the files a reader named but did not find
(looked for further, :mod:`preflight.reading.refs`), and the problem for a run that read nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.jobs.scan import SCAN_DEPTH, SCAN_EXT
from preflight.reading.refs import not_found, resolve_missing
from preflight.reading.types import ConfigProblem, ReaderOutput

SHELL_EXT = (".sh", ".bash", ".slurm", ".sbatch")


def written(scripts: Sequence[str]) -> dict[str, str]:
    """The files the folder's scripts write (``cat > acc.yaml <<EOF``), by name -> why the copy
    in the folder is not read: what runs is what the script writes (redteam4; the launch
    script's own reading says so at the line that uses it, :mod:`.reading.shellwrites`)."""
    from preflight.reading.parse import ParseError, read_text
    from preflight.reading.shell import blank_heredocs, heredocs
    from preflight.reading.shellvars import collect_variables, strip_comments
    from preflight.reading.shellwrites import writes

    out: dict[str, str] = {}
    for script in scripts:
        try:
            text = read_text(script)
        except (ParseError, OSError):
            continue
        folder = os.path.dirname(os.path.abspath(script))
        # closing lines kept: blanked, the lexer took the first `<<EOF` as never closed and
        # missed every write after it (jobs/scripts.py; redteam11)
        text = strip_comments(blank_heredocs(text, [
            replace(d, end=d.body_end) if d.closed and d.body_end >= d.start else d
            for d in heredocs(text)]))
        for name, line in writes(text, collect_variables(text)).items():
            out.setdefault(os.path.normpath(os.path.join(folder, name)), (
                f"written by {os.path.basename(script)} at line {line} before it runs: the "
                "copy here is not what the job uses"))
    return out


def resolve_links(path: str, kind: str, out: ReaderOutput, known: list[str], roots: list[str],
                   problems: list[ConfigProblem]) -> ReaderOutput:
    """Look further for the files ``out`` names that its reader did not find (:mod:`.refs`)."""
    if not any(link.missing for link in out.linked):
        return out
    linked = []
    for link in out.linked:
        if not link.missing:
            linked.append(link)
            continue
        found = resolve_missing(link, known, roots)
        if found is not None:
            linked.append(replace(link, path=found, missing=False))
            continue
        ref = next((r for r in _references(kind) if r.key.endswith(link.key)), None)
        problems.append(not_found(link, path, roots, ref.resolution if ref else
                                  "relative to the directory the job is launched from"))
        if link.kind == kind and not (link.after or link.optional):
            # the file holding this framework's settings (`llamafactory-cli train x.yaml`,
            # `accelerate launch --config_file x.yaml`) was not read: what it asks is Unknown,
            # never "no FP8 setting in the configs read" (redteam3: a missing, FIFO or
            # /dev/zero config gave FP8 "no")
            name = f"config.{kind}.base_config"
            if name not in out.facts:
                out = replace(out, facts={**out.facts, name: Unknown(
                    f"{link.key or 'the config'} {link.path[:80]} was not read here: the "
                    "settings it holds are not known")},
                    provenance={**out.provenance, name: link.source})
    return replace(out, linked=tuple(linked))


def _references(kind: str) -> Any:
    from preflight.frameworks import BY_KIND

    return BY_KIND[kind].references


def nothing_read(paths: Sequence[str], scanned: list[str], other: int) -> ConfigProblem:
    """The problem for a run that read no job config: never "no known problem" (issue 14)."""
    where = ", ".join(map(str, paths))
    if scanned:
        why = (f"{len(scanned)} config-like file(s) found, none recognised as a config of "
               f"{', '.join(_kinds())}")
    else:
        why = (f"no config-like file ({' '.join(SCAN_EXT)}) found, {SCAN_DEPTH} folder levels "
               f"deep" + (f"; {other} other file(s) seen" if other else ""))
    return ConfigProblem(where, None, f"no job config was read: {why}. Nothing about the job "
                         "was checked", code="no_job",
                         fix="Name the job's config files or launch script (fp8-doctor check "
                             "FILE ...), with --kind KIND for a file of a known framework that "
                             "is not recognised.")



def _kinds() -> tuple[str, ...]:
    from preflight.frameworks import KINDS

    return KINDS
