"""Shared fixtures for the engine tests: the sample data folder and a `rules` command runner."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from preflight.commands import rules as commands

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def run_rules() -> Callable[..., tuple[int, str]]:
    """Run ``rules ...`` through commands.main; returns (exit code, written text)."""
    def run(*argv: str) -> tuple[int, str]:
        parser = argparse.ArgumentParser()
        commands.add_arguments(parser)
        out: list[str] = []
        code = commands.main(parser.parse_args(list(argv)), lambda text, _o: out.append(text))
        return code, "\n".join(out)
    return run
