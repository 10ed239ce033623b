"""``fp8-doctor rules list|show ID|lint|test``: the rule base's own command line.

``list`` prints every rule (``--format json`` with all fields; ``--format markdown`` is the
catalogue committed as docs/rules.md); ``show`` one rule; ``test`` runs every rule's inline tests;
``lint`` checks what loading alone does not (both kinds of test case, ids that match their file
and the ``FP8D-<AREA>-NNNN`` scheme, no id reused as an alias) on top of every load problem.
Rule files or folders are given as positional PATHs (what a pre-commit hook passes) or with
``--rules``; without either, the bundled rules are used. Exit codes: 0 clean, 1 a failing test or
lint problem, 2 a usage error: a missing path, paths that hold no rule file, an unknown id.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from preflight.builtin_findings import BUILTIN
from preflight.commands.args import file_name
from preflight.engine import catalogue, evidence
from preflight.engine.evaluate import outcome
from preflight.engine.fixcheck import check_fixed, needs_fixed_case
from preflight.engine.loader import (
    bundled_rules_dir,
    collect,
    find_rule_files,
    load_rules,
    no_rule_files,
)
from preflight.engine.model import Problem, Rule, RuleSet
from preflight.engine.vocab import outside_vocabulary
from preflight.errors import UserInputError
from preflight.facts import Facts, encode_value

Write = Callable[[str, "str | None"], None]
# Areas of no one framework; each framework's own is its record's rule_area (areas()).
BASE_AREAS = ("HW", "CUDA", "TORCH", "TE", "TAO", "FSDP", "SMOKE", "RT", "CLU", "MSAMP", "CKPT",
              "RL")


def areas() -> tuple[str, ...]:
    """Every AREA a bundled rule id may have: the base areas and each framework's."""
    from preflight.frameworks import rule_areas

    return BASE_AREAS + tuple(rule_areas())


ID_RE = re.compile(r"^FP8D-(?P<area>[A-Z]+)-(?P<num>\d{4})$")
# A rule pack's own ids (issue 12): PREFIX-NNNN or PREFIX-AREA-NNNN, e.g. ACME-0001, ACME-DS-0001.
# FP8D- stays the bundled base's scheme (a pack using it must follow it, areas included).
PACK_ID_RE = re.compile(r"^[A-Z][A-Z0-9]{1,15}(?:-[A-Z][A-Z0-9]{0,15})?-\d{4}$")
_STATE = {True: "fire", False: "quiet", None: "undetermined"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``list | show ID | lint | test`` under ``fp8-doctor rules``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--rules", action="append", default=None, metavar="DIR",
                        help="rule folder (or file) to use instead of the bundled rules "
                             "(repeatable)")
    common.add_argument("-o", "--output", metavar="FILE", type=file_name, help="write to FILE instead of stdout")
    # Positional paths too: a pre-commit hook runs `fp8-doctor rules lint FILE ...`.
    with_paths = argparse.ArgumentParser(add_help=False)
    with_paths.add_argument("paths", nargs="*", metavar="PATH",
                            help="rule files or folders to use instead of the bundled rules "
                                 "(same as --rules)")
    sub = parser.add_subparsers(dest="rules_command", metavar="ACTION")
    sub.required = True
    p = sub.add_parser("list", parents=[common, with_paths],
                       help="list the rules (markdown = the catalogue)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="output format (default: %(default)s; markdown is docs/rules.md)")
    p = sub.add_parser("show", parents=[common],
                       help="show one rule by id (or alias): what it checks, why, the fix, "
                            "its sources")
    p.add_argument("rule_id", metavar="ID",
                   help="a rule id as reports print it (FP8D-ACC-0003; any case, FP8D- may be "
                        "left out), an alias, or a built-in finding's id (FP8D-CFG-NO-JOB)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: %(default)s)")
    p = sub.add_parser("lint", parents=[common, with_paths],
                       help="check the rule files; exit 1 on a problem")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: %(default)s)")
    p = sub.add_parser("test", parents=[common, with_paths],
                       help="run every rule's inline tests; exit 1 on a failing case")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    from preflight.commands import console

    return main(args, console.write)


def main(args: argparse.Namespace, write: Write) -> int:
    """Run one ``rules`` action; returns the exit code."""
    action = args.rules_command
    write = _escaped(write, getattr(args, "format", "text"))
    paths = [*(args.rules or ()), *getattr(args, "paths", ())] or None
    _require_rule_files(paths)
    if action == "lint":
        return _lint(paths, args.format, args.output, write)
    ruleset = load_rules(paths)
    if action == "list":
        if args.format == "json":
            doc = {"rules": [rule_to_dict(r) for r in ruleset],
                   "warnings": [w.to_dict() for w in ruleset.warnings]}
            write(_dumps(doc), args.output)
        elif args.format == "markdown":
            from preflight.frameworks import rule_areas

            write(catalogue.markdown(ruleset, rule_areas()), args.output)
        else:
            write(_list_text(ruleset), args.output)
        return 0
    if action == "show":
        rule_id = _rule_id(args.rule_id, ruleset)
        rule = ruleset.get(rule_id)
        if rule is None and rule_id in BUILTIN:
            write(_builtin(rule_id, args.format), args.output)
            return 0
        if rule is None:
            raise UserInputError(f"no rule {args.rule_id!r} (see `fp8-doctor rules list`)")
        if args.format == "json":
            write(_dumps(rule_to_dict(rule)), args.output)
        else:
            write(catalogue.rule_text(rule), args.output)
        return 0
    if action == "test":
        return _test(ruleset, args.format, args.output, write)
    raise UserInputError(f"unknown rules action {action!r}")  # pragma: no cover - argparse


def _rule_id(typed: str, ruleset: RuleSet) -> str:
    """The id ``rules show`` looks up: as typed when a rule or built-in finding has it, else in
    upper case, else with ``FP8D-`` in front (``acc-0003`` is FP8D-ACC-0003)."""
    for candidate in (typed, typed.upper(), f"FP8D-{typed.upper()}"):
        if ruleset.get(candidate) is not None or candidate in BUILTIN:
            return candidate
    return typed


def _escaped(write: Write, fmt: str) -> Write:
    """``write`` with control characters escaped (issue 21 item 5: a rule pack's title with
    terminal escapes reached the terminal through ``rules list`` / ``show``). JSON needs none:
    ``json.dumps`` escapes every control character and non-ASCII one."""
    if fmt == "json":
        return write
    from preflight.render.sanitize import clean_text

    return lambda text, output: write(clean_text(text), output)


def _builtin(rule_id: str, fmt: str) -> str:
    """``rules show`` for a built-in finding (preflight/builtin_findings.py): no rule file, but
    ``--ignore`` takes its id and reports refer to it."""
    entry = BUILTIN[rule_id]
    if fmt == "json":
        return _dumps({"id": entry.id, "title": entry.title, "severity": entry.severity.value,
                       "when": entry.when, "builtin": True,
                       "training_node_only": entry.training_node_only})
    return "\n".join([f"{entry.id}: {entry.title}",
                      f"  built-in finding (no rule file)   severity: {entry.severity.value} "
                      "(usually)" + ("   holds only on the training node"
                                     if entry.training_node_only else ""),
                      f"  when: {entry.when}"])


def _require_rule_files(paths: list[str] | None) -> None:
    """A rule set with no file is a usage error, as in ``check``: a gate that checks nothing
    (a typo'd folder, an empty checkout) must not pass with exit 0."""
    if not find_rule_files(paths):
        raise no_rule_files(paths)


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    """Every field of a rule file, JSON-ready (``rules list|show --format json``).

    Fields the file left out are ``null`` (or empty lists), so consumers see one shape. Derived
    fields follow: ``area``, ``facts`` (the facts the condition reads), ``path``.
    """
    return {
        "schema_version": rule.schema_version,
        "id": rule.id,
        "aliases": list(rule.aliases),
        "title": rule.title,
        "severity": rule.severity.value,
        "confidence": rule.confidence,
        "tags": list(rule.tags),
        "affected": [{"package": a.package, "ranges": [r.as_dicts() for r in a.ranges]}
                     for a in rule.affected],
        "when": rule.when.to_data(),
        "message": rule.message.source,
        "fix": {"text": rule.fix.text, "commands": list(rule.fix.commands)},
        "references": [{"type": r.type, "url": r.url} for r in rule.references],
        "tests": [{"name": c.name, "facts": {k: encode_value(v) for k, v in c.facts.items()},
                   "expect": c.expect, "line": c.line,
                   **({"fixed": {"set": {k: encode_value(v) for k, v in c.fixed.set.items()},
                                 "unset": list(c.fixed.unset)}} if c.fixed else {})}
                  for c in rule.tests],
        "withdrawn": rule.withdrawn,
        "modified": rule.modified,
        "published": rule.published,
        "details": rule.details,
        "help_uri": rule.help_uri,
        "min_tool_version": rule.min_tool_version,
        "location": rule.location,
        "read_at": list(rule.read_at),
        "measured": dict(rule.measured) or None,
        "area": rule.area,
        "facts": rule.facts_used(),
        "path": rule.path,
    }


def _dumps(doc: Any) -> str:
    # A value in a condition or a test case may be a YAML timestamp (an unquoted 2024-01-01 on an
    # `any` config fact); JSON has no date type, so it is written as ISO text, never a crash.
    return json.dumps(doc, indent=2, default=lambda v: v.isoformat()
                      if isinstance(v, (_dt.date, _dt.datetime)) else str(v))


def _list_text(ruleset: RuleSet) -> str:
    lines = [f"{len(ruleset)} rule(s)"]
    for r in ruleset:
        flag = " (withdrawn)" if r.withdrawn else ""
        lines.append(f"{r.id:<16} {r.severity.value:<7} {r.confidence:<8} {r.title}{flag}")
    return "\n".join(lines)


# --- test ---------------------------------------------------------------------------------------

def run_tests(ruleset: RuleSet) -> list[dict[str, Any]]:
    """Every inline test case of every rule, with what it expected and what it got."""
    results = []
    for rule in ruleset:
        for case in rule.tests:
            got = _STATE[outcome(rule, Facts(dict(case.facts)).values)]
            results.append({"rule": rule.id, "case": case.name, "line": case.line,
                            "path": rule.path, "expected": case.expect, "got": got,
                            "ok": got == case.expect})
            if case.fixed is not None:
                results.append(check_fixed(rule, case, ruleset))
    return results


def _test(ruleset: RuleSet, fmt: str, output: str | None, write: Write) -> int:
    results = run_tests(ruleset)
    failed = [r for r in results if not r["ok"]]
    if fmt == "json":
        write(json.dumps({"cases": results, "failed": len(failed)}, indent=2), output)
    else:
        lines = [f"FAIL {r['rule']} {r['case']} ({r['path']}:{r['line']}): expected "
                 f"{r['expected']}, got {r['got']}" for r in failed]
        lines.append(f"{len(results) - len(failed)} passed, {len(failed)} failed, "
                     f"{len(ruleset)} rule(s)")
        write("\n".join(lines), output)
    return 1 if failed else 0


# --- lint ---------------------------------------------------------------------------------------

def lint_problems(paths: list[str] | None) -> list[Problem]:
    """Load problems (all of them, every file) plus the lint-only checks."""
    rules, problems, _ = collect(paths)
    for rule in rules:
        problems.extend(lint_rule(rule))
    return sorted(problems, key=lambda p: (p.path, p.line or 0))


def lint_rule(rule: Rule) -> list[Problem]:
    """Checks beyond the schema: tests of both kinds, id scheme, file name, references."""
    out: list[Problem] = []

    def add(msg: str, key: str = "id") -> None:
        out.append(Problem(rule.path, _key_line(rule.path, key), msg))

    m = ID_RE.match(rule.id)
    if rule.id.startswith("FP8D-") or _bundled(rule):
        if not m or m.group("area") not in areas():
            add(f"id {rule.id!r} does not follow FP8D-<AREA>-NNNN with AREA in "
                f"{' '.join(areas())}")
    elif not PACK_ID_RE.match(rule.id):
        add(f"id {rule.id!r} does not follow PREFIX-NNNN or PREFIX-AREA-NNNN (upper-case "
            "letters and digits, e.g. ACME-0001 or ACME-DS-0001)")
    stem = Path(rule.path).stem
    if stem != rule.id:
        add(f"id {rule.id!r} does not match its file name {Path(rule.path).name!r} "
            f"(expected {rule.id}.yaml)")
    if not rule.references:
        add("no references: every rule needs at least one", "references")
    for msg in outside_vocabulary(rule.when):   # closed vocabularies (engine/vocab.py)
        add(msg, "when")
    if needs_fixed_case(rule):
        out.append(Problem(rule.path, _key_line(rule.path, "tests"),
                           "no fix round-trip: the condition reads a config setting, so a fire "
                           "case should say what following the fix changes (fixed: {set, "
                           "unset}); see docs/rule-format.md", "warning"))
    for key, index, msg, level in evidence.lint(rule):
        text = rule.references[index].url if key == "references" and index is not None else (
            rule.read_at[index] if key == "read_at" and index is not None else None)
        line = _text_line(rule.path, text) if text else None
        out.append(Problem(rule.path, line or _key_line(rule.path, key), msg, level))
    kinds = {c.expect for c in rule.tests}
    for needed in ("fire", "quiet"):
        if needed not in kinds:
            add(f"no test case that expects {needed!r}: each rule needs at least one case where "
                "it fires and one where it stays quiet", "tests" if rule.tests else "id")
    return out


def _bundled(rule: Rule) -> bool:
    """A rule file of the bundled base (which must use the FP8D- scheme)."""
    try:
        return Path(rule.path).resolve().is_relative_to(bundled_rules_dir().resolve())
    except OSError:
        return False


def _text_line(path: str, text: str) -> int | None:
    try:
        for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if text in line:
                return i
    except OSError:
        return None
    return None


def _key_line(path: str, key: str) -> int | None:
    try:
        for i, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if text.startswith(f"{key}:"):
                return i
    except OSError:
        return None
    return None


def _lint(paths: list[str] | None, fmt: str, output: str | None, write: Write) -> int:
    problems = lint_problems(paths)
    errors = [p for p in problems if p.level == "error"]
    if fmt == "json":
        write(json.dumps({"problems": [p.to_dict() for p in problems], "errors": len(errors)},
                         indent=2), output)
    else:
        lines = [str(p) for p in problems]
        lines.append(f"{len(errors)} error(s), {len(problems) - len(errors)} warning(s)")
        write("\n".join(lines), output)
    return 1 if errors else 0
