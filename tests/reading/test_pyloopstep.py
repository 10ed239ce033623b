"""A call under a per-step test inside a training loop runs when the test holds at a step the
loop surely makes (reading/pyloopstep.py; holdout18 yxanul: FP8 after a BF16 warm-up, `if
use_fp8_now:` with `use_fp8_now = config.use_fp8 and (iter_num >= config.fp8_warmup_steps)`, was
Unknown). Only a witness makes it run; otherwise it stays Unknown, never "no"."""

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
import torch
import transformer_engine.pytorch as te


@dataclass
class TrainingConfig:
    use_fp8: bool = True
    fp8_warmup_steps: int = 100
    max_iters: int = 2000


def train():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_iters", type=int, default=2000)
    parser.add_argument("--no_fp8", action="store_true")
    args = parser.parse_args()
    config = TrainingConfig()
    if args.no_fp8:
        config.use_fp8 = False
    config.max_iters = args.max_iters
    model = te.Linear(768, 768)
    optim = torch.optim.AdamW(model.parameters())
    for iter_num in {loop}:
        for micro_step in range(4):
            {now}
            if {test}:
                with te.fp8_autocast(enabled=True):
                    loss = model(torch.randn(16, 768)).sum()
            else:
                loss = model(torch.randn(16, 768)).sum()
            loss.backward()
        optim.step()


if __name__ == "__main__":
    train()
"""
NOW = "use_fp8_now = config.use_fp8 and (iter_num >= config.fp8_warmup_steps)"


def _enabled(tmp: Path, flags: str, loop: str = "range(config.max_iters)", now: str = NOW,
             test: str = "use_fp8_now") -> object:
    (tmp / "train.py").write_text(textwrap.dedent(SCRIPT).format(loop=loop, now=now, test=test))
    (tmp / "run.sh").write_text(f"#!/bin/bash\npython train.py {flags}\n")
    return read_paths([str(tmp / "run.sh")]).facts.get(ENABLED)


@pytest.mark.parametrize("flags,loop", [
    ("--max_iters 200", "range(config.max_iters)"),
    ("", "range(config.max_iters)"),                    # the argparse default, 2000
    ("--max_iters 101", "range(config.max_iters)"),     # the last step is the first FP8 one
    ("", "range(50, 300, 7)"),
])
def test_fp8_after_a_warm_up_runs_in_the_later_steps(tmp_path: Path, flags: str,
                                                     loop: str) -> None:
    assert _enabled(tmp_path, flags, loop) is True


def test_the_store_true_negation_turns_it_off(tmp_path: Path) -> None:
    assert _enabled(tmp_path, "--max_iters 200 --no_fp8") is not True


@pytest.mark.parametrize("flags,loop,now,test", [
    ("--max_iters 100", "range(config.max_iters)", NOW, "use_fp8_now"),   # never reaches 100
    ("--max_iters 0", "range(config.max_iters)", NOW, "use_fp8_now"),     # no step at all
    ("", "loader", NOW, "use_fp8_now"),                                  # no range: no ends
    ("", "range(config.max_iters)", NOW, "iter_num % 500 == 250"),     # holds only mid-range
    ("", "range(config.max_iters)", NOW + "; use_fp8_now = False", "use_fp8_now"),
    ("", "range(config.max_iters)", "pass", "(lambda i: i > 5)(iter_num)"),
    ("", "range(config.max_iters)", "pass", "torch.rand(1).item() > 0.5"),
])
def test_no_witness_stays_unknown(tmp_path: Path, flags: str, loop: str, now: str,
                                  test: str) -> None:
    got = _enabled(tmp_path, flags, loop, now, test)
    assert got is not True
    assert got is None or isinstance(got, Unknown)


def test_the_first_step_is_a_witness(tmp_path: Path) -> None:
    assert _enabled(tmp_path, "", test="iter_num < 10") is True


def test_a_huge_range_is_not_walked(tmp_path: Path) -> None:
    assert _enabled(tmp_path, "--max_iters " + "9" * 40) is True
