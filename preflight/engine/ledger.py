"""The failure-mode ledger: ``ledger/*.yaml`` (one file per upstream tracker) into docs/coverage.md.

Each tracker file says how its issues were searched (``method``, so the next sweep can repeat it)
and triages every FP8 failure mode found there: caught by a rule (``status: rule`` with the rule
ids), or why a preflight cannot see it (``not-detectable`` / ``out-of-scope`` with ``why``). The
page is generated so that a test keeps it true: ``python -m preflight.engine.ledger --check``
fails when the page is stale, a mode id is used twice, or a rule id does not exist (issue 16).
Safe YAML only (:mod:`preflight.base.yamlsafe`); nothing here touches the network.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from preflight.engine.evidence import moving_ref
from preflight.engine.model import Problem

STATUSES = ("rule", "not-detectable", "out-of-scope")
_MODE_KEYS = frozenset({"id", "title", "versions", "references", "status", "rules", "why"})
_SLUG = re.compile(r"[a-z0-9][a-z0-9.-]*")
_TRACKER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
_RULE_ID = re.compile(r"FP8D-[A-Z]+-\d{4}")


@dataclass(frozen=True)
class Mode:
    """One triaged failure mode of one tracker."""

    id: str
    title: str
    versions: str
    references: tuple[str, ...]
    status: str
    rules: tuple[str, ...]
    why: str | None
    line: int | None


@dataclass(frozen=True)
class Tracker:
    """One ledger file: an upstream tracker, how it was searched, and its modes."""

    tracker: str
    method: str
    path: str
    modes: tuple[Mode, ...]


def ledger_dir() -> Path:
    """``ledger/`` beside ``rules/`` in a source checkout."""
    return Path(__file__).resolve().parents[2] / "ledger"


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _mode(raw: Any, where: str, line: int | None, problems: list[Problem]) -> Mode | None:
    mine: list[Problem] = []

    def bad(msg: str) -> None:
        mine.append(Problem(where, line, msg))

    if not isinstance(raw, Mapping):
        problems.append(Problem(where, line, "a mode is a mapping {id, title, versions, "
                                             "references, status, ...}"))
        return None
    for key in raw:
        if key not in _MODE_KEYS:
            bad(f"unknown key {key!r} in a mode (known: {', '.join(sorted(_MODE_KEYS))})")
    mid, title, versions = _text(raw.get("id")), _text(raw.get("title")), raw.get("versions")
    status, why = raw.get("status"), _text(raw.get("why"))
    if mid is None or not _SLUG.fullmatch(mid):
        bad(f"mode id must be a lower-case slug (te-1190-recompute-scales), not {raw.get('id')!r}")
    if title is None:
        bad("mode title must be a non-empty string")
    if not isinstance(versions, str) or not versions.strip():
        bad("versions must be a quoted string (\"transformer-engine>=1.6,<1.12\", \"unknown\", "
            "\"all\")")
    refs = raw.get("references")
    if not isinstance(refs, list) or not refs or not all(isinstance(u, str) for u in refs):
        bad("references must be a non-empty list of URLs")
        refs = []
    for url in refs:
        if not url.startswith(("https://", "http://")):
            bad(f"reference {url!r} is not an http(s) URL")
        elif moving_ref(url):
            bad(f"reference {url} points at the moving {moving_ref(url)!r}: link a tag or commit")
    rules = raw.get("rules") or []
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        bad("rules must be a list of rule ids")
        rules = []
    if status not in STATUSES:
        bad(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    elif status == "rule":
        if not rules:
            bad("status: rule needs the ids of the rules that catch it (rules: [FP8D-...])")
        if why is not None:
            bad("status: rule takes no `why`; a mode with a rule is caught")
    else:
        if rules:
            bad(f"status: {status} lists rules; only status: rule may")
        if why is None:
            bad(f"status: {status} needs `why`: what a preflight cannot see")
    if mine:
        problems.extend(mine)
        return None
    return Mode(mid or "", title or "", str(versions).strip(), tuple(refs), str(status),
                tuple(rules), why, line)


def load_file(path: Path) -> tuple[Tracker | None, list[Problem]]:
    """Parse and validate one ledger file (safe YAML, duplicate keys refused, lines kept)."""
    from preflight.base import yamlsafe

    where, problems = str(path), []
    try:
        loaded = yamlsafe.load(path.read_bytes())
    except OSError as exc:
        return None, [Problem(where, None, f"cannot read: {exc.strerror or exc}")]
    except yamlsafe.YamlError as exc:
        return None, [Problem(where, exc.line, exc.message)]
    doc = loaded.data
    if not isinstance(doc, Mapping):
        return None, [Problem(where, 1, "a ledger file is a mapping {tracker, method, modes}")]
    tracker, method, modes = _text(doc.get("tracker")), _text(doc.get("method")), doc.get("modes")
    if tracker is None or not _TRACKER.fullmatch(tracker):
        problems.append(Problem(where, loaded.line_of(("tracker",)),
                                f"tracker must be owner/repo, not {doc.get('tracker')!r}"))
    elif path.stem != tracker.replace("/", "__"):
        problems.append(Problem(where, loaded.line_of(("tracker",)),
                                f"file name {path.name!r} does not match tracker {tracker!r} "
                                f"(expected {tracker.replace('/', '__')}.yaml)"))
    if method is None:
        problems.append(Problem(where, loaded.line_of(("method",)),
                                "method must say how this tracker was searched"))
    for key in doc:
        if key not in ("tracker", "method", "modes"):
            problems.append(Problem(where, loaded.line_of((key,)), f"unknown key {key!r}"))
    if not isinstance(modes, list):
        problems.append(Problem(where, loaded.line_of(("modes",)), "modes must be a list"))
        modes = []
    out = [m for i, raw in enumerate(modes)
           if (m := _mode(raw, where, loaded.line_of(("modes", i)), problems)) is not None]
    if problems:
        return None, problems
    return Tracker(tracker or "", method or "", where, tuple(out)), []


def load_ledger(directory: Path, rule_ids: Iterable[str]) -> tuple[list[Tracker], list[Problem]]:
    """Every ``*.yaml`` under ``directory``, checked against each other and the rule ids."""
    known, trackers, problems = set(rule_ids), [], []
    for path in sorted(directory.glob("*.yaml")):
        tracker, found = load_file(path)
        problems += found
        if tracker is not None:
            trackers.append(tracker)
    seen: dict[str, str] = {}
    for t in trackers:
        for m in t.modes:
            if m.id in seen:
                problems.append(Problem(t.path, m.line, f"mode id {m.id!r} is used twice (also "
                                                        f"in {seen[m.id]})"))
            seen.setdefault(m.id, t.path)
            for rid in m.rules:
                if not _RULE_ID.fullmatch(rid) or rid not in known:
                    problems.append(Problem(t.path, m.line, f"mode {m.id!r} names rule {rid!r}, "
                                                            "which does not exist"))
    return trackers, problems


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(trackers: list[Tracker], rule_count: int) -> str:
    """docs/coverage.md: totals, then each tracker's method and modes."""
    modes = [m for t in trackers for m in t.modes]
    by_status = Counter(m.status for m in modes)
    caught = {r for m in modes for r in m.rules}
    out = ["# FP8 failure-mode coverage", "",
           "<!-- Generated by `python -m preflight.engine.ledger -o docs/coverage.md` from "
           "ledger/*.yaml; do not edit by hand. -->", "",
           f"{len(modes)} failure mode(s) triaged from {len(trackers)} tracker(s): "
           + ", ".join(f"{by_status.get(s, 0)} {s}" for s in STATUSES)
           + f". {len(caught)} of the {rule_count} bundled rules are named by a mode. A mode is "
           "`rule` when a bundled rule catches it before the job, `not-detectable` when a "
           "preflight cannot see it (why given), `out-of-scope` when it is not ours to catch "
           "here (why given). The data and its format: `ledger/` and "
           "[rule-format.md](rule-format.md#the-failure-mode-ledger).", "",
           "| tracker | modes | rule | not-detectable | out-of-scope |", "|---|---|---|---|---|"]
    for t in trackers:
        c = Counter(m.status for m in t.modes)
        out.append(f"| [{t.tracker}](#{_anchor(t.tracker)}) | {len(t.modes)} | "
                   + " | ".join(str(c.get(s, 0)) for s in STATUSES) + " |")
    for t in trackers:
        out += ["", f"## {t.tracker}", "", f"Method: {_cell(t.method)}", "",
                "| mode | versions | status | rules / why | references |", "|---|---|---|---|---|"]
        for m in t.modes:
            what = ", ".join(m.rules) if m.status == "rule" else _cell(m.why or "")
            refs = " ".join(f"<{u}>" for u in m.references)
            out.append(f"| `{m.id}`: {_cell(m.title)} | {_cell(m.versions)} | {m.status} | "
                       f"{what} | {refs} |")
    return "\n".join(out) + "\n"


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def build(directory: Path | None = None) -> tuple[str, list[Problem]]:
    """The page for the bundled rules and ``directory`` (default ``ledger/``), and problems."""
    from preflight.engine import load_rules

    rules = load_rules()
    ids = [r.id for r in rules] + [a for r in rules for a in r.aliases]
    trackers, problems = load_ledger(directory or ledger_dir(), ids)
    return render(trackers, len(rules)), problems


def main(argv: list[str] | None = None) -> int:
    """``python -m preflight.engine.ledger [--check] [-o FILE]``."""
    parser = argparse.ArgumentParser(prog="python -m preflight.engine.ledger",
                                     description="Build docs/coverage.md from ledger/*.yaml.")
    parser.add_argument("-o", "--output", help="write the page here (default: stdout)")
    parser.add_argument("--check", metavar="FILE",
                        help="exit 1 when FILE is not what would be generated, or on a problem")
    parser.add_argument("--ledger", type=Path, default=None, help="ledger folder (default ledger/)")
    args = parser.parse_args(argv)
    page, problems = build(args.ledger)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    if args.check:
        try:
            current = Path(args.check).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"{args.check}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 1
        if current != page:
            print(f"{args.check} is stale: run python -m preflight.engine.ledger -o {args.check}",
                  file=sys.stderr)
            return 1
        return 0
    if args.output:
        Path(args.output).write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
