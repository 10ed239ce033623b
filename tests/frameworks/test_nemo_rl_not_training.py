"""NeMo-RL scripts that only evaluate, convert or export (examples/run_eval.py,
examples/converters/convert_*_to_hf.py at NVIDIA-NeMo/RL v0.7.0): detected as NeMo-RL, the job
said not to train (FP8D-CFG-NOT-TRAINING, intent.fp8 false with that reason, no FP8 training
finding), Unknown where a branch that may not run chooses the entry point. The launch lines are
NeMo-RL v0.7.0 docs/guides/eval.md l.18-21 and l.47-72."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import api, intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "nemo_rl"
ASSUME = {"gpu": "H100", "pkg.nemo-rl": "0.7.0", "pkg.transformer-engine": "2.14.1",
          "pkg.vllm": "0.25.1", "pkg.torch": "2.11.0+cu130"}


def _job(tmp: Path, script: str) -> str:
    (tmp / "examples/configs/evals").mkdir(parents=True)
    (tmp / "examples/configs/evals/eval.yaml").write_text(
        (FIXTURES / "examples/configs/evals/eval.yaml").read_text())
    (tmp / "eval.sh").write_text(textwrap.dedent(script))
    return str(tmp / "eval.sh")


@pytest.mark.parametrize("script", [
    "uv run python examples/run_eval.py\n",
    "uv run python examples/run_eval.py --config examples/configs/evals/eval.yaml \\\n"
    "    generation.model_name=Qwen/Qwen3-8B-FP8 generation.vllm_cfg.precision=fp8\n",
    # the guide's conversion then evaluation: its --config is the training run's config.yaml
    """\
    uv run python examples/converters/convert_dcp_to_hf.py \\
        --config results/grpo/step_170/config.yaml \\
        --dcp-ckpt-path results/grpo/step_170/policy/weights/ \\
        --hf-ckpt-path results/grpo/hf
    uv run python examples/run_eval.py generation.model_name=$PWD/results/grpo/hf
    """,
])
def test_an_eval_only_script_is_nemo_rl_and_does_not_train(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    monkeypatch.chdir(tmp_path)
    path = _job(tmp_path, script)
    read = read_paths([path])
    assert read.files[0] == (path, "nemo_rl")
    assert read.facts["config.nemo_rl.trains"] is False
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False
    assert not any(k.startswith("intent.rollout.") and not isinstance(v, Unknown)
                   for k, v in values.items())
    report = api.check([path], assume=ASSUME)
    ids = {f.rule_id for f in report.findings}
    assert "FP8D-CFG-NOT-TRAINING" in ids
    assert not ids & {"FP8D-CFG-NO-JOB", "FP8D-CFG-UNKNOWN-FRAMEWORK"}
    assert not any(i.startswith(("FP8D-NRL-", "FP8D-RL-", "FP8D-TE-")) for i in ids)


def test_training_wins_over_an_eval_after_it(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grpo.yaml").write_text(
        "policy:\n  model_name: m\n  megatron_cfg:\n    enabled: true\n    fp8_cfg:\n"
        "      enabled: true\n      fp8: e4m3\n      fp8_recipe: blockwise\n      fp8_param: false\n"
        "grpo:\n  num_prompts_per_step: 8\n")
    path = _job(tmp_path, "uv run examples/run_grpo.py --config grpo.yaml\n"
                          "uv run python examples/run_eval.py\n")
    read = read_paths([path])
    assert "config.nemo_rl.trains" not in read.facts
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True


def test_an_entry_point_chosen_by_a_branch_leaves_training_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = _job(tmp_path, """\
        if [ "$MODE" = eval ]; then
            ENTRY=examples/run_eval.py
        fi
        uv run python $ENTRY --config examples/configs/evals/eval.yaml
    """)
    read = read_paths([path])
    trains = read.facts["config.nemo_rl.trains"]
    assert isinstance(trains, Unknown) and "line 2" in trains.reason
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
