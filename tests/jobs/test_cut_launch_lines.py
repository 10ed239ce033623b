"""Settings past a reader's bound (redteam3, issue 21): a launch line with more than 10,000
overrides, words or flags was read up to the bound with a warning, and the FP8 setting after it
(which wins over what came before) was lost: FP8 "no", the FP8 rules quiet, exit 0. Now the
job's FP8 (and FP8 rollout) is Unknown naming the line where reading stopped. A NeMo 2 perf
script run as a module that is not in the job (or is a FIFO, a link out) left ``-c fp8`` as FP8
"no" too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

JUNK = 10_500
LINES = {
    "nemo_rl": ("uv run examples/run_grpo_math.py --config c.yaml " + "policy.x=1 " * JUNK +
                "policy.megatron_cfg.enabled=true policy.megatron_cfg.fp8_cfg.enabled=true",
                "intent.fp8"),
    "verl": ("python3 -m verl.trainer.main_ppo " + "trainer.x=1 " * JUNK +
             "actor_rollout_ref.rollout.quantization=fp8 actor_rollout_ref.rollout.name=vllm",
             "intent.rollout.fp8"),
    "accelerate": ("accelerate launch " + "--x 1 " * JUNK + "--mixed_precision fp8 train.py",
                   "intent.fp8"),
    "nemo2": ("nemo llm pretrain --factory llama3_8b " + "trainer.strategy.x=1 " * JUNK +
              "trainer.plugins=bf16_with_fp8_mixed", "intent.fp8"),
    "megatron": ("torchrun pretrain_gpt.py --num-layers 2 --hidden-size 8 " + "--x-y 1 " * JUNK +
                 "--fp8-format hybrid", "intent.fp8"),
}


def _values(script: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


@pytest.mark.parametrize("kind", sorted(LINES))
def test_fp8_past_a_bound_is_unknown_not_no(tmp_path: Path, kind: str) -> None:
    line, fact = LINES[kind]
    (tmp_path / "c.yaml").write_text("policy:\n  megatron_cfg:\n    enabled: false\n")
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\n{line}\n")
    read, values = _values(script)
    assert isinstance(values[fact], Unknown), values[fact]
    assert any(p.cut and p.line == 2 for p in read.problems)


def test_a_short_line_keeps_its_answer(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\naccelerate launch --x 1 --mixed_precision bf16 train.py\n")
    _, values = _values(script)
    assert values["intent.fp8"] is False


@pytest.mark.parametrize("what", ["missing", "fifo", "outside"])
def test_a_nemo2_perf_module_not_read_leaves_fp8_unknown(tmp_path: Path, what: str) -> None:
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    module = job / "scripts" / "performance" / "llm" / "pretrain_llama3_8b.py"
    module.parent.mkdir(parents=True)
    if what == "fifo":
        os.mkfifo(module)
    elif what == "outside":
        (tmp_path / "x.py").write_text("x = 1\n")
        module.symlink_to(tmp_path / "x.py")
    script = job / "run.sh"
    script.write_text("#!/bin/bash\npython -m scripts.performance.llm.pretrain_llama3_8b "
                      "-g b200 -c fp8 -fr mxfp8\n")
    read, values = _values(script)
    assert isinstance(values["intent.fp8"], Unknown), values["intent.fp8"]
    assert any(p.line == 2 for p in read.problems)
