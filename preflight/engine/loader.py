"""Finding, parsing and validating rule files into a :class:`RuleSet`.

``load_rules(None)`` loads the bundled rule base: ``rules/`` next to the package in a source
checkout, else ``preflight/_rules`` inside an installed wheel (pyproject's hatch force-include).
Files are parsed with :mod:`preflight.base.yamlsafe` (safe YAML, duplicate keys and language tags
refused with line numbers) and validated by :mod:`preflight.engine.schema`.

Compiled rule sets are cached in memory only (keyed by every file's path, size and mtime), never
on disk: fp8-doctor writes no files the user did not ask for.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import preflight
from preflight.base import bounded
from preflight.engine import index as rules_index
from preflight.engine.model import Problem, Reporter, Rule, RuleLoadError, RuleSet
from preflight.engine.schema import build_rule
from preflight.errors import UserInputError

if TYPE_CHECKING:
    from preflight.base import yamlsafe

# PyYAML (and yamlsafe over it) is imported where a file is parsed, not here: a check on an
# installed wheel loads the bundled rules from their index (preflight.engine.index) and, with no
# YAML config to read, never needs it (~11 ms of import).

_CACHE: dict[tuple[object, ...], RuleSet] = {}
_SUFFIXES = (".yaml", ".yml")
RULE_FILE_MAX_BYTES = 1024 * 1024
"""A rule file is a few KiB; more is not a rule (and is not read past this)."""


def _package_dir() -> Path:
    return Path(preflight.__file__).resolve().parent


def bundled_rules_dir() -> Path:
    """The bundled rules: repo ``rules/`` in a checkout, ``preflight/_rules`` in a wheel."""
    pkg = _package_dir()
    installed = pkg / "_rules"
    if installed.is_dir():
        return installed
    return pkg.parent / "rules"


def rule_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Every rule file under ``paths`` (files are taken as given; folders are searched), sorted."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(Path(f) for f in sorted(_walk(path)))
        elif path.is_file():
            out.append(path)
        elif os.path.exists(path):
            # A FIFO, device or socket named on the command line: refused, never opened.
            kind = bounded.kind_of(os.stat(path).st_mode)
            raise RuleLoadError([Problem(str(path), None, f"is {kind}, not a rule file")])
        else:
            raise RuleLoadError([Problem(str(path), None, "no such rule file or folder")])
    return out


RULES_MAX_FILES = 2000
"""Rule files one folder may hold (the bundled base has a few hundred)."""
RULES_MAX_ENTRIES = 20_000
"""Files and folders a rule-folder walk looks at before it gives up: ``--rules /`` walked and
parsed the whole disk (issue 21 item 6); folder scans of jobs stop the same way."""
RULES_MAX_DEPTH = 8
"""Folder levels below a rule folder."""


def _walk(folder: Path) -> list[str]:
    """The rule files under ``folder``; a folder past the limits is a load error naming it."""
    found: list[str] = []
    seen = 0
    top = str(folder).rstrip(os.sep).count(os.sep)
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # no .git, .cache, ...
        seen += len(dirs) + len(names)
        found.extend(os.path.join(root, n) for n in names
                     if n.endswith(_SUFFIXES) and not n.startswith("."))
        deep = root.rstrip(os.sep).count(os.sep) - top >= RULES_MAX_DEPTH and dirs
        if seen > RULES_MAX_ENTRIES or len(found) > RULES_MAX_FILES or deep:
            why = (f"folders nested more than {RULES_MAX_DEPTH} deep" if deep and
                   seen <= RULES_MAX_ENTRIES and len(found) <= RULES_MAX_FILES else
                   f"more than {RULES_MAX_FILES:,} rule files or {RULES_MAX_ENTRIES:,} entries")
            raise RuleLoadError([Problem(str(folder), None, (
                f"holds {why}: not a rule pack (a folder of rule files); name the pack's "
                "folder, not a parent of it"))])
    return found


def parse_file(path: Path, *, with_tests: bool = True,
               entry: Mapping[str, Any] | None = None) -> tuple[Rule | None, list[Problem]]:
    """Parse and validate one rule file; returns the rule (None on errors) and all problems.

    ``with_tests=False`` is the fast path for ``check``: the inline ``tests:`` block (about half
    of a rule file's YAML, and never evaluated by a check) is blanked before parsing, keeping
    every other line where it was, and the rule gets no test cases. ``rules lint`` / ``test``
    and the catalogue always load the whole file. On that path an ``entry`` of the wheel's rule
    index (:mod:`preflight.engine.index`) replaces the YAML when the file still matches it.
    """
    shown = str(path)
    try:
        # Regular files only, capped: a FIFO named *.yaml in a rule folder hung `rules lint`
        # and `check --rules` (issue 13 item 2).
        data = bounded.read_bytes(path, RULE_FILE_MAX_BYTES)
    except bounded.NotRegularFile as exc:
        return None, [Problem(shown, None, f"is {exc.kind}, not a rule file; not read")]
    except bounded.TooLarge:
        return None, [Problem(shown, None, f"over {RULE_FILE_MAX_BYTES:,} bytes, far larger "
                                           "than a rule file; not read")]
    except OSError as exc:
        return None, [Problem(shown, None, f"cannot read: {exc.strerror or exc}")]
    if not with_tests and entry is not None and b"<<" not in data \
            and entry.get("digest") == rules_index.digest(data):
        rule, problems = _from_index(shown, rules_index.entry_data(entry))
        if rule is not None and not problems:
            return rule, problems
        # Anything to report needs the YAML's line numbers: parse the file after all.
    from preflight.base import yamlsafe

    try:
        loaded, data = _load_yaml(data, with_tests)
    except yamlsafe.YamlError as exc:
        return None, [Problem(shown, exc.line, exc.message)]
    if loaded.data is None:
        return None, [Problem(shown, 1, "the rule file is empty: a rule file is one YAML "
                                        "mapping (id, title, severity, when, ...)")]
    merge = _merge_key_line(data) if b"<<" in data else None
    if merge is not None:
        # Configs may use merge keys; a rule may not: `<<: {severity: warning}` next to
        # `severity: error` loads silently with one of the two, and a reviewer reads the other.
        return None, [Problem(shown, merge, "YAML merge keys (<<) are not allowed in a rule "
                                            "file: write every key out in the rule itself")]
    # yamlsafe refused anything nested more than MAX_DEPTH deep, so build_rule cannot recurse
    # out of the stack.
    rep = Reporter(shown, loaded.line_of, data.decode("utf-8", "replace"))
    return build_rule(loaded.data, rep), rep.problems


def _from_index(shown: str, doc: Any) -> tuple[Rule | None, list[Problem]]:
    """A rule from its index entry (the file still matches it): the same validation, no YAML.
    No line map and no text: with anything to report, the caller parses the YAML instead."""
    rep = Reporter(shown, lambda _path: None)
    return build_rule(doc, rep), rep.problems


def _load_yaml(data: bytes, with_tests: bool) -> tuple[yamlsafe.Loaded, bytes]:
    """The parsed file (and the bytes it was parsed from), tests blanked when not wanted."""
    from preflight.base import yamlsafe

    if not with_tests:
        quick = without_tests(data)
        if quick is not data:
            try:
                return yamlsafe.load(quick), quick
            except yamlsafe.YamlError:
                pass  # an unusual layout (say, flow-style tests): the whole file decides
    return yamlsafe.load(data), data


def without_tests(data: bytes) -> bytes:
    """``data`` with the lines of a top-level block ``tests:`` entry made empty (line numbers of
    everything else unchanged). Unchanged when there is no such entry, or when the tests block
    defines a YAML anchor (a later key could refer to it)."""
    start = data.find(b"\ntests:") + 1
    if start == 0:
        return data
    lines = data[start:].split(b"\n")
    keep = 1
    while keep < len(lines) and lines[keep][:1] in (b" ", b"\t", b"-", b"#", b"", b"\r"):
        keep += 1  # still inside the tests block; the next top-level key ends it
    if _ANCHOR.search(b"\n".join(lines[:keep])):
        return data
    return data[:start] + b"\n" * keep + b"\n".join(lines[keep:])


_ANCHOR = re.compile(rb"(?:^|[\s\[{,])&[^\s\[\]{},]")
"""A YAML anchor definition (``&name``) at a token start; ``&&`` in a quoted string matches
too, which only costs the fast path for that file."""


def _merge_key_line(data: bytes) -> int | None:
    """Line of the first ``<<`` merge key in the file, or None. Only run on a file that yamlsafe accepted
    (so not too deep) and that contains ``<<`` at all: it composes the file a second time, and
    only the node graph tells a merge key from ``"<<"`` inside a string."""
    import yaml

    node = yaml.compose(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    todo = [node] if node is not None else []
    seen: set[int] = set()
    lines: list[int] = []
    while todo:  # iterative, visiting each node once: aliases share nodes
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, yaml.MappingNode):
            for key, value in cur.value:
                if key.tag == "tag:yaml.org,2002:merge":
                    lines.append(key.start_mark.line + 1)
                todo += (key, value)
        elif isinstance(cur, yaml.SequenceNode):
            todo += cur.value
    return min(lines, default=None)


def collect(paths: Sequence[str | os.PathLike[str]] | None = None, *,
            files: list[Path] | None = None, with_tests: bool = True,
            index: Mapping[str, Any] | None = None,
            present: frozenset[str] | None = None, skipped: dict[str, str] | None = None,
            ) -> tuple[list[Rule], list[Problem], list[Path]]:
    """Load every file, collecting *all* problems (what ``rules lint`` needs).

    ``index`` (entries by file path, :func:`preflight.engine.index.read_index`) lets unchanged
    files skip YAML. With ``present`` (the names of a check's facts), an unchanged file whose
    entry's gate says the rule is quiet on them is not built: its names go into ``skipped``.
    """
    if files is None:
        files = find_rule_files(paths)
    rules: list[Rule] = []
    problems: list[Problem] = []
    seen: dict[str, Rule] = {}
    for f in files:
        entry = index.get(str(f)) if index is not None else None
        if present is not None and skipped is not None and entry is not None:
            names = _skippable(f, entry, present)
            if names is not None and not any(n in seen or n in skipped for n in names):
                skipped.update((n, names[0]) for n in names)
                continue
        rule, probs = parse_file(f, with_tests=with_tests, entry=entry)
        problems.extend(probs)
        if rule is None:
            continue
        clash = False
        for name in (rule.id, *rule.aliases):
            # ids are compared without case: FP8D-DS-0002 and fp8d-ds-0002 name one rule to a
            # reader, and a pack rule under the other spelling would pass for the bundled one
            other = seen.get(name.casefold())
            if other is not None:
                line = _id_line(rule, name)
                problems.append(Problem(
                    rule.path, line,
                    f"duplicate rule id {name!r}: already used (as id or alias) by {other.path}"))
                clash = True
        if clash or (skipped and any(n in skipped for n in (rule.id, *rule.aliases))):
            # A name a skipped rule holds: build that one after all, so the clash is reported.
            if not clash and skipped is not None:
                skipped.clear()
                return collect(files=files, with_tests=with_tests, index=index)
            continue
        for name in (rule.id, *rule.aliases):
            seen[name.casefold()] = rule
        rules.append(rule)
    rules.sort(key=lambda r: r.id)
    return rules, problems, files


def _skippable(path: Path, entry: Any, present: frozenset[str]) -> list[str] | None:
    """The rule's names when its index gate says it is quiet on ``present`` and the file is still
    the one indexed (the same check as :func:`parse_file`'s); else None."""
    names = rules_index.skippable(entry, present)
    if names is None:
        return None
    try:
        data = bounded.read_bytes(path, RULE_FILE_MAX_BYTES)
    except (OSError, bounded.NotRegularFile, bounded.TooLarge):
        return None   # parse_file reports it
    return names if entry.get("digest") == rules_index.digest(data) else None


def _id_line(rule: Rule, name: str) -> int | None:
    """Line of ``id:`` (or of the alias) in the rule file, found by a cheap re-scan."""
    try:
        lines = bounded.read_bytes(rule.path, RULE_FILE_MAX_BYTES).decode(
            "utf-8", "replace").splitlines()
    except OSError:
        return None
    key = "id:" if name == rule.id else name
    for i, text in enumerate(lines, 1):
        if (text.startswith(key) if key == "id:" else key in text):
            return i
    return None


def load_rules(paths: Sequence[str | os.PathLike[str]] | None = None, *,
               with_tests: bool = True, present: frozenset[str] | None = None) -> RuleSet:
    """Load, validate and compile rules; raises :class:`RuleLoadError` naming file and line.

    ``None`` loads the bundled rules. Results are cached in memory while the files are unchanged.
    ``with_tests=False`` skips the inline test cases (see :func:`parse_file`): what a check
    evaluates is identical, it only loads faster; an error inside a ``tests:`` block is then
    left to ``rules lint``.
    ``present`` (a check's fact names; bundled rules of a wheel, ``with_tests=False``): rules
    that are certainly quiet on those facts are counted but not built (see
    :mod:`preflight.engine.index`); such a set is for evaluating those facts only, so it is not
    cached.
    """
    files = find_rule_files(paths)
    fast = paths is None and not with_tests      # a check's bundled rules: the index applies
    if fast and present is not None:
        index = _bundled_index()
        if index is not None:
            return _build(files, False, index, present)   # depends on the facts: not cached
    key = (with_tests, *(_stamp(f) for f in files))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    ruleset = _build(files, with_tests, _bundled_index() if fast else None)
    _CACHE[key] = ruleset
    return ruleset


def prewarm(packs: Sequence[str] = (), bundled: bool = True) -> threading.Thread | None:
    """Parse and cache, in a thread, the rules a check will evaluate, while it waits for its
    smoke children (issue 26): run from a source tree (no rule index beside the package), the
    ~290 YAML files took 0.25-0.5 s after the smoke step, on the critical path. The check joins
    the thread before it loads the rules itself (then from the cache). None where nothing is
    gained: an installed wheel builds the bundled rules from its index, and what it builds there
    depends on the facts. A rule that does not load is left to the check's own load, which names
    its file and line."""
    work: list[list[str] | None] = [list(packs)] if packs else []
    if bundled and _bundled_index() is None:
        work.insert(0, None)
    if not work:
        return None

    def run() -> None:
        for paths in work:
            try:
                load_rules(paths, with_tests=False)
            except Exception:  # noqa: BLE001 - reported by the check's own load
                pass

    thread = threading.Thread(target=run, name="fp8-doctor-rules", daemon=True)
    thread.start()
    return thread


def _bundled_index() -> Mapping[str, Any] | None:
    return rules_index.read_index(_package_dir() / rules_index.INDEX_NAME, bundled_rules_dir())


def _build(files: list[Path], with_tests: bool, index: Mapping[str, Any] | None,
           present: frozenset[str] | None = None) -> RuleSet:
    skipped: dict[str, str] = {}
    rules, problems, _ = collect(files=files, with_tests=with_tests, index=index,
                                 present=present, skipped=skipped)
    errors = [p for p in problems if p.level == "error"]
    if errors:
        raise RuleLoadError(errors)
    return RuleSet(tuple(rules), tuple(p for p in problems if p.level != "error"),
                   tuple(str(f) for f in files), skipped=skipped)


def no_rule_files(paths: Sequence[str | os.PathLike[str]] | None) -> Exception:
    """The error for a rule set without a single file: a usage error for folders the user named
    (a gate that checks nothing must not pass), a broken install for the bundled rules."""
    if paths:
        return UserInputError(f"no rule files found in {', '.join(map(str, paths))} "
                              "(rule files end in .yaml or .yml)")
    return RuntimeError("the bundled rule base is empty: this installation of fp8-doctor is "
                        "broken (rules/ did not ship)")


def find_rule_files(paths: Sequence[str | os.PathLike[str]] | str | None) -> list[Path]:
    """The rule files that ``paths`` name (``None``: the bundled ones); missing paths raise."""
    if isinstance(paths, (str, os.PathLike)):  # one folder given bare, not a list of characters
        paths = [paths]
    if paths is None:
        bundled = bundled_rules_dir()
        return rule_files([bundled]) if bundled.is_dir() else []
    return rule_files(paths)


def _stamp(path: Path) -> tuple[str, int, int]:
    name = os.path.abspath(path)  # not resolve(): one stat per file keeps the cache check cheap
    try:
        st = os.stat(name)
    except OSError:  # a dangling link: parse_file reports it; nothing to key the cache on
        return (name, -1, -1)
    return (name, st.st_size, st.st_mtime_ns)
