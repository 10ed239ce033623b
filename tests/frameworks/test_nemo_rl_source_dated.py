"""A NeMo-RL checkout dated from its base config's keys (holdout17, NeMo-RL issue 1368): with no
NeMo-RL source in the job, ``examples/configs/grpo_math_1B.yaml`` having
``grpo.overlong_filtering`` (PR 724) and not ``policy.offload_optimizer_for_logprob`` (PR 1404)
puts the checkout before PR 1432, so ``config.nemo_rl.source.fp8_vllm010_weight_patch`` is
inferred true, its provenance saying so, and FP8D-NRL-0009 fires on vLLM 0.11. The job's own
source, where it holds one, wins; any other base says nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import preflight
from preflight.jobs.read import read_paths

JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout17-nemo-rl-1368-llama31-8b-fp8-rollouts-v2-vllm011-h100" / "files")
RECIPE = "examples/configs/recipes/llm/grpo-llama3.1-8b-instruct-1n8g-megatron-fp8-rollouts.v2.yaml"
BASE = "examples/configs/grpo_math_1B.yaml"
FACT = "config.nemo_rl.source.fp8_vllm010_weight_patch"
RC0 = {"gpu": "H100", "pkg.nemo-rl": "0.5.0rc0", "pkg.vllm": "0.11.0"}


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "RL"
    shutil.copytree(JOB, job)
    (job / ".git").mkdir()
    return job


def _fired(job: Path, **assume: str) -> set[str]:
    report = preflight.check([str(job / RECIPE)], smoke=False, assume={**RC0, **assume})
    return {f.rule_id for f in report.findings}


def test_a_base_from_before_pr_1404_dates_the_checkout_before_pr_1432(tmp_path: Path) -> None:
    job = _job(tmp_path)
    read = read_paths([str(job / RECIPE)])
    assert read.facts[FACT] is True
    where = read.provenance[FACT]
    assert where.startswith(str(job / BASE) + ":") and "inferred" in where
    assert "FP8D-NRL-0009" in _fired(job)
    assert "FP8D-NRL-0009" not in _fired(job, **{"pkg.vllm": "0.10.0"})


def test_a_base_with_the_pr_1404_key_says_nothing(tmp_path: Path) -> None:
    job = _job(tmp_path)
    base = job / BASE
    base.write_text(base.read_text().replace(
        "\npolicy:\n", "\npolicy:\n  offload_optimizer_for_logprob: false\n", 1))
    assert FACT not in read_paths([str(job / RECIPE)]).facts
    assert "FP8D-NRL-0009" not in _fired(job)


def test_a_base_without_the_pr_724_key_says_nothing(tmp_path: Path) -> None:
    job = _job(tmp_path)
    base = job / BASE
    base.write_text(base.read_text().replace("  overlong_filtering: false\n", ""))
    assert FACT not in read_paths([str(job / RECIPE)]).facts


def test_the_jobs_own_source_wins(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (job / "nemo_rl" / "algorithms").mkdir(parents=True)
    (job / "nemo_rl" / "algorithms" / "grpo.py").write_text("x = 1\n")
    fp8 = job / "nemo_rl" / "models" / "generation" / "fp8.py"
    fp8.parent.mkdir(parents=True)
    fp8.write_text("def process_weights_after_loading(self, layer):\n    pass\n")
    read = read_paths([str(job / RECIPE)])
    assert read.facts[FACT] is False and "inferred" not in read.provenance[FACT]


def test_a_hostile_base_gives_no_fact_and_no_traceback(tmp_path: Path) -> None:
    job = _job(tmp_path)
    base = job / BASE
    outside = tmp_path / "outside.yaml"
    outside.write_text(base.read_text())
    base.unlink()
    os.symlink(outside, base)                      # a link out of the job: never read
    assert FACT not in read_paths([str(job / RECIPE)]).facts
    base.unlink()
    base.write_bytes(b"\xff\xfe\x00" * 5000)        # not text
    assert FACT not in read_paths([str(job / RECIPE)]).facts
    base.write_text("grpo: [overlong_filtering]\npolicy: {a: " * 2000 + "1")
    assert FACT not in read_paths([str(job / RECIPE)]).facts
