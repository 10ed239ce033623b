"""Finding, parsing and validating rule files into a :class:`RuleSet`.

``load_rules(None)`` loads the bundled rule base: ``rules/`` next to the package in a source
checkout, else ``preflight/_rules`` inside an installed wheel (pyproject's hatch force-include).
Files are parsed with :mod:`preflight.yamlsafe` (safe YAML, duplicate keys and language tags
refused with line numbers) and validated by :mod:`preflight.engine.schema`.

Compiled rule sets are cached in memory only (keyed by every file's path, size and mtime), never
on disk: fp8-doctor writes no files the user did not ask for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import yaml

import preflight
from preflight import yamlsafe
from preflight.engine.model import Problem, Reporter, Rule, RuleLoadError, RuleSet
from preflight.engine.schema import build_rule

_CACHE: dict[tuple[tuple[str, int, int], ...], RuleSet] = {}
_SUFFIXES = (".yaml", ".yml")
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def bundled_rules_dir() -> Path:
    """The bundled rules: repo ``rules/`` in a checkout, ``preflight/_rules`` in a wheel."""
    pkg = Path(preflight.__file__).resolve().parent
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
            found: list[str] = []
            for folder, dirs, names in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]  # no .git, .cache, ...
                found.extend(os.path.join(folder, n) for n in names
                             if n.endswith(_SUFFIXES) and not n.startswith("."))
            out.extend(Path(f) for f in sorted(found))
        elif path.is_file():
            out.append(path)
        else:
            raise RuleLoadError([Problem(str(path), None, "no such rule file or folder")])
    return out


def parse_file(path: Path) -> tuple[Rule | None, list[Problem]]:
    """Parse and validate one rule file; returns the rule (None on errors) and all problems."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Problem(shown, None, f"cannot read: {exc.strerror or exc}")]
    try:
        loaded = yamlsafe.load(data)
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
    rep = Reporter(shown, loaded.line_of, data.decode("utf-8", "replace"))
    try:
        rule = build_rule(loaded.data, rep)
    except RecursionError:
        return None, [Problem(shown, 1, "nested too deeply to be a rule (thousands of levels)")]
    return rule, rep.problems


def _merge_key_line(data: bytes) -> int | None:
    """Line of the first ``<<`` merge key in the file, or None. Only run on a file that yamlsafe accepted
    (so not too deep) and that contains ``<<`` at all: it composes the file a second time, and
    only the node graph tells a merge key from ``"<<"`` inside a string."""
    node = yaml.compose(data, Loader=_Loader)
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
            files: list[Path] | None = None) -> tuple[list[Rule], list[Problem], list[Path]]:
    """Load every file, collecting *all* problems (what ``rules lint`` needs)."""
    if files is None:
        files = find_rule_files(paths)
    rules: list[Rule] = []
    problems: list[Problem] = []
    seen: dict[str, Rule] = {}
    for f in files:
        rule, probs = parse_file(f)
        problems.extend(probs)
        if rule is None:
            continue
        clash = False
        for name in (rule.id, *rule.aliases):
            other = seen.get(name)
            if other is not None:
                line = _id_line(rule, name)
                problems.append(Problem(
                    rule.path, line,
                    f"duplicate rule id {name!r}: already used (as id or alias) by {other.path}"))
                clash = True
        if clash:
            continue
        for name in (rule.id, *rule.aliases):
            seen[name] = rule
        rules.append(rule)
    rules.sort(key=lambda r: r.id)
    return rules, problems, files


def _id_line(rule: Rule, name: str) -> int | None:
    """Line of ``id:`` (or of the alias) in the rule file, found by a cheap re-scan."""
    try:
        lines = Path(rule.path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    key = "id:" if name == rule.id else name
    for i, text in enumerate(lines, 1):
        if (text.startswith(key) if key == "id:" else key in text):
            return i
    return None


def load_rules(paths: Sequence[str | os.PathLike[str]] | None = None) -> RuleSet:
    """Load, validate and compile rules; raises :class:`RuleLoadError` naming file and line.

    ``None`` loads the bundled rules. Results are cached in memory while the files are unchanged.
    """
    files = find_rule_files(paths)
    key = tuple(_stamp(f) for f in files)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    rules, problems, _ = collect(files=files)
    errors = [p for p in problems if p.level == "error"]
    if errors:
        raise RuleLoadError(errors)
    ruleset = RuleSet(tuple(rules), tuple(p for p in problems if p.level != "error"),
                      tuple(str(f) for f in files))
    _CACHE[key] = ruleset
    return ruleset


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
    st = os.stat(name)
    return (name, st.st_size, st.st_mtime_ns)
