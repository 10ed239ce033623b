"""``strip_comments`` keeps every offset (redteam2, issue 21): a comment at the start of a line
(the ``#!`` line, a header) came back one character shorter, so the offsets of everything after
it moved back one per such line, and the override readers, which count lines in the unstripped
text, put the launch line's entry on the line above (``run.sh:1`` for a command on line 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.jobs.read import read_paths
from preflight.reading.shellvars import strip_comments


@given(st.text(alphabet="#! \tab\n$'\"{}", max_size=60))
def test_the_text_keeps_its_length_and_lines(text: str) -> None:
    out = strip_comments(text)
    assert len(out) == len(text)
    assert [i for i, c in enumerate(out) if c == "\n"] == [i for i, c in enumerate(text)
                                                           if c == "\n"]


@pytest.mark.parametrize(("kind", "line"), [
    ("verl", "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm"),
    ("skyrl", "uv run --isolated -m skyrl_train.entrypoints.main_base trainer.epochs=1"),
    ("nemo_rl", "uv run examples/run_grpo_math.py policy.precision=bfloat16"),
])
def test_the_entry_is_on_its_own_line_after_a_header(tmp_path: Path, kind: str,
                                                     line: str) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\n# a header\n#   of three lines\n{line}\n")
    read = read_paths([str(script)])
    assert read.provenance[f"config.{kind}.entry"].line == 4
