"""The rule-file schema: field-by-field validation of one parsed rule document into a :class:`Rule`.

The format is docs/rule-format.md. Every problem is reported with the line of the key it concerns
(yamlsafe gives key lines by path). Unknown top-level keys are warnings, so a rule pack written
for a newer fp8-doctor still loads (pre-commit's ``WarnAdditionalKeys``); everything that would
make a rule silently wrong (an unknown fact or operator, an unquoted version, a bad regex) is an
error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import preflight
from preflight.base.versions import InvalidRange, comparison_key, compile_osv
from preflight.engine import conditions, fixcommands, interpolate
from preflight.engine.evidence import measured_block, read_at_list
from preflight.engine.fixcheck import parse_fixed
from preflight.engine.fixedits import parse_edits
from preflight.engine.model import Affected, Reporter, Rule, TestCase
from preflight.facts import Unknown, decode_value, value_fits
from preflight.findings import Fix, Reference, Severity

SCHEMA_MAJOR = "1"
SEVERITIES = ("error", "warning", "info")
CONFIDENCES = ("verified", "measured", "stated", "inferred")
REFERENCE_TYPES = ("REPORT", "FIX", "SOURCE", "DOCS", "ARTICLE", "WEB", "ADVISORY", "PACKAGE",
                   "DISCUSSION", "EVIDENCE", "INTRODUCED", "DETECTION")
EXPECT = ("fire", "quiet", "undetermined")
REQUIRED = ("id", "title", "severity", "confidence", "when", "message", "fix", "references")
OPTIONAL = ("schema_version", "aliases", "tags", "affected", "tests", "withdrawn", "modified",
            "published", "details", "help_uri", "min_tool_version", "location", "read_at",
            "measured")

KNOWN = frozenset(REQUIRED + OPTIONAL)


def _str(doc: Mapping[str, Any], key: str, rep: Reporter, *, one_line: bool = False
         ) -> str | None:
    value = doc.get(key)
    if not isinstance(value, str) or not value.strip():
        rep.error((key,), f"{key} must be a non-empty string, not {value!r}")
        return None
    if one_line and "\n" in value.strip():
        rep.error((key,), f"{key} must be one line")
    return value.strip()


def _date(doc: Mapping[str, Any], key: str, rep: Reporter) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    import datetime as _dt  # not at the top: a check builds rules from the index's strings

    if isinstance(value, (_dt.date, _dt.datetime)):  # YAML reads an unquoted 2026-12-01 as a date
        return value.isoformat()
    rep.error((key,), f"{key} must be a date such as \"2026-12-01\", not {value!r}")
    return None


def _str_list(doc: Mapping[str, Any], key: str, rep: Reporter) -> tuple[str, ...]:
    value = doc.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        rep.error((key,), f"{key} must be a list of strings, not {value!r}")
        return ()
    return tuple(value)


def _template(text: str | None, where: tuple[Any, ...], rep: Reporter) -> interpolate.Template:
    if text is None:
        return interpolate.Template("", ())
    try:
        tpl = interpolate.parse(text)
    except interpolate.TemplateError as exc:
        rep.error(where, f"{where[-1]}: {exc}")
        return interpolate.Template(text, (text,))
    for name in tpl.names:
        if conditions.lookup_type(name) is None:
            rep.error(where, f"placeholder {{{name}}} names an unknown fact; messages may only "
                             "interpolate registered facts (write {{ for a literal brace)")
    return tpl


def _fix(doc: Mapping[str, Any], rep: Reporter) -> tuple[Fix, interpolate.Template]:
    raw = doc.get("fix")
    if isinstance(raw, str):
        raw = {"text": raw}
    if not isinstance(raw, Mapping):
        rep.error(("fix",), "fix must be a mapping {text: ..., commands: [...]}")
        return Fix(""), interpolate.Template("", ())
    for k in raw:
        if k not in ("text", "commands", "edits"):
            rep.warn(("fix", k), f"unknown key {k!r} in fix ignored")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        rep.error(("fix", "text") if "text" in raw else ("fix",),
                  "fix.text must be a non-empty string")
        text = ""
    cmds = raw.get("commands", [])
    if cmds is None:
        cmds = []
    if not isinstance(cmds, list) or not all(isinstance(c, str) and c.strip() for c in cmds):
        rep.error(("fix", "commands"), "fix.commands must be a list of command strings")
        cmds = []
    for i, cmd in enumerate(cmds):
        reason = fixcommands.unsafe_reason(cmd)
        if reason:
            rep.error(("fix", "commands", i),
                      f"fix.commands[{i}] {cmd!r} is refused: {reason} (a fix command must be "
                      "safe to run as printed; see \"Fix commands\" in docs/rule-format.md)")
    # Commands are printed as written, never interpolated: a fact value from a config file must
    # not be able to put text into something the user may paste into a shell.
    edits = parse_edits(raw.get("edits"), rep)
    return Fix(text.strip(), tuple(cmds), edits), _template(text.strip(), ("fix", "text"), rep)


def _references(doc: Mapping[str, Any], rep: Reporter) -> tuple[Reference, ...]:
    raw = doc.get("references")
    if not isinstance(raw, list) or not raw:
        rep.error(("references",) if "references" in doc else (),
                  "references: every rule needs at least one typed reference "
                  "({type: REPORT, url: \"https://...\"})")
        return ()
    out = []
    for i, ref in enumerate(raw):
        where = ("references", i)
        if not isinstance(ref, Mapping):
            rep.error(where, "a reference is a mapping {type: ..., url: ...}")
            continue
        rtype, url = ref.get("type"), ref.get("url")
        if rtype not in REFERENCE_TYPES:
            rep.error(where, f"reference type {rtype!r} is not one of {', '.join(REFERENCE_TYPES)}")
            continue
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            rep.error(where, f"reference url must be an http(s) URL, not {url!r}")
            continue
        for k in ref:
            if k not in ("type", "url"):
                rep.warn((*where, k), f"unknown key {k!r} in reference ignored")
        out.append(Reference(rtype, url))
    return tuple(out)


def _affected(doc: Mapping[str, Any], rep: Reporter) -> tuple[Affected, ...]:
    raw = doc.get("affected")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        rep.error(("affected",), "affected must be a list of {package, ranges}")
        return ()
    out = []
    for i, item in enumerate(raw):
        where = ("affected", i)
        if not isinstance(item, Mapping):
            rep.error(where, "an affected entry is a mapping {package: NAME, ranges: [...]}")
            continue
        pkg = item.get("package")
        if isinstance(pkg, Mapping):  # the OSV shape {ecosystem: PyPI, name: ...}
            pkg = pkg.get("name")
        if not isinstance(pkg, str) or not pkg:
            rep.error((*where, "package"), "affected.package must be a distribution name")
            continue
        for k in item:
            if k not in ("package", "ranges", "versions", "ecosystem_specific",
                         "database_specific"):
                rep.warn((*where, k), f"unknown key {k!r} in affected entry ignored")
        ranges = item.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            rep.error((*where, "ranges") if "ranges" in item else where,
                      "affected.ranges must be a non-empty list of OSV ranges")
            continue
        compiled = []
        for j, rng in enumerate(ranges):
            found = rep.unquoted_number((*where, "ranges", j), rng)
            if found:
                rep.error(found[0], f"versions must be quoted strings: {found[1]} is not quoted, "
                                    f"so YAML reads it as a number; write \"{found[1]}\"")
                continue
            try:
                compiled.append(compile_osv(rng, f"affected[{i}].ranges[{j}]"))
            except InvalidRange as exc:
                rep.error((*where, "ranges", j), str(exc))
        out.append(Affected(pkg, tuple(compiled)))
    return tuple(out)


def _tests(doc: Mapping[str, Any], rep: Reporter) -> tuple[TestCase, ...]:
    raw = doc.get("tests")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        rep.error(("tests",),
                  "tests must be a list of {facts: {...}, expect: fire|quiet|undetermined}")
        return ()
    out = []
    for i, case in enumerate(raw):
        where = ("tests", i)
        if not isinstance(case, Mapping):
            rep.error(where, "a test case is a mapping {facts: {...}, expect: ...}")
            continue
        expect = case.get("expect")
        if expect not in EXPECT:
            rep.error((*where, "expect") if "expect" in case else where,
                      f"expect must be one of {', '.join(EXPECT)}, not {expect!r}")
            continue
        facts = case.get("facts", {})
        if not isinstance(facts, Mapping):
            rep.error((*where, "facts"), "facts must be a mapping of fact name -> value")
            continue
        values = _test_facts(facts, (*where, "facts"), rep)
        fixed = parse_fixed(case, where, rep, _test_facts) if "fixed" in case else None
        if fixed is not None and expect != "fire":
            rep.error((*where, "fixed"), "fixed: belongs on a case that expects fire (it is "
                                         "that case after following the rule's fix)")
        for k in case:
            if k not in ("facts", "expect", "name", "fixed"):
                rep.warn((*where, k), f"unknown key {k!r} in test case ignored")
        raw_name = case.get("name")
        name = raw_name if isinstance(raw_name, str) else f"tests[{i}]"
        out.append(TestCase(values, expect, name, rep.line(where), fixed))
    return tuple(out)


def _test_facts(facts: Mapping[str, Any], where: tuple[Any, ...], rep: Reporter
                ) -> dict[str, Any]:
    """A test case's facts (or the facts a ``fixed:`` block sets), each checked against the
    registry: registered name, quoted versions, the registered type."""
    values: dict[str, Any] = {}
    for name, value in facts.items():
        fwhere = (*where, name)
        ftype = conditions.fact_type(name, rep, fwhere)
        value = decode_value(value)
        if ftype in ("version", "cc") and _is_number(value):
            written = rep.as_written(fwhere, value)
            rep.error(fwhere, f"versions must be quoted strings: test fact {name} is a "
                              f"{ftype} but {written} is not quoted, so YAML reads it as a "
                              f"number (2.10 becomes 2.1); write \"{written}\"")
        elif ftype in ("version", "cc") and not isinstance(value, (str, Unknown)):
            # A list, mapping, bool or null: quoting is not the problem, the shape is.
            shape = {"cc": "a quoted \"major.minor\" string such as \"8.9\"",
                     "version": "a quoted version string such as \"2.5.1\""}[ftype]
            rep.error(fwhere, f"test fact {name} is a {ftype}: its value must be {shape}, "
                              f"not {_kind(value)} {value!r}")
        elif ftype and not isinstance(value, Unknown) and not _has_type(value, ftype):
            rep.error(fwhere, f"test fact {name} is registered as {ftype}; "
                              f"{value!r} is not a {ftype}")
        values[str(name)] = value
    return values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    """How a YAML reader would name the type of ``value`` in a message."""
    if value is None:
        return "null"
    return {bool: "the bool", list: "a list", dict: "a mapping"}.get(type(value), "the value")


def _has_type(value: Any, ftype: str) -> bool:
    """Whether a test-case value fits the fact's registered type (``any`` fits everything).

    Versions and compute capabilities are checked for quoting elsewhere, with a better message.
    """
    return ftype in ("version", "cc") or value_fits(value, ftype)


def build_rule(doc: Any, rep: Reporter) -> Rule | None:
    """Validate one parsed document; returns the rule, or None when ``rep`` has errors."""
    if not isinstance(doc, Mapping):
        rep.error((), "a rule file must be a YAML mapping (one rule per file)")
        return None
    for key in doc:
        if key not in KNOWN:
            rep.warn((key,), f"unknown key {key!r} ignored (not in rule schema {SCHEMA_MAJOR}.x)")
    for key in REQUIRED:
        if key not in doc and key != "references":
            rep.error((), f"missing required key {key!r}")
    sv = doc.get("schema_version", "1.0")
    if not isinstance(sv, str):
        rep.error(("schema_version",), f"schema_version must be a quoted string like \"1.0\" "
                                       f"(YAML read {sv!r})")
    elif sv.split(".")[0] != SCHEMA_MAJOR:
        rep.error(("schema_version",), f"schema_version {sv!r} is not supported (this "
                                       f"fp8-doctor reads {SCHEMA_MAJOR}.x)")
    rid = _str(doc, "id", rep, one_line=True) if "id" in doc else None
    title = _str(doc, "title", rep, one_line=True) if "title" in doc else None
    severity = doc.get("severity")
    if "severity" in doc and severity not in SEVERITIES:
        rep.error(("severity",),
                  f"severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    confidence = doc.get("confidence")
    if "confidence" in doc and confidence not in CONFIDENCES:
        rep.error(("confidence",),
                  f"confidence must be one of {', '.join(CONFIDENCES)}, not {confidence!r}")
    message = _str(doc, "message", rep) if "message" in doc else None
    msg_tpl = _template(message, ("message",), rep)
    fix, fix_tpl = _fix(doc, rep) if "fix" in doc else (Fix(""), interpolate.Template("", ()))
    references = _references(doc, rep)
    when = conditions.compile_condition(doc["when"], rep) if "when" in doc else None
    aliases = _str_list(doc, "aliases", rep)
    for j, alias in enumerate(aliases):
        if alias == rid:
            rep.error(("aliases", j), f"alias {alias!r} is the rule's own id; aliases are the "
                                      "rule's old ids (renames), never its current one")
        elif alias in aliases[:j]:
            rep.error(("aliases", j), f"alias {alias!r} is listed twice")
    tags = _str_list(doc, "tags", rep)
    affected = _affected(doc, rep)
    tests = _tests(doc, rep)
    withdrawn = _date(doc, "withdrawn", rep)
    modified = _date(doc, "modified", rep)
    published = _date(doc, "published", rep)
    details = _str(doc, "details", rep) if "details" in doc else None
    help_uri = _url(doc, "help_uri", rep)
    min_tool_version, too_new = _min_tool_version(doc, rep)
    location = _location(doc, when, rep)
    read_at = read_at_list(doc, rep)
    measured = measured_block(doc, confidence, rep)
    if rep.errors or when is None or rid is None or title is None or message is None:
        return None
    return Rule(
        id=rid, title=title, severity=Severity(severity), confidence=str(confidence),
        when=when, message=msg_tpl, fix=fix, fix_template=fix_tpl, references=references,
        path=rep.path, raw=doc, aliases=aliases, tags=tags, affected=affected, tests=tests,
        withdrawn=withdrawn, modified=modified, published=published, details=details,
        help_uri=help_uri, schema_version=sv if isinstance(sv, str) else "1.0",
        min_tool_version=min_tool_version, too_new=too_new, location=location,
        read_at=read_at, measured=measured,
    )



def _location(doc: Mapping[str, Any], when: Any, rep: Reporter) -> str | None:
    """``location: <fact>``: the fact whose ``file:line`` places the finding (one of ``when``'s)."""
    name = doc.get("location")
    if name is None:
        return None
    if not isinstance(name, str):
        rep.error(("location",), f"location must be a fact name, not {name!r}")
        return None
    if when is not None and name not in when.fact_names():
        rep.error(("location",), f"location {name!r} is not one of the facts in 'when'")
        return None
    return name


def _min_tool_version(doc: Mapping[str, Any], rep: Reporter) -> tuple[str | None, str | None]:
    """``(declared, too_new)``: a rule needing a newer fp8-doctor loads but is skipped, with a
    warning saying so; ``too_new`` is the declared version only in that case."""
    need = doc.get("min_tool_version")
    if need is None:
        return None, None
    if not isinstance(need, str) or comparison_key(need) is None:
        rep.error(("min_tool_version",),
                  f"min_tool_version must be a quoted version string, not {need!r}")
        return None, None
    have = comparison_key(preflight.__version__)
    if have is not None and have < comparison_key(need):  # type: ignore[operator]
        rep.warn(("min_tool_version",),
                 f"this rule needs fp8-doctor>={need} but {preflight.__version__} is installed; "
                 "it is skipped (pip install --upgrade fp8-doctor)")
        return need, need
    return need, None


def _url(doc: Mapping[str, Any], key: str, rep: Reporter) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        rep.error((key,), f"{key} must be an http(s) URL, not {value!r}")
        return None
    return value
