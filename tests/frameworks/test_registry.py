"""The FRAMEWORKS registry: one module per framework, and everything else iterates it."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import preflight.frameworks as fw
from preflight.frameworks import FRAMEWORKS, KINDS, Framework, detect
from preflight.registry.intent import SPECS as INTENT_SPECS

ROOT = Path(__file__).resolve().parents[2]


def test_every_framework_module_exports_one_registered_record() -> None:
    modules = [m.name for m in pkgutil.iter_modules(fw.__path__) if not m.name.startswith("_")]
    records = {}
    for name in modules:
        record = getattr(importlib.import_module(f"preflight.frameworks.{name}"), "FRAMEWORK",
                         None)
        if record is not None:
            assert isinstance(record, Framework)
            records[record.kind] = record
    assert set(records) == set(KINDS)
    assert all(records[f.kind] is f for f in FRAMEWORKS)


def test_records_are_complete() -> None:
    for f in FRAMEWORKS:
        assert set(f.formats) <= {"yaml", "json", "toml", "text", "python"}, f.kind
        # no format: the framework has no config file of its own (DiffSynth: train.py flags on
        # an accelerate launch line), so it must never claim a file
        assert f.formats or f.score({}) == 0, f.kind
        assert ("python" in f.formats) <= (f.read_python is not None), f.kind
        assert f.title and callable(f.score) and callable(f.read) and callable(f.derive)
        for ref in f.references:
            assert ref.kind in KINDS, (f.kind, ref)
        for kind in f.cancels_fp8_of:
            assert kind in KINDS
    assert len({f.precedence for f in FRAMEWORKS}) == len(FRAMEWORKS)


def test_cli_kind_choices_are_the_registry() -> None:
    out = subprocess.run([sys.executable, "-m", "preflight", "check", "--kind", "nope"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2
    for kind in KINDS:
        assert repr(kind) in out.stderr or kind in out.stderr


def test_docs_name_every_framework() -> None:
    text = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    for f in FRAMEWORKS:
        assert f"frameworks/{f.kind}.py" in text, f.kind


def test_detect_prefers_the_clear_winner_and_reports_ties() -> None:
    assert detect("json", {"zero_optimization": {"stage": 3}})[0] == "deepspeed"
    kind, scores = detect("yaml", {})
    assert kind is None and scores == []


def test_intent_vocabularies_are_closed_in_the_registry() -> None:
    closed = {s.name for s in INTENT_SPECS if s.choices}
    assert {"intent.backend", "intent.recipe", "intent.format", "intent.precision",
            "intent.distributed"} <= closed
