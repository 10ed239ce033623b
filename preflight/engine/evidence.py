"""What a rule's confidence rests on: pinned references, ``read_at`` and ``measured``.

A rule is only as true as the source it was read from. A link to a moving branch (``blob/main``,
``/latest/`` docs) may no longer hold what the rule says by the time someone follows it, so lint
refuses it; ``read_at`` records which tag or commit a ``verified`` rule was read at, and a
``measured`` rule says which device it was measured on and when (issue 16). Everything here is
offline: lint never touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from preflight.engine.model import Reporter, Rule

# `read_at: [owner/repo@ref, ...]`: the tags or commits whose source was read for this rule.
READ_AT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*"
                        r"@[A-Za-z0-9][A-Za-z0-9_.+/-]*")
# Branch names that move: a link on one stops meaning what the rule says when the branch moves.
MOVING = frozenset({"main", "master", "develop", "devel", "dev", "trunk", "nightly", "latest",
                    "stable", "head", "HEAD", "default", "next", "unstable", "current"})
# Statements that a `stated` rule may rest on (an issue, a discussion, docs, an article ...).
STATEMENTS = frozenset({"REPORT", "DISCUSSION", "ARTICLE", "DOCS", "WEB", "ADVISORY", "EVIDENCE"})
_SHA = re.compile(r"[0-9a-f]{7,40}")
_GITHUB_REF = re.compile(r"/[^/]+/[^/]+/(?:blob|tree|raw|blame|commits)/([^/?#]+)")
_RAW_REF = re.compile(r"/[^/]+/[^/]+/([^/?#]+)/")
_FIX_PATH = re.compile(r"/[^/]+/[^/]+/(?:pull/\d+|commit/[0-9a-f]{7,40}|commits/[0-9a-f]{7,40}"
                       r"|pull/\d+/commits/[0-9a-f]{7,40})(?:/.*)?")
_GITLAB_FIX = re.compile(r".*/-/(?:merge_requests/\d+|commit/[0-9a-f]{7,40})(?:/.*)?")


def read_at_list(doc: Mapping[str, Any], rep: Reporter) -> tuple[str, ...]:
    """``read_at``: ``owner/repo@ref`` strings, where ref is the tag or commit that was read.

    Whether a ref is a moving branch is lint's question (below), so a rule pack with one still
    loads on a check."""
    raw = doc.get("read_at")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        rep.error(("read_at",), f"read_at must be a list of strings, not {raw!r}")
        return ()
    for j, ref in enumerate(raw):
        if not READ_AT_RE.fullmatch(ref):
            rep.error(("read_at", j), f"read_at entry {ref!r} must be owner/repo@tag-or-commit "
                                      "(e.g. huggingface/accelerate@v1.9.0)")
    return tuple(raw)


def measured_block(doc: Mapping[str, Any], confidence: Any, rep: Reporter
                   ) -> tuple[tuple[str, str], ...]:
    """``measured: {device, date[, note]}``: required with ``confidence: measured`` (evidence
    from running on hardware is only as good as knowing which hardware, and when)."""
    raw = doc.get("measured")
    if raw is None:
        if confidence == "measured":
            rep.error(("confidence",), "confidence: measured needs a `measured: {device: ..., "
                                       "date: \"YYYY-MM-DD\"}` block saying where and when")
        return ()
    if not isinstance(raw, Mapping):
        rep.error(("measured",), "measured must be a mapping {device: ..., date: ...}")
        return ()
    out: list[tuple[str, str]] = []
    for key in ("device", "date", "note"):
        value = raw.get(key)
        if value is None and key == "note":
            continue
        if value is not None and not isinstance(value, str):
            import datetime as _dt  # not at the top: a check builds rules from the index's strings

            if isinstance(value, (_dt.date, _dt.datetime)):  # an unquoted 2026-11-23
                value = value.isoformat()
        if not isinstance(value, str) or not value.strip():
            rep.error(("measured",), f"measured.{key} must be a non-empty string")
            continue
        if key == "date" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
            rep.error(("measured", key), f"measured.date must be YYYY-MM-DD, not {value!r}")
        out.append((key, value.strip()))
    for key in raw:
        if key not in ("device", "date", "note"):
            rep.warn(("measured", key), f"unknown key {key!r} in measured ignored")
    if confidence != "measured":
        rep.warn(("measured",), "a measured block on a rule whose confidence is not `measured`")
    return tuple(out)


def moving_ref(url: str) -> str | None:
    """The moving branch or docs channel a URL points at (``main``, ``latest``), else None."""
    parts = urlsplit(url)
    host, path = parts.netloc.lower(), parts.path
    if host in ("github.com", "gitlab.com", "bitbucket.org"):
        m = _GITHUB_REF.match(path.replace("/-/", "/"))
        if m and m.group(1) in MOVING:
            return m.group(1)
        return None
    if host == "raw.githubusercontent.com":
        m = _RAW_REF.match(path)
        return m.group(1) if m and m.group(1) in MOVING else None
    # Docs sites: a channel segment anywhere in the path (/en/latest/, /docs/stable/,
    # /user-guide/latest/, /docs/main/).
    for seg in path.split("/"):
        if seg in MOVING:
            return seg
    return None


def pinned_source(url: str) -> bool:
    """A SOURCE link names a tag or a commit: a GitHub/GitLab blob/tree at a ref that is not a
    moving branch, or any other site whose path carries a version (a wheel, a docs page at 2.5)."""
    if moving_ref(url) is not None:
        return False
    parts = urlsplit(url)
    if parts.netloc.lower() in ("github.com", "gitlab.com"):
        path = parts.path.replace("/-/", "/")
        return _GITHUB_REF.match(path) is not None or \
            re.fullmatch(r"/[^/]+/[^/]+/commit/[0-9a-f]{7,40}(?:/.*)?", path) is not None
    return re.search(r"\d+\.\d+|[0-9a-f]{12,40}", parts.path) is not None


def is_fix_link(url: str) -> bool:
    """A FIX link names the change: a pull / merge request or a commit."""
    parts = urlsplit(url)
    host = parts.netloc.lower()
    if host == "github.com":
        return _FIX_PATH.fullmatch(parts.path) is not None
    if host == "gitlab.com" or "gitlab" in host:
        return _GITLAB_FIX.fullmatch(parts.path) is not None
    return False


def lint(rule: Rule) -> list[tuple[str, int | None, str, str]]:
    """Problems with what the rule rests on, as ``(key, index, message, level)``: index is the
    reference's (or read_at entry's) position for the caller to place on a line."""
    out: list[tuple[str, int | None, str, str]] = []
    for i, ref in enumerate(rule.references):
        branch = moving_ref(ref.url)
        if branch is not None:
            out.append(("references", i, f"reference {ref.url} points at the moving {branch!r}: "
                                         "link a tag or a commit (or a versioned docs page)", "error"))
        elif ref.type == "SOURCE" and not pinned_source(ref.url):
            out.append(("references", i, f"SOURCE reference {ref.url} names no tag or commit: "
                                         "link the file at the tag or commit that was read", "error"))
        if ref.type == "FIX" and not is_fix_link(ref.url):
            out.append(("references", i, f"FIX reference {ref.url} is not a pull request or "
                                         "commit: label it by what it is (REPORT, DOCS, ...)", "error"))
    for j, at in enumerate(rule.read_at):
        branch = at.rsplit("@", 1)[-1]
        if branch in MOVING:
            out.append(("read_at", j, f"read_at {at!r} names the moving {branch!r}: name the "
                                      "tag or commit that was read", "error"))
    types = {r.type for r in rule.references}
    if rule.confidence == "stated" and not types & STATEMENTS:
        out.append(("confidence", None, "a `stated` rule cites a statement: add a REPORT, "
                                        "DISCUSSION, DOCS or ARTICLE reference that says it", "error"))
    if rule.confidence == "verified" and not rule.read_at and "SOURCE" not in types:
        # A warning for now: 19 rules of the first rule base predate read_at; an error once
        # each has been re-read at its tags (issue 16).
        out.append(("confidence", None, "a `verified` rule says what was read: add `read_at: "
                                        "[owner/repo@tag]` or a SOURCE reference at a tag",
                    "warning"))
    return out
