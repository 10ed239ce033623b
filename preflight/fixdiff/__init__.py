"""``fp8-doctor check --diff``: the fixes of config findings as one unified diff.

A rule whose fix is a change to a config file the job owns says so as data (``fix.edits``: set
or delete a ``config.<kind>.<key>`` fact). Each edit is placed by the fact's provenance (the
file and line that set it) or, for a key the file does not have yet, next to a sibling key of
the same mapping; :mod:`.edits` makes the change as a line edit, so comments, key order and
formatting stay as written. Findings whose fix is not a file edit, and edits that cannot be
placed without guessing, are listed beside the diff with the reason. fp8-doctor still writes no
user file: the diff goes to stdout or ``-o``; ``git apply`` / ``patch -p1`` apply it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.findings import EditSpec, Location
from preflight.fixdiff import edits as E

_SHELL_EXT = (".sh", ".bash", ".slurm", ".sbatch", ".txt", ".args")


@dataclass
class DiffResult:
    """Old and new text per file, and what could not be turned into an edit."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    applied: list[tuple[str, EditSpec]] = field(default_factory=list)
    listed: list[tuple[str, str]] = field(default_factory=list)   # (rule id, why not a diff)

    def unified(self, cwd: str | None = None) -> str:
        out = []
        for path, (old, new) in sorted(self.files.items()):
            if old == new:
                continue
            rel = os.path.relpath(path, cwd or os.getcwd())
            chunk = list(difflib.unified_diff(_nl(old), _nl(new), f"a/{rel}", f"b/{rel}"))
            out.append("".join(_mark_eof(chunk)))
        return "".join(out)


def _nl(text: str) -> list[str]:
    return E.lines_of(text)


def _mark_eof(chunk: list[str]) -> list[str]:
    """A last line without a newline gets git's ``\\ No newline at end of file`` marker."""
    return [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in chunk]


def fmt_of(path: str, text: str) -> str | None:
    low = path.lower()
    if low.endswith((".yaml", ".yml")):
        return "yaml"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".toml"):
        return "toml"
    if low.endswith(_SHELL_EXT) or text.startswith("#!"):
        return "shell"
    return None


def build(findings: Sequence[Any], facts: Any) -> DiffResult:
    """The diff for ``findings`` (each with ``fix.edits``) against the facts' provenance.

    Every edit is first placed (file, line, operation); then each file's edits are made from
    its last line up, so an edit never moves the line another one was placed at."""
    result = DiffResult()
    placed: list[tuple[str, int, str, Any, str, EditSpec]] = []
    seen: set[tuple[str, str]] = set()
    texts: dict[str, str] = {}
    for finding in findings:
        specs = getattr(finding.fix, "edits", ()) or ()
        if not specs:
            if finding.fix.text:
                result.listed.append((finding.rule_id, "not a config edit: " + finding.fix.text))
            continue
        for spec in specs:
            if (spec.fact, spec.action) in seen:
                continue
            seen.add((spec.fact, spec.action))
            try:
                op = _place(spec, facts, texts)
            except (E.EditError, OSError, UnicodeDecodeError) as exc:
                result.listed.append((finding.rule_id, f"{spec.fact}: {exc}"))
                continue
            if op is not None:
                placed.append((*op, finding.rule_id, spec))
    for path, line, _, _, _, _ in placed:
        result.files.setdefault(path, (texts[path], texts[path]))
    for path, line, kind, apply, rule_id, spec in sorted(placed, key=lambda p: (p[0], -p[1])):
        old, cur = result.files[path]
        try:
            result.files[path] = (old, apply(cur))
        except E.EditError as exc:
            result.listed.append((rule_id, f"{spec.fact}: {exc}"))
            continue
        result.applied.append((rule_id, spec))
    return result


def _split(fact: str) -> tuple[str, tuple[str, ...]]:
    parts = fact.split(".")
    if len(parts) < 3 or parts[0] != "config":
        raise E.EditError(f"{fact} is not a config fact")
    return parts[1], tuple(parts[2:])


def _text(path: str, texts: dict[str, str]) -> tuple[str, str]:
    if path not in texts:
        with open(path, encoding="utf-8") as fh:
            texts[path] = fh.read(1 << 20)
    fmt = fmt_of(path, texts[path])
    if fmt is None:
        raise E.EditError(f"{path}: not a format fp8-doctor edits")
    return texts[path], fmt


def _place(spec: EditSpec, facts: Any, texts: dict[str, str]
           ) -> tuple[str, int, str, Any] | None:
    """(file, line, what, text -> new text) for one edit; None when there is nothing to do."""
    kind, path = _split(spec.fact)
    values = facts.values
    key = path[-1]
    if spec.fact in values:
        loc = Location.from_source(facts.source(spec.fact))
        if loc is None or not loc.line:
            raise E.EditError("the file and line that set it are not known")
        if spec.action == "set" and values[spec.fact] == spec.value:
            return None
        text, fmt = _text(loc.path, texts)
        line, value = loc.line, spec.value
        if fmt == "shell":
            fn = ((lambda t: E.delete_flag(t, key, line)) if spec.action == "delete" else
                  (lambda t: E.set_flag(t, key, line, value)))
        else:
            fn = ((lambda t: E.delete_key(t, fmt, key, line)) if spec.action == "delete" else
                  (lambda t: E.set_value(t, fmt, key, line, value)))
        return loc.path, line, spec.action, fn
    if spec.action == "delete":
        return None             # not set anywhere: nothing to remove
    sib = _sibling(kind, path, facts)
    if sib is None:
        raise E.EditError(f"no {kind} file read that could take it")
    sib_fact, loc, depth = sib
    text, fmt = _text(loc.path, texts)
    value = spec.value
    line = loc.line or 0          # _sibling only picks facts with a line
    if fmt == "shell":
        return loc.path, line, "add", lambda t: E.add_flag_after(t, key, line, value)
    sib_path = _split(sib_fact)[1]
    if fmt != "yaml" and not len(sib_path) == len(path) == depth + 1:
        raise E.EditError(f"no key beside {'.'.join(path)} in {loc.path} to place it by "
                          "(a new JSON object or TOML table is not a one-line edit)")
    line = _key_line(text, fmt, sib_path[: depth + 1], line)
    rest = path[depth:]
    return loc.path, line, "add", lambda t: E.add_key_before(t, fmt, rest, line, value)


def _sibling(kind: str, path: tuple[str, ...], facts: Any
             ) -> tuple[str, Location, int] | None:
    """The config fact of the same kind sharing the longest key prefix with ``path`` (and a
    file line), and the length of that prefix."""
    best: tuple[int, str, Location] | None = None
    prefix = f"config.{kind}."
    for name in facts.values:
        if not name.startswith(prefix):
            continue
        loc = Location.from_source(facts.source(name))
        if loc is None or not loc.line:
            continue
        other = _split(name)[1]
        common = 0
        while common < min(len(other), len(path)) - 1 and other[common] == path[common]:
            common += 1
        if best is None or common > best[0]:
            best = (common, name, loc)
    return None if best is None else (best[1], best[2], best[0])


def _key_line(text: str, fmt: str, key_path: tuple[str, ...], leaf_line: int) -> int:
    """The line of ``key_path`` (a sibling's ancestor at the insertion depth)."""
    if fmt == "yaml":
        from preflight import yamlsafe

        try:
            lines = yamlsafe.load(text).lines
        except yamlsafe.YamlError as exc:
            raise E.EditError(f"cannot re-read the YAML: {exc}") from None
        for k, line in lines.items():
            if tuple(str(p) for p in k) == key_path:
                return line
        raise E.EditError(f"cannot find {'.'.join(key_path)} in the YAML")
    return leaf_line            # JSON / TOML: only a sibling leaf of the same object


def render_diff(report: Any, cwd: str | None = None) -> str:
    """What ``check --diff`` prints: a comment header (git apply and patch skip it), the
    findings that are no file edit, then the diff."""
    result = build(report.sorted_findings(), report.facts)
    diff = result.unified(cwd)
    ids = sorted({rid for rid, _ in result.applied})
    head = [f"# fp8-doctor check --diff: {len(result.applied)} edit(s) for "
            f"{len(ids)} finding(s){' (' + ', '.join(ids) + ')' if ids else ''}; apply with "
            "`git apply` or `patch -p1` from this folder, then check again."]
    if result.listed:
        head.append("# Not turned into an edit (do these by hand):")
        head += [f"#   {rid}: {' '.join(why.split())[:300]}" for rid, why in result.listed]
    if not diff:
        head.append("# No config edit to make.")
    return "\n".join(head) + "\n" + diff
