"""Helpers for the config-reader tests (a uniquely named module: no clash with other conftests)."""

from __future__ import annotations

from pathlib import Path

from preflight.jobs.read import ConfigRead, read_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "configs"


def fixture(rel: str) -> str:
    return str(FIXTURES / rel)


def read_fixture(rel: str, kind: str | None = None) -> ConfigRead:
    return read_paths([fixture(rel)], kind=kind)


def line_of(read: ConfigRead, name: str) -> int | None:
    """The line number in the provenance of ``name`` (``path:line``)."""
    tail = read.provenance[name].rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None
