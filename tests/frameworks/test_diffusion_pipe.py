"""tdrussell diffusion-pipe (8f83dbf2): ``deepspeed --num_gpus=N train.py --deepspeed --config
X.toml`` links the TOML; ``transformer_dtype = 'float8'`` (and Wan's ``text_encoder_fp8``) is FP8
weight storage, never FP8 training; the repository's Qwen-Image 24 GB example
(fixtures/configs/diffusion_pipe, tdrussell/diffusion-pipe@8f83dbf2
examples/qwen_image_24gb_vram.toml) stays quiet; a float8 autocast dtype is Unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.api import check
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "configs" / "diffusion_pipe" / "qwen_image_24gb_vram.toml"
LAUNCH = ('NCCL_P2P_DISABLE="1" deepspeed --num_gpus={gpus} train.py --deepspeed '
          "--config examples/job.toml\n")
TOML = """output_dir = '/out'
pipeline_stages = 1
micro_batch_size_per_gpu = 1
[model]
type = 'wan'
ckpt_path = '/models/wan'
dtype = '{dtype}'
{model}
[adapter]
type = 'lora'
dtype = 'bfloat16'
"""


def _job(tmp_path: Path, toml: str, gpus: int = 1, launch: str = LAUNCH) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "examples").mkdir(exist_ok=True)
    (tmp_path / "examples" / "job.toml").write_text(toml)
    run = tmp_path / "run.sh"
    run.write_text(launch.format(gpus=gpus))
    return run


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_the_repositorys_example_is_fp8_storage_not_training(tmp_path: Path) -> None:
    run = _job(tmp_path, EXAMPLE.read_text())
    intent, read = _intent(run)
    assert read.facts["config.kinds"] == ["diffusion_pipe"]
    assert intent["fp8"][0] is False
    assert intent["fp8_weight_storage"][0] is True
    assert intent["fp8_weight_storage"][1].endswith("job.toml:38")   # transformer_dtype
    assert intent["precision"][0] == "bf16"
    assert intent["num_gpus"][0] == 1
    assert "deepspeed" in intent["stack"][0]
    report = check([str(run)], assume={"gpu": "RTX 4090", "gpu.count": "1",
                                       "pkg.torch": "2.8.0+cu128", "pkg.deepspeed": "0.17.5"})
    assert not [f for f in report.findings if f.severity.name in ("ERROR", "WARNING")
                and not f.rule_id.startswith(("FP8D-ENV", "FP8D-CFG", "FP8D-PROBE"))]


@pytest.mark.parametrize(("dtype", "model", "storage"), [
    ("bfloat16", "transformer_dtype = 'float8_e5m2'", True),
    ("bfloat16", "text_encoder_fp8 = true", True),
    ("bfloat16", "transformer_dtype = 'bfloat16'", False),
    ("float16", "", False),
])
def test_storage_by_dtype(tmp_path: Path, dtype: str, model: str, storage: bool) -> None:
    intent, _ = _intent(_job(tmp_path, TOML.format(dtype=dtype, model=model)))
    assert intent["fp8"][0] is False
    assert intent["fp8_weight_storage"][0] is storage


def test_a_float8_autocast_dtype_is_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, TOML.format(dtype="float8", model="")))
    assert isinstance(intent["fp8"][0], Unknown)


def test_a_config_set_at_launch_is_not_read(tmp_path: Path) -> None:
    run = _job(tmp_path, TOML.format(dtype="bfloat16", model=""),
               launch="deepspeed --num_gpus={gpus} train.py --deepspeed --config $CFG.toml\n")
    _, read = _intent(run)
    assert not any(n.startswith("config.diffusion_pipe.model.") for n in read.facts)


def test_another_programs_train_py_is_not_diffusion_pipe(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import argparse\nimport toml\nprint('mine')\n")
    run = _job(tmp_path, "lr = 1\n")
    _, read = _intent(run)
    assert "diffusion_pipe" not in read.facts.get("config.kinds", [])
