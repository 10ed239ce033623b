"""Renderers: a Report as text (rich), JSON, a Markdown support report, SARIF 2.1.0 or JUnit XML.

Every format renders from the report's JSON document (:meth:`Report.to_dict`), redacted first
unless ``redact=False``; after rendering, the string is passed through the content redactor once
more, so a value a format assembles from several parts cannot slip through. That second pass has
no keys, so it leaves long hex runs alone: the key-aware document pass already masked those where
they are not identifiers (a commit hash under ``cuda.torch_git`` stays readable). Before either,
control characters in the document are escaped (:mod:`preflight.render.sanitize`), with or
without redaction. Renderers never probe.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight.redact import Redactor
    from preflight.report import Report

from preflight.outputs import FORMATS  # noqa: E402 - the one list of formats


def document(report: Report, *, redact: bool = True,
             redactor: Redactor | None = None) -> dict[str, Any]:
    """The report's JSON document, control characters escaped, redacted unless ``redact`` is
    False."""
    from preflight.render.sanitize import clean_document

    doc: dict[str, Any] = clean_document(_document(report, redact))
    if redact:
        from preflight.redact import redact_document

        doc = redact_document(doc, redactor=redactor)
    return doc


def render(report: Report, fmt: str, *, redact: bool = True, color: bool = False,
           redactor: Redactor | None = None, width: int | None = None, detail: str = "normal",
           srcroot: str | None = None) -> str:
    """Render ``report`` in ``fmt`` (one of :data:`FORMATS`); the result ends with a newline.

    ``redactor`` replaces the one built for this machine (tests plant a home, user and host).
    Text only: ``width`` (columns; default 100, the CLI passes the terminal's) and ``detail``
    (``quiet`` | ``normal`` | ``verbose``). SARIF only: ``srcroot``, the directory config paths
    are made relative to (default: the current directory).
    """
    options = Options(color=color, width=width, detail=detail,
                      roots=_roots(srcroot, redact, redactor),
                      root_uri=None if redact else _root_uri(srcroot))
    renderer = _renderer(fmt)
    out = render_document(_document(report, redact), lambda doc: renderer(doc, options),
                          redact=redact, redactor=redactor)
    return out if out.endswith("\n") else out + "\n"


def render_document(doc: dict[str, Any], renderer: Callable[[dict[str, Any]], str], *,
                    redact: bool = True, redactor: Redactor | None = None) -> str:
    """``renderer(doc)`` with control characters escaped and the two redaction passes described
    above (also what ``fp8-doctor smoke`` prints)."""
    from preflight.render.sanitize import clean_document

    doc = clean_document(doc)
    if not redact:
        return renderer(doc)
    from preflight.redact import redact_document, redact_text

    return redact_text(renderer(redact_document(doc, redactor=redactor)), redactor=redactor,
                       hex_runs=False)


def _document(report: Report, redact: bool) -> dict[str, Any]:
    doc = report.to_dict()
    doc.setdefault("fail_on", report.fail_on)
    doc["redacted"] = redact
    return doc


@dataclass(frozen=True)
class Options:
    """What a renderer may be asked besides the document (each format reads what it uses)."""

    color: bool = False
    width: int | None = None
    detail: str = "normal"
    roots: tuple[str, ...] = ()
    root_uri: str | None = None


def _roots(srcroot: str | None, redact: bool, redactor: Redactor | None) -> tuple[str, ...]:
    """The run directory as the (redacted) document writes paths: raw, and with the home as ``~``
    (on a GitHub runner the workspace is under the home, so redaction rewrites it)."""
    root = os.path.abspath(srcroot or os.getcwd())
    if not redact:
        return (root,)
    from preflight.redact import redact_text

    return (redact_text(root, redactor=redactor, hex_runs=False), root)


def _root_uri(srcroot: str | None) -> str:
    from urllib.parse import quote

    root = os.path.abspath(srcroot or os.getcwd()).replace(os.sep, "/")
    return "file://" + quote(root if root.startswith("/") else "/" + root) + "/"


_ALIASES = {"md": "markdown"}


def _renderer(fmt: str) -> Callable[[dict[str, Any], Options], str]:
    """``render`` of the format's module (:data:`preflight.outputs.REPORT_FORMATS`), imported
    only now: a check imports one renderer."""
    from importlib import import_module

    from preflight.outputs import BY_NAME

    entry = BY_NAME.get(_ALIASES.get(fmt, fmt))
    if entry is None:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    renderer: Callable[[dict[str, Any], Options], str] = import_module(
        f"preflight.render.{entry.module}").render
    return renderer
