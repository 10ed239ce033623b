"""ostris ai-toolkit (27a03a91): ``python run.py config/<job>.yaml`` links the job YAML; quanto
``qfloat8`` / torchao ``float8`` quantization and float8 model dtypes are FP8 weight storage
(intent.fp8_weight_storage), never FP8 training (intent.fp8 false); the repository's own Qwen-Image
24 GB example (fixtures/configs/ai_toolkit, ostris/ai-toolkit@27a03a91
config/examples/train_lora_qwen_image_24gb.yaml) stays quiet; hostile values are Unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.api import check
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "configs" / "ai_toolkit" / "train_lora_qwen_image_24gb.yaml"
JOB = """job: extension
config:
  name: x
  process:
    - type: sd_trainer
      train:
        dtype: {dtype}
        gradient_checkpointing: true
      model:
        name_or_path: black-forest-labs/FLUX.1-dev
{model}
"""


def _job(tmp_path: Path, yaml: str, launch: str = "python run.py config/job.yaml\n") -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "job.yaml").write_text(yaml)
    run = tmp_path / "run.sh"
    run.write_text(launch)
    return run


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_the_repositorys_example_is_fp8_storage_not_training(tmp_path: Path) -> None:
    run = _job(tmp_path, EXAMPLE.read_text())
    intent, read = _intent(run)
    assert read.facts["config.kinds"] == ["ai_toolkit"]
    assert intent["fp8"][0] is False
    assert intent["fp8_weight_storage"][0] is True          # qtype_te qfloat8
    assert intent["fp8_weight_storage"][1].endswith("job.yaml:68")
    assert intent["precision"][0] == "bf16"
    report = check([str(run)], assume={"gpu": "RTX 4090", "gpu.count": "1",
                                       "pkg.torch": "2.9.0+cu128", "pkg.torchao": "0.14.0"})
    assert not [f for f in report.findings if f.severity.name in ("ERROR", "WARNING")
                and not f.rule_id.startswith(("FP8D-ENV", "FP8D-CFG", "FP8D-PROBE"))]


@pytest.mark.parametrize(("model", "storage"), [
    ("        quantize: true", True),                                   # default qtype qfloat8
    ("        quantize: true\n        qtype: float8\n        quantize_te: false", True),
    ("        quantize: true\n        qtype: uint4\n        quantize_te: false", False),
    ("        quantize: true\n        qtype: qint8\n        qtype_te: qint8", False),
    ("        dtype: e4m3fn", True),
    ("        quantize: false", False),
    ("", False),
])
def test_storage_by_qtype(tmp_path: Path, model: str, storage: bool) -> None:
    intent, _ = _intent(_job(tmp_path, JOB.format(dtype="bf16", model=model)))
    assert intent["fp8"][0] is False
    assert intent["fp8_weight_storage"][0] is storage


@pytest.mark.parametrize(("dtype", "model"), [
    ("float8", ""),                                                 # training dtype float8
    ("bf16", "        quantize: true\n        qtype: qfloat9000\n        quantize_te: false"),
])
def test_hostile_values_are_unknown(tmp_path: Path, dtype: str, model: str) -> None:
    intent, _ = _intent(_job(tmp_path, JOB.format(dtype=dtype, model=model)))
    assert (isinstance(intent["fp8"][0], Unknown) or
            isinstance(intent["fp8_weight_storage"][0], Unknown))


def test_another_programs_run_py_is_not_ai_toolkit(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text("import argparse\nprint('mine')\n")
    run = _job(tmp_path, "lr: 1\n", launch="python run.py config/job.yaml\n")
    _, read = _intent(run)
    assert "ai_toolkit" not in read.facts.get("config.kinds", [])


def test_a_huge_process_list_is_bounded(tmp_path: Path) -> None:
    procs = "".join("    - type: sd_trainer\n      train:\n        dtype: bf16\n"
                    for _ in range(5000))
    intent, _ = _intent(_job(tmp_path, "job: extension\nconfig:\n  process:\n" + procs))
    assert intent["fp8"][0] is False


@pytest.mark.parametrize("data", [{"job": {"name": "x"}}, {"job": ["extension"]},
                                  {"job": "extension", "config": {"process": "x"}}, [1], "job"])
def test_score_of_hostile_shapes_is_zero(data: Any) -> None:
    from preflight.frameworks.ai_toolkit import score
    assert score(data) == 0
