"""Jobs whose launch script finds its config from its own folder (issue 22, holdout13): a
faithful reduction of XTuner's examples/v1/scripts/run_sft.sh (InternLM/xtuner @
b934f462095c1e750229de35367c50ae36caa786, l.12-14 and 38-46) run by a wrapper as eval14's job
does, and hostile variants (a folder out of the job, a symlinked script folder). Each failed
before reading/shelldir.py: the config was "computed at run time", never read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

RUN_SFT = """#!/usr/bin/env bash
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/%s" && pwd)"
CONFIG_PATH="${1:-${REPO_ROOT}/examples/v1/config/sft.py}"
export WORK_DIR="${2:-${WORK_DIR:-work_dirs/qwen3p5_sft}}"
torchrun \\
  --nproc-per-node="${NPROC_PER_NODE:-8}" \\
  -m xtuner.v1.train.cli.sft \\
  --config "${CONFIG_PATH}" \\
  2>&1 | tee -a "${WORK_DIR}/node_0.txt"
"""
CONFIG = """import os
from xtuner.v1.float8.config import Float8Config, ScalingGranularity
from xtuner.v1.model import Qwen3_5_VLMoE35BA3Config
from xtuner.v1.train import TrainerConfig

model_cfg = Qwen3_5_VLMoE35BA3Config()
if os.environ.get("FP8", "0").lower() in ("1", "true"):
    model_cfg.text_config.float8_cfg = Float8Config(
        scaling_granularity_gemm=ScalingGranularity.TILEWISE,
        scaling_granularity_grouped_gemm=ScalingGranularity.TILEWISE,
    )
trainer = TrainerConfig(model_cfg=model_cfg)
"""


def _job(root: Path, fp8: str, up: str = "../../..", scripts: str = "examples/v1/scripts"
         ) -> Path:
    (root / scripts).mkdir(parents=True, exist_ok=True)
    (root / "examples" / "v1" / "config").mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / scripts / "run_sft.sh").write_text(RUN_SFT % up)
    (root / "examples" / "v1" / "config" / "sft.py").write_text(CONFIG)
    run = root / "run.sh"
    run.write_text(f"#!/bin/bash\n{fp8}bash examples/v1/scripts/run_sft.sh\n")
    return run


def _intent(run: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(run)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


def test_run_sft_reads_the_config_under_its_repository_root(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path / "job", "FP8=1 "))
    assert read.facts["config.xtuner.config"] == str(
        tmp_path / "job" / "examples" / "v1" / "config" / "sft.py")
    assert intent["fp8"] is True and intent["recipe"] == "blockwise"


def test_run_sft_without_the_switch_is_bf16(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path / "job", ""))
    assert intent["fp8"] is False


def test_a_repository_root_above_the_job_is_unknown_and_not_read(tmp_path: Path) -> None:
    # `cd "${SCRIPT_DIR}/../../../.."` leaves the job: the config there (an FP8 one) is not read
    root = tmp_path / "job"
    run = _job(root, "FP8=1 ", up="../../../..")
    (tmp_path / "examples" / "v1" / "config").mkdir(parents=True)
    (tmp_path / "examples" / "v1" / "config" / "sft.py").write_text(CONFIG)
    intent, read = _intent(run)
    base = read.facts["config.xtuner.base_config"]
    assert isinstance(base, Unknown) and "outside the job" in base.reason
    assert "config.xtuner.config" not in read.facts
    assert intent["fp8"] is not True and intent["fp8"] is not False


def test_a_symlinked_script_folder_logical_and_physical(tmp_path: Path) -> None:
    # examples/v1/scripts is a link to job/other/a/b/c: `pwd` keeps the link's path (REPO_ROOT
    # is the job's top: the FP8 config), `pwd -P` resolves it (REPO_ROOT is job/other, whose
    # config has no FP8), as bash does
    root = tmp_path / "job"
    real = root / "other" / "a" / "b" / "c"
    real.mkdir(parents=True)
    (root / "examples" / "v1").mkdir(parents=True)
    (root / "examples" / "v1" / "scripts").symlink_to(real, target_is_directory=True)
    run = _job(root, "FP8=1 ")
    (root / "other" / "examples" / "v1" / "config").mkdir(parents=True)
    (root / "other" / "examples" / "v1" / "config" / "sft.py").write_text(
        CONFIG.replace('"FP8"', '"NO_FP8_HERE"'))
    intent, read = _intent(run)
    assert read.facts["config.xtuner.config"] == str(root / "examples/v1/config/sft.py")
    assert intent["fp8"] is True
    script = real / "run_sft.sh"
    script.write_text(script.read_text().replace('&& pwd)"\nREPO', '&& pwd -P)"\nREPO'))
    intent, read = _intent(run)
    assert read.facts["config.xtuner.config"] == str(root / "other/examples/v1/config/sft.py")
    assert intent["fp8"] is False


def test_a_script_folder_linked_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "job"
    elsewhere = tmp_path / "elsewhere" / "a" / "b" / "c"
    elsewhere.mkdir(parents=True)
    (root / "examples" / "v1").mkdir(parents=True)
    (root / "examples" / "v1" / "scripts").symlink_to(elsewhere, target_is_directory=True)
    intent, read = _intent(_job(root, "FP8=1 "))
    assert "config.xtuner.config" not in read.facts and intent.get("fp8") is not True


def test_a_sourced_launch_takes_0_as_the_sourcing_script(tmp_path: Path) -> None:
    # bash: in a sourced file, ${BASH_SOURCE[0]} is that file and $0 the script bash runs
    root = tmp_path / "job"
    (root / "run").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / ".git").mkdir()
    fp8, bf16 = CONFIG, CONFIG.replace('"FP8"', '"NO_FP8_HERE"')
    for whose, here, there in (("$0", "run", "lib"), ('${BASH_SOURCE[0]}', "lib", "run")):
        (root / here / "sft.py").write_text(fp8)
        (root / there / "sft.py").write_text(bf16)
        (root / "lib" / "train.sh").write_text(
            '#!/bin/bash\ntorchrun -m xtuner.v1.train.cli.sft --config '
            f'"$(cd "$(dirname "{whose}")" && pwd)/sft.py"\n')
        (root / "run" / "go.sh").write_text("#!/bin/bash\nexport FP8=1\nsource ../lib/train.sh\n")
        intent, read = _intent(root / "run" / "go.sh")
        assert read.facts["config.xtuner.config"] == str(root / here / "sft.py"), whose
        assert intent["fp8"] is True
