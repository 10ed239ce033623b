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

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from preflight.frameworks import BY_KIND, FORMATS, KINDS, best_any_format, detect, score
from preflight.jobs import pyjob, scriptcalls, scripts
from preflight.jobs.defaults import default_paths
from preflight.jobs.formats import SCRIPT_EXT, format_of, split_entry
from preflight.jobs.walk import UNRECOGNISED, Walk
from preflight.reading import textcache
from preflight.reading.boundary import enforced
from preflight.reading.parse import (
    MAX_BYTES,
    ParseError,
    parse_json,
    parse_toml,
    parse_yaml,
    read_text,
)
from preflight.reading.pyenviron import Environ
from preflight.reading.types import ConfigProblem, ConfigRead, ReaderOutput

__all__ = ["ConfigProblem", "ConfigRead", "KINDS", "MAX_BYTES", "UNRECOGNISED", "default_paths",
           "read_file", "read_paths", "split_entry"]

_PARSERS = {"yaml": parse_yaml, "json": parse_json, "toml": parse_toml}


def read_file(path: str, kind: str | None = None, *, explicit: bool = True,
              inherited: dict[str, str] | None = None, argv: tuple[str, ...] | None = None,
              entry: str | None = None, environ: Environ | None = None,
              syspath: str | None = None) -> tuple[str | None, ReaderOutput]:
    """Read one file; returns (kind or None, output). Never raises. ``inherited``: shell
    variables a script that sources this one has set; ``argv``: the arguments a launch line
    passes to this (Python) script, ``environ`` the environment it gives it; ``entry``: the
    function of a Python file the user named (``config_registry.py::llama3_8b``); ``syspath``:
    the folder a module run with ``-m`` was found from (its imports are found there)."""
    try:
        if path.lower().endswith(SCRIPT_EXT):
            return pyjob.read(path, kind, explicit, argv, entry, environ, syspath)
        return _read_file(path, kind, explicit, inherited)
    except ParseError as exc:
        return kind, ReaderOutput(problems=(ConfigProblem(path, exc.line, exc.message, exc.level,
                                                          exc.fix, exc.code),))
    except Exception as exc:  # noqa: BLE001 - a reader bug (RecursionError too) must name the file
        if path.lower().endswith(SCRIPT_EXT):
            # Python too deep for the parser is a ParseError above; past it, the file is valid and
            # the limit is the reader's own (eval16: a `global` counter recursed): not an error of
            # the user's file, and nothing is read from it
            return kind, ReaderOutput(problems=(ConfigProblem(
                path, None, f"fp8-doctor could not follow this script ({type(exc).__name__}); "
                "what it sets is not known", "warning"),))
        if isinstance(exc, RecursionError):
            return kind, ReaderOutput(problems=(ConfigProblem(path, None, "nested too deeply"),))
        return kind, ReaderOutput(problems=(ConfigProblem(
            path, None, f"could not interpret this file ({type(exc).__name__}: {exc})"),))




def unknown_fix() -> str:
    """The fix for a valid file no framework's keys match: not "the job would fail on it"."""
    from preflight.frameworks import FRAMEWORKS

    return ("fp8-doctor reads the files of " + ", ".join(f.title for f in FRAMEWORKS) +
            ". If this file is one of those, pass --kind KIND; if it is another framework's, its "
            "settings are not checked (the file itself is fine: it parsed).")


def _read_file(path: str, kind: str | None, explicit: bool, inherited: dict[str, str] | None,
               ) -> tuple[str | None, ReaderOutput]:
    text = read_text(path)
    fmt = own = format_of(path, text[:4096])
    if kind is not None and fmt not in FORMATS[kind]:
        if not explicit:       # `--kind X folder/`: files of other formats are not X configs
            return None, ReaderOutput()
        if FORMATS[kind][0] == "python":
            raise ParseError(f"--kind {kind} is read from Python scripts only", code="not_a_config",
                             level="warning")
        fmt = FORMATS[kind][0]
    if not text.strip():
        raise ParseError("empty file")
    if fmt == "text":
        return scripts.read(path, text, kind, explicit, inherited)
    try:
        parsed = _PARSERS[fmt](text)
        if parsed.data is None:
            raise ParseError("empty document (only comments or nothing)")
        if not isinstance(parsed.data, dict):
            raise ParseError(f"top level is a {type(parsed.data).__name__}, not a mapping of "
                             "settings; not a training config", parsed.line_of(()))
    except ParseError as exc:
        if fmt == own or kind is None:
            raise
        # --kind chose the format, not the file: a valid launch script read as YAML is not
        # broken, and the job would not fail on it (audit of issue 22 item 5 on eafd747).
        raise ParseError(
            f"--kind {kind} reads {' or '.join(f.upper() for f in FORMATS[kind])}, but this file "
            f"looks like {_AS.get(own, own.upper())} and is no {fmt.upper()} config "
            f"({exc.message}): not read, so FP8 is undetermined", exc.line, code="kind_forced",
            level="warning", fix=f"Drop --kind {kind}, or name the job's {BY_KIND[kind].title} "
            "config file itself.") from None
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
            raise ParseError(f"cannot tell which framework this config is for ({why}); the "
                             f"file is valid {fmt.upper()}, so it may be a framework fp8-doctor "
                             "does not read", parsed.line_of(()), code="unknown_framework",
                             level="warning", fix=unknown_fix())
        kind = detected
    forced: list[ConfigProblem] = []
    if kind is not None and score(kind, parsed.data) == 0:
        other = best_any_format(parsed.data)
        if other is not None and not explicit:
            return None, ReaderOutput()
        # --kind is the user's word: a fragment of a docs page may lack the framework's marker
        # keys and share another's (issue 14). Read it as asked, and say so; with none of its
        # settings found, nothing in it says what the job asks for: FP8 is undetermined, never
        # "not asked" (issue 22 item 5: --kind megatron on a Megatron-Bridge file was FP8: no).
        forced.append(kind_forced(path, parsed.line_of(()), kind, other))
    out = BY_KIND[kind].read(path, parsed)
    if forced:
        out = replace(out, problems=(*forced, *out.problems),
                      facts={**out.facts, UNRECOGNISED: [path]})
    if parsed.duplicates:
        out = replace(out, problems=(*_duplicates(path, kind, parsed), *out.problems))
    return kind, out


_AS = {"text": "a launch script or argument file", "json": "JSON", "toml": "TOML",
       "yaml": "YAML"}


def kind_forced(path: str, line: int | None, kind: str, other: str | None) -> ConfigProblem:
    """The warning for a file read as ``--kind`` says with none of that framework's keys."""
    title = BY_KIND[kind].title
    return ConfigProblem(path, line, (
        f"read as a {kind} config, as --kind says, although none of {title}'s settings is in it"
        + (f" and it looks like a {other} config" if other else "")
        + "; nothing in it says what the job asks for, so FP8 is undetermined"),
        level="warning", code="kind_forced",
        fix=(f"If the file is a {other} config, drop --kind or pass --kind {other}." if other
             else f"If the file is not a {title} config, drop --kind; fp8-doctor does not read "
                  "its framework, so name the job's files of a framework it reads."))


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
        with enforced(paths) as bound, textcache.per_check(), scriptcalls.per_check():
            read = _read_paths(paths, kind)
        read.problems.extend(p for p in bound.refused if p not in read.problems)
        return read
    except Exception as exc:  # noqa: BLE001 - e.g. a path that is not a string; still a result
        return ConfigRead(problems=[ConfigProblem(
            ", ".join(map(str, paths)) if isinstance(paths, (list, tuple)) else str(paths), None,
            f"could not read these paths ({type(exc).__name__}: {exc})")])


def _read_paths(paths: Sequence[str], kind: str | None) -> ConfigRead:
    if kind is not None and kind not in KINDS:
        return ConfigRead(problems=[ConfigProblem(
            str(kind), None, f"unknown config kind {kind!r}; known: {', '.join(KINDS)}")])
    walk = Walk(kind)
    walk.add(paths)
    walk.run()
    return walk.result(paths)
