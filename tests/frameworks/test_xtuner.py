"""XTuner V1 (InternLM/xtuner ``xtuner/v1``, read at v1.0.0rc0, v1.0.1, b934f462): its Python
configs parsed, never imported (fixtures/configs/xtuner, files of b934f462), and ``torchrun
xtuner/v1/train/cli/sft.py --config cfg.py``. ``Float8Config`` TILEWISE is blockwise scaling
on xtuner's own AdaptiveGEMM kernels (backend Unknown, said why), TENSORWISE torch._scaled_mm.
Hostile: a decoy Float8Config no trainer takes, a Float8Config under an environment switch, a
config outside the job, BLOCKWISE (an assert stops the job), two scalings, no --config."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "xtuner"
CFG = "autotest/config/qwen3_fp8.py"
HEAD = ("from xtuner.v1.float8.config import Float8Config, ScalingGranularity\n"
        "from xtuner.v1.model.moe.qwen3 import Qwen3MoE30BA3Config\n"
        "from xtuner.v1.train import TrainerConfig\n")


def _read(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, line: str | None = None) -> Path:
    job = tmp_path / "job"
    shutil.copytree(FIX, job, dirs_exist_ok=True)
    (job / ".git").mkdir(exist_ok=True)
    if line is not None:
        (job / "launch.sh").write_text("#!/bin/bash\n" + line + "\n")
    return job / "launch.sh"


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "cfg.py"
    path.write_text(HEAD + body)
    return path


def test_autotest_launch_is_tilewise_fp8(tmp_path: Path) -> None:
    intent, read = _read(_job(tmp_path))
    assert intent["fp8"][0] is True
    assert intent["recipe"][0] == "blockwise"
    assert isinstance(intent["backend"][0], Unknown)
    assert "AdaptiveGEMM" in intent["backend"][0].reason
    assert intent["fp8"][1].endswith(CFG + ":20")            # float8_cfg = Float8Config(
    assert intent["compile"][0] is False and intent["ep"][0] == 8
    assert intent["stack"][0] == ["xtuner"]
    assert read.facts["config.xtuner.model_cfg"] == "Qwen3MoE30BA3Config"
    assert intent["num_gpus"][0] == 16                     # torchrun --nnodes 2 x 8


def test_config_alone_and_module_launch(tmp_path: Path) -> None:
    intent, _ = _read(FIX / CFG)
    assert intent["fp8"][0] is True
    intent, _ = _read(_job(tmp_path, f"python -m xtuner.v1.train.cli.sft --config {CFG}"))
    assert intent["fp8"][0] is True


def test_sub_config_float8(tmp_path: Path) -> None:
    intent, _ = _read(FIX / "ci/config/qwen3_5_moe_35BA3.py")
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"


def test_float8_under_an_environment_switch_is_unknown() -> None:
    intent, _ = _read(FIX / "examples/v1/config/sft_qwen3p5.py")
    assert isinstance(intent["fp8"][0], Unknown)
    assert "FP8" in intent["fp8"][0].reason


@pytest.mark.parametrize("gemm, grouped, fp8, recipe, backend", [
    ("TENSORWISE", None, True, "tensorwise", "scaled_mm"),
    (None, "TILEWISE", True, "blockwise", None),
    ('"tilewise"', '"tilewise"', True, "blockwise", None),        # pydantic takes the value
    ("BLOCKWISE", None, True, None, None),                         # Float8Handler asserts
    ("TENSORWISE", "TILEWISE", True, None, None),                  # two scalings
    (None, None, False, None, None),                               # enable_float8 False
])
def test_granularities(tmp_path: Path, gemm: str | None, grouped: str | None, fp8: bool,
                       recipe: str | None, backend: str | None) -> None:
    def arg(v: str | None) -> str:
        return "None" if v is None else v if v.startswith('"') else f"ScalingGranularity.{v}"
    intent, _ = _read(_config(tmp_path, (
        f"f8 = Float8Config(scaling_granularity_gemm={arg(gemm)}, "
        f"scaling_granularity_grouped_gemm={arg(grouped)})\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config(float8_cfg=f8))\n")))
    assert intent["fp8"][0] is fp8
    if fp8:
        got = intent["recipe"][0]
        assert got == recipe if recipe else isinstance(got, Unknown)
        got = intent["backend"][0]
        assert got == backend if backend else isinstance(got, Unknown)


def test_decoy_float8_no_trainer_takes_is_not_fp8(tmp_path: Path) -> None:
    intent, _ = _read(_config(tmp_path, (
        "decoy = Float8Config(scaling_granularity_gemm=ScalingGranularity.TILEWISE)\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config(ep_size=8))\n")))
    assert intent["fp8"][0] is False


def test_float8_without_a_trainer_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_config(tmp_path, (
        "f8 = Float8Config(scaling_granularity_gemm=ScalingGranularity.TILEWISE)\n"
        "model = Qwen3MoE30BA3Config(float8_cfg=f8)\n")))
    assert isinstance(intent["fp8"][0], Unknown)


def test_float8_set_after_the_model_config(tmp_path: Path) -> None:
    intent, _ = _read(_config(tmp_path, (
        "m = Qwen3MoE30BA3Config()\n"
        "m.float8_cfg = Float8Config(scaling_granularity_gemm=ScalingGranularity.TENSORWISE)\n"
        "trainer = TrainerConfig(model_cfg=m)\n")))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "tensorwise"


def test_float8_from_a_mapping_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_config(tmp_path, (
        "import json\nkw = json.load(open('x.json'))\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config(**kw))\n")))
    assert isinstance(intent["fp8"][0], Unknown)


def test_config_outside_the_job_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text((FIX / CFG).read_text())
    intent, read = _read(_job(tmp_path, f"torchrun xtuner/v1/train/cli/sft.py --config {outside}"))
    assert isinstance(intent["fp8"][0], Unknown)
    assert any(p.code == "outside_job" for p in read.problems)


def test_no_config_is_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, "torchrun xtuner/v1/train/cli/sft.py --load-from /m"))
    assert isinstance(intent["fp8"][0], Unknown)


def test_config_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = _config(tmp_path, (
        f"open({str(marker)!r}, 'w').write('x')\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config())\n"))
    intent, _ = _read(path)
    assert intent["fp8"][0] is False
    assert not marker.exists()


def test_resume_settings_are_stated(tmp_path: Path) -> None:
    _, read = _read(_config(tmp_path, (
        "from xtuner.v1.train import ResumeConfig, LoadCheckpointConfig\n"
        "trainer = TrainerConfig(model_cfg=Qwen3MoE30BA3Config(), auto_resume=True,\n"
        "    resume_cfg=ResumeConfig(auto_resume=True),\n"
        "    load_checkpoint_cfg=LoadCheckpointConfig(checkpoint_path='/ckpt'))\n")))
    assert read.facts["config.xtuner.auto_resume"] is True
    assert read.facts["config.xtuner.resume_cfg.auto_resume"] is True
    assert read.facts["config.xtuner.load_checkpoint_cfg.checkpoint_path"] == "/ckpt"


@pytest.mark.parametrize("env, fp8", [("FP8=1 ", True), ("FP8=0 ", False),
                                      ("", False)])   # unset: _get_bool_env's default "0"
def test_launch_environment_reaches_the_config(tmp_path: Path, env: str, fp8: bool) -> None:
    # examples/v1/config/sft_qwen3p5.py l.38: `if _get_bool_env("FP8"):` -- xtuner runs the
    # config in the training process, so the launch line's environment decides it
    intent, _ = _read(_job(tmp_path, (
        "export QWEN3_5_MOE_PATH=/m ALPACA_PATH=/d\n"
        f"{env}torchrun --nproc-per-node 8 xtuner/v1/train/cli/sft.py "
        "--config examples/v1/config/sft_qwen3p5.py")))
    assert intent["fp8"][0] is fp8


def test_exported_switch_reaches_the_config(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, (
        "export QWEN3_5_MOE_PATH=/m ALPACA_PATH=/d FP8=true\n"
        "torchrun xtuner/v1/train/cli/sft.py --config examples/v1/config/sft_qwen3p5.py")))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"
