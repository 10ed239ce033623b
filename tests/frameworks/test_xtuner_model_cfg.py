"""XTuner V1 launched with TrainingArguments instead of --config (issue 22 item 3):
``torchrun xtuner/v1/train/cli/sft.py --model-cfg m.py --chat_template qwen3 --dataset d.jsonl``
(cli/sft.py l.29-35, arguments.py l.217-222 @ InternLM/xtuner b934f462: ``Config.fromfile(
model_cfg)["model"]``). Real files: docs/en/get_started/installation.md l.71 (the launch line)
with examples/v1/config/sft_qwen3_tiny.py; the Float8Config of
docs/en/pretrain_sft/advanced_tutorial/float8.md l.75-83 on a Qwen3-MoE model with ep_size.
Hostile: a run-time --model-cfg, a model built under a condition or not built, no ``model``,
--float8-config flags, a registered model name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

LAUNCH = ("torchrun xtuner/v1/train/cli/sft.py --model-cfg {cfg} --chat_template qwen3 "
          "--dataset tests/resource/openai_sft.jsonl{extra}\n")
TINY = "from xtuner.v1.model import Qwen3Dense8BConfig\n\n\nmodel = Qwen3Dense8BConfig(\n" \
       "    num_hidden_layers=3,\n    hidden_size=512\n)\n"
MOE_FP8 = '''from xtuner.v1.model import Qwen3MoE30BA3Config
from xtuner.v1.float8.config import Float8Config, ScalingGranularity

float8_cfg = Float8Config(
    scaling_granularity_gemm=ScalingGranularity.TILEWISE,
    scaling_granularity_grouped_gemm=ScalingGranularity.TILEWISE,
)
{body}
'''


def _job(tmp_path: Path, model: str, cfg: str = "examples/v1/sft_model.py",
         extra: str = "") -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / cfg
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model)
    run = tmp_path / "run.sh"
    run.write_text(LAUNCH.format(cfg=cfg, extra=extra))
    return run


def _intent(run: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return read.facts, {k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()}


def test_the_installation_example(tmp_path: Path) -> None:
    facts, got, _ = _intent(_job(tmp_path, TINY))
    assert facts["config.xtuner.model_cfg"] == "Qwen3Dense8BConfig"
    assert got["fp8"] is False                      # float8_cfg None (base.py l.127)
    assert isinstance(got["moe.experts"], Unknown)  # a dense model states no experts


def test_an_moe_model_with_float8_and_ep(tmp_path: Path) -> None:
    body = "model = Qwen3MoE30BA3Config(ep_size=8, float8_cfg=float8_cfg)"
    facts, got, prov = _intent(_job(tmp_path, MOE_FP8.format(body=body)))
    assert got["fp8"] is True and got["recipe"] == "blockwise"
    assert got["ep"] == 8
    assert got["moe.experts"] == 128 and got["moe.top_k"] == 8
    assert "qwen3.py l.159-161" in prov["moe.experts"]
    assert prov["fp8"].endswith("sft_model.py:5")


def test_given_counts_win_over_the_class(tmp_path: Path) -> None:
    body = "model = Qwen3MoE30BA3Config(n_routed_experts=64, num_experts_per_tok=4)"
    _, got, prov = _intent(_job(tmp_path, MOE_FP8.format(body=body)))
    assert got["moe.experts"] == 64 and got["moe.top_k"] == 4
    assert prov["moe.experts"].endswith("sft_model.py:8")
    assert got["fp8"] is False


def test_the_last_binding_of_model_is_the_one(tmp_path: Path) -> None:
    body = ("model = Qwen3MoE30BA3Config()\n"
            "model = Qwen3MoE30BA3Config(float8_cfg=float8_cfg)")
    _, got, _ = _intent(_job(tmp_path, MOE_FP8.format(body=body)))
    assert got["fp8"] is True


@pytest.mark.parametrize("body", [
    "import os\nif os.environ.get('FP8'):\n    model = Qwen3MoE30BA3Config(float8_cfg=float8_cfg)\n"
    "else:\n    model = Qwen3MoE30BA3Config()",
    "model = build()",
    "model_cfg = Qwen3MoE30BA3Config(float8_cfg=float8_cfg)",     # no `model`: xtuner asserts
])
def test_what_the_file_does_not_decide_is_unknown(tmp_path: Path, body: str) -> None:
    _, got, _ = _intent(_job(tmp_path, MOE_FP8.format(body=body)))
    assert isinstance(got["fp8"], Unknown)


def test_a_run_time_model_cfg_and_float8_flags(tmp_path: Path) -> None:
    run = _job(tmp_path, TINY, cfg="examples/v1/sft_model.py")
    run.write_text(LAUNCH.format(cfg="$MODEL_CFG", extra=""))
    _, got, _ = _intent(run)
    assert isinstance(got["fp8"], Unknown)
    run.write_text(LAUNCH.format(cfg="examples/v1/sft_model.py",
                                 extra=" --float8-config.scaling-granularity-gemm tilewise"))
    facts, got, _ = _intent(run)
    assert isinstance(got["fp8"], Unknown)


def test_a_registered_model_name(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text(LAUNCH.format(cfg="qwen3-moe-30BA3", extra=""))
    facts, got, _ = _intent(run)
    assert facts["config.xtuner.model_cfg_name"] == "qwen3-moe-30BA3"
    assert got["fp8"] is False


def test_no_config_and_no_model_cfg_stays_unknown(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("torchrun xtuner/v1/train/cli/sft.py --load-from Qwen/Qwen3-8B "
                   "--chat_template qwen3 --dataset d.jsonl\n")
    _, got, _ = _intent(run)
    assert isinstance(got["fp8"], Unknown)


def test_a_model_cfg_outside_the_job_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    import os

    outside = tmp_path / "outside.py"
    outside.write_text(MOE_FP8.format(body="model = Qwen3MoE30BA3Config(float8_cfg=float8_cfg)"))
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    run = job / "run.sh"
    run.write_text(LAUNCH.format(cfg="../outside.py", extra=""))
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert any("outside the job" in p.message for p in read.problems)
    os.mkfifo(job / "fifo.py")
    run.write_text(LAUNCH.format(cfg="fifo.py", extra=""))
    read = read_paths([str(run)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert any("not a regular file" in p.message for p in read.problems)
