"""Reading a job: the files people launch FP8 jobs with -> ``config.<kind>.*`` facts.

:func:`read_paths` reads files and folders, detects each file's kind (or takes ``kind``),
follows files a config names (accelerate's ``deepspeed_config_file``, HF ``deepspeed:``), and
returns :class:`ConfigRead`: flat facts ``config.<kind>.<key path as written>`` with
``file:line`` provenance, ``config.files`` / ``config.kinds``, and problems for files that cannot
be used. It never raises for bad input: every failure is a :class:`ConfigProblem` naming the file
(and line where there is one). Per-framework details are in :mod:`preflight.frameworks`;
parsing limits in :mod:`.parse`.

A folder is one job: its config files are read (:mod:`.scan`, several levels deep); a launch
script and the files it names are one job, and a folder holding several jobs is a problem
naming them (:mod:`.graph`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from preflight.frameworks import BY_KIND, FORMATS, KINDS, best_any_format, detect, score
from preflight.jobs import scripts
from preflight.jobs.boundary import enforced
from preflight.jobs.defaults import default_paths
from preflight.jobs.formats import format_of
from preflight.jobs.graph import FileRead, one_job
from preflight.jobs.parse import (
    MAX_BYTES,
    ParseError,
    parse_json,
    parse_toml,
    parse_yaml,
    read_text,
)
from preflight.jobs.refs import not_found, resolve_missing
from preflight.jobs.scan import SCAN_DEPTH, SCAN_EXT, SCAN_MAX_BYTES, SCAN_MAX_FILES, scan
from preflight.jobs.types import ConfigProblem, ConfigRead, ReaderOutput

__all__ = ["ConfigProblem", "ConfigRead", "KINDS", "MAX_BYTES", "default_paths", "read_paths",
           "read_file"]

_PARSERS = {"yaml": parse_yaml, "json": parse_json, "toml": parse_toml}


def read_file(path: str, kind: str | None = None, *, explicit: bool = True,
              inherited: dict[str, str] | None = None) -> tuple[str | None, ReaderOutput]:
    """Read one file; returns (kind or None, output). Never raises. ``inherited``: shell
    variables a script that sources this one has set."""
    try:
        return _read_file(path, kind, explicit, inherited)
    except ParseError as exc:
        return kind, ReaderOutput(problems=(ConfigProblem(path, exc.line, exc.message, exc.level,
                                                          exc.fix, exc.code),))
    except RecursionError:
        return kind, ReaderOutput(problems=(ConfigProblem(path, None, "nested too deeply"),))
    except Exception as exc:  # noqa: BLE001 - a reader bug must still name the file, not crash
        return kind, ReaderOutput(problems=(ConfigProblem(
            path, None, f"could not interpret this file ({type(exc).__name__}: {exc})"),))


_SCRIPT_EXT = (".py", ".ipynb", ".pyw")


def _read_file(path: str, kind: str | None, explicit: bool, inherited: dict[str, str] | None,
               ) -> tuple[str | None, ReaderOutput]:
    if path.lower().endswith(_SCRIPT_EXT):
        # issue 12: `check job/train.py` was "invalid YAML ... the job would fail on it too"
        raise ParseError("this is a Python program, not a config: fp8-doctor reads the files a "
                         "job is configured with and the shell script that launches it; did "
                         "you mean the launch script?", code="not_a_config", level="warning",
                         fix="Name the launch script (train.sh) and the config files it uses, "
                             "or the job's folder.")
    text = read_text(path)
    fmt = format_of(path, text[:4096])
    if kind is not None and fmt not in FORMATS[kind]:
        if not explicit:       # `--kind X folder/`: files of other formats are not X configs
            return None, ReaderOutput()
        fmt = FORMATS[kind][0]
    if not text.strip():
        raise ParseError("empty file")
    if fmt == "text":
        return scripts.read(path, text, kind, explicit, inherited)
    parsed = _PARSERS[fmt](text)
    if parsed.data is None:
        raise ParseError("empty document (only comments or nothing)")
    if not isinstance(parsed.data, dict):
        raise ParseError(f"top level is a {type(parsed.data).__name__}, not a mapping of "
                         "settings; not a training config", parsed.line_of(()))
    detected, scores = detect(fmt, parsed.data)
    if kind is None:
        if detected is None:
            if not explicit:
                return None, ReaderOutput()
            other = best_any_format(parsed.data)
            if not scores and other is not None:
                # e.g. a DeepSpeed config saved as .yaml: DeepSpeed opens it with json.load
                raise ParseError(f"this looks like a {other} config, but {other} reads "
                                 f"{' or '.join(f.upper() for f in FORMATS[other])} only, not "
                                 f"{fmt.upper()}; the job could not load it",
                                 parsed.line_of(()))
            why = (f"it matches {' and '.join(k for k, _ in scores[:2])} equally" if scores
                   else "none of the known frameworks' keys are in it")
            raise ParseError(f"cannot tell which framework this config is for ({why}); pass "
                             "--kind to say", parsed.line_of(()))
        kind = detected
    forced: list[ConfigProblem] = []
    if kind is not None and score(kind, parsed.data) == 0 and \
            (other := best_any_format(parsed.data)) not in (None, kind):
        if not explicit:
            return None, ReaderOutput()
        # --kind is the user's word: a fragment of a docs page may lack the framework's marker
        # keys and share another's (issue 14). Read it as asked, and say so.
        forced.append(ConfigProblem(path, parsed.line_of(()), (
            f"read as a {kind} config, as --kind says, although none of its keys is a {kind} "
            f"marker and it looks like a {other} config"), level="warning", code="kind_forced",
            fix=f"If the file is a {other} config, drop --kind or pass --kind {other}."))
    out = BY_KIND[kind].read(path, parsed)
    if forced:
        out = replace(out, problems=(*forced, *out.problems))
    if parsed.duplicates:
        out = replace(out, problems=(*_duplicates(path, kind, parsed), *out.problems))
    return kind, out


def _duplicates(path: str, kind: str, parsed: Any) -> list[ConfigProblem]:
    """A key given twice: read as the framework's YAML loader reads it (issue 14)."""
    fw = BY_KIND[kind]
    key, first, later = parsed.duplicates[0]
    name = ".".join(map(str, key))
    if fw.duplicate_keys == "error":
        raise ParseError(f"{name!r} is set twice (lines {first} and {later}); {fw.title} loads "
                         "its YAML with OmegaConf, which refuses duplicate keys, so the job "
                         "would stop here", later)
    return [ConfigProblem(path, later, (
        f"{'.'.join(map(str, k))!r} is set twice (line {a} and line {b}); {fw.title} loads YAML "
        f"with PyYAML, which keeps the last value (line {b}), and so does fp8-doctor"),
        level="warning", code="duplicate_key",
        fix=f"Delete one of the two (line {a} or line {b}) so the file says what the job uses.")
        for k, a, b in parsed.duplicates]



def read_paths(paths: Sequence[str], kind: str | None = None) -> ConfigRead:
    """Read ``paths`` (files and folders) into one job's config facts. Never raises.

    Only files inside the job are read (:mod:`.boundary`, issue 21 item 2); a reference that
    leaves it is a warning at the line that makes it."""
    try:
        with enforced(paths) as bound:
            read = _read_paths(paths, kind)
        read.problems.extend(p for p in bound.refused if p not in read.problems)
        return read
    except Exception as exc:  # noqa: BLE001 - e.g. a path that is not a string; still a result
        return ConfigRead(problems=[ConfigProblem(
            ", ".join(map(str, paths)) if isinstance(paths, (list, tuple)) else str(paths), None,
            f"could not read these paths ({type(exc).__name__}: {exc})")])


def _read_paths(paths: Sequence[str], kind: str | None) -> ConfigRead:
    problems: list[ConfigProblem] = []
    if kind is not None and kind not in KINDS:
        return ConfigRead(problems=[ConfigProblem(
            str(kind), None, f"unknown config kind {kind!r}; known: {', '.join(KINDS)}")])
    seen: set[str] = set()
    todo: list[tuple[str, str | None, str]] = []               # (path, kind, origin)
    inherited: dict[str, dict[str, str]] = {}                  # sourced file -> variables
    redone: set[str] = set()
    roots: list[str] = []                                      # job roots, for named files
    scanned_other = 0
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            roots.append(path)
            scanned, total, other = scan(path, problems)
            scanned_other += other
            if len(scanned) >= SCAN_MAX_FILES or total > SCAN_MAX_BYTES:
                # A repository or a data folder, not one job: reading it all could take minutes.
                more = "+" if len(scanned) >= SCAN_MAX_FILES else ""
                problems.append(ConfigProblem(path, None, (
                    f"the folder holds {len(scanned)}{more} config-like files ({total:,} bytes); "
                    "that is not one job's configs. Name the job's files (or a folder with just "
                    "them)")))
                continue
            todo.extend((p, kind, "folder") for p in scanned)
        elif os.path.lexists(path):
            roots.append(os.path.dirname(os.path.abspath(path)))
            todo.append((path, kind, "given"))
        else:
            problems.append(ConfigProblem(path, None, "no such file or folder"))
    given = {os.path.realpath(p) for p, _, origin in todo if origin == "given"}
    known = [p for p, _, _ in todo]
    roots = list(dict.fromkeys(roots))
    overriding: set[str] = set()
    read: list[FileRead] = []
    while todo:
        path, want, origin = todo.pop(0)
        real = os.path.realpath(path)
        if real in seen and not (origin == "sourced" and real in inherited and real not in redone):
            continue
        if real in seen:
            # read before the script that sources it: read again with that script's variables
            redone.add(real)
            read = [f for f in read if os.path.realpath(f.path) != real]
        seen.add(real)
        got, out = read_file(path, want, explicit=origin not in ("folder", "sourced"),
                             inherited=inherited.get(real))
        problems.extend(out.problems)
        if got is None or (not out.facts and out.problems):
            continue
        out = _resolve_links(path, got, out, known, roots, problems)
        read.append(FileRead(path, got, out, "given" if real in given else origin))
        for link in out.linked:
            if link.overrides:
                overriding.add(os.path.realpath(link.path))
        # what a file names is read next (before the rest of a folder)
        todo[:0] = [(link.path, link.kind, "sourced" if link.optional else "linked")
                    for link in out.linked]
        inherited.update((os.path.realpath(link.path), dict(link.variables))
                         for link in out.linked if link.variables)
    outputs = [(f.path, f.kind, f.out) for f in one_job(read, problems)]
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    # Earlier files win a name, except files that replace their parent's values (--yaml-cfg).
    ranked = sorted(outputs, key=lambda o: os.path.realpath(o[0]) not in overriding)
    for _path, _kind, out in ranked:
        for name, value in out.facts.items():
            if name not in facts:
                facts[name] = value
                prov[name] = out.provenance.get(name, _path)
    files = [(p, k) for p, k, _ in outputs]
    if files:
        facts["config.files"] = [{"path": p, "kind": k} for p, k in files]
        # A launch script can hold two kinds (accelerate flags, then HF Trainer arguments).
        facts["config.kinds"] = sorted({k for _, k in files} | {
            n.split(".", 2)[1] for n in facts if n.count(".") >= 2 and
            n.split(".", 2)[1] in KINDS})
        prov["config.files"] = prov["config.kinds"] = "config"
    elif paths and not any(p.level == "error" for p in problems):
        problems.append(_nothing_read(paths, known, scanned_other))
    return ConfigRead(facts, prov, problems, files)


def _resolve_links(path: str, kind: str, out: ReaderOutput, known: list[str], roots: list[str],
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
        ref = next((r for r in BY_KIND[kind].references if r.key.endswith(link.key)), None)
        problems.append(not_found(link, path, roots, ref.resolution if ref else
                                  "relative to the directory the job is launched from"))
    return replace(out, linked=tuple(linked))


def _nothing_read(paths: Sequence[str], scanned: list[str], other: int) -> ConfigProblem:
    """The problem for a run that read no job config: never "no known problem" (issue 14)."""
    where = ", ".join(map(str, paths))
    if scanned:
        why = (f"{len(scanned)} config-like file(s) found, none recognised as a config of "
               f"{', '.join(KINDS)}")
    else:
        why = (f"no config-like file ({' '.join(SCAN_EXT)}) found, {SCAN_DEPTH} folder levels "
               f"deep" + (f"; {other} other file(s) seen" if other else ""))
    return ConfigProblem(where, None, f"no job config was read: {why}. Nothing about the job "
                         "was checked", code="no_job",
                         fix="Name the job's config files or launch script (fp8-doctor check "
                             "FILE ...), with --kind KIND for a file of a known framework that "
                             "is not recognised.")

