"""A dataclass default turned off by a store_true flag (`config = TrainingConfig()`, `if
args.no_fp8: config.use_fp8 = False`): the set is applied where the value is read, under its
condition, so it is no set "out of the reader's sight" (reading/pyshared._applied_sets;
holdout18 yxanul). A set through another name or in another function still is."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

ENABLED = "config.pytorch.te.autocast.enabled"

SCRIPT = """
import argparse
from dataclasses import dataclass
import transformer_engine.pytorch as te


@dataclass
class TrainingConfig:
    use_fp8: bool = True


def evaluate(model, config):
    if config.use_fp8:
        with te.fp8_autocast(enabled=True):
            model()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no_fp8", action="store_true")
    args = parser.parse_args()
    config = TrainingConfig()
    if args.no_fp8:
        config.use_fp8 = False
    {extra}
    evaluate(te.Linear(16, 16), config)


main()
"""


def _enabled(tmp: Path, flags: str, extra: str = "pass") -> object:
    (tmp / "train.py").write_text(textwrap.dedent(SCRIPT).replace("{extra}", extra))
    (tmp / "run.sh").write_text(f"#!/bin/bash\npython train.py {flags}\n")
    return read_paths([str(tmp / "run.sh")]).facts.get(ENABLED)


def test_the_default_holds_without_the_flag(tmp_path: Path) -> None:
    assert _enabled(tmp_path, "") is True


def test_the_flag_turns_it_off(tmp_path: Path) -> None:
    assert _enabled(tmp_path, "--no_fp8") is None        # the autocast never runs


@pytest.mark.parametrize("extra", [
    "alias = config; alias.use_fp8 = False",      # through another name
    "(lambda: None)(); TrainingConfig.__init__; vars(config).update(use_fp8=False)",
    "config.__dict__['use_fp8'] = False",
])
def test_a_set_out_of_sight_stays_unknown(tmp_path: Path, extra: str) -> None:
    assert isinstance(_enabled(tmp_path, "", extra), Unknown)


def test_a_literal_setattr_is_a_set(tmp_path: Path) -> None:
    # redteam11: setattr(obj, "name", v) with a literal name is read as obj.name = v
    extra = "(lambda: None)(); TrainingConfig.__init__; [setattr(config, 'use_fp8', False)]"
    assert _enabled(tmp_path, "", extra) is None          # off before evaluate: never runs


def test_a_set_in_another_function_stays_unknown(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT).replace("{extra}", "off(config)")
                                       .replace("def main():", "def off(cfg):\n    cfg.use_fp8 = "
                                                "False\n\n\ndef main():"))
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython train.py\n")
    assert isinstance(read_paths([str(tmp_path / "run.sh")]).facts.get(ENABLED), Unknown)


def test_reading_the_namespace_is_no_store(tmp_path: Path) -> None:
    # vars(config) to log it, or config.__dict__ read, changes nothing
    extra = "print(vars(config)); snapshot = dict(config.__dict__)"
    assert _enabled(tmp_path, "", extra) is True
