"""Cosmos-RL's other launch forms (v0.4.4): the controller of a hand-launched multi-node run,
``./cosmos_rl/launcher/launch_controller.sh --port P --config X.toml`` (the replicas take the
config from it), and the Slurm dispatcher ``python tools/slurm/dispatch_job.py --config-path
X.toml ... script``: the TOML they name is read as ``cosmos-rl --config`` reads it; the
replica script alone names no config; a path out of the job is not opened."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "cosmos_rl"
BOTH = "configs/qwen3/qwen3-8b-p-fsdp1-tp4-fp8-r-tp4-pp1-fp8-grpo.toml"


def _run(tmp_path: Path, line: str) -> tuple[dict[str, Any], Any]:
    job = tmp_path / "job"
    shutil.copytree(FIX, job, dirs_exist_ok=True)
    (job / ".git").mkdir(exist_ok=True)
    (job / "launch.sh").write_text("#!/bin/bash\nset -e\n" + line + "\n")
    read = read_paths([str(job / "launch.sh")], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


@pytest.mark.parametrize("line", [
    f"./cosmos_rl/launcher/launch_controller.sh --port 8000 --config {BOTH}",
    f"./tools/launch_controller.sh --port 8080 --config ./{BOTH} --log ctl.log",
    "python tools/slurm/dispatch_job.py --ngpu-per-node 8 --n-policy-replicas 8 "
    f"--n-rollout-replicas 4 --config-path {BOTH} --repo-root-path /repo "
    "--slurm-partition batch --slurm-account acct cosmos_rl.tools.dataset.gsm8k_grpo",
])
def test_controller_and_dispatcher_read_the_toml(tmp_path: Path, line: str) -> None:
    intent, read = _run(tmp_path, line)
    assert "cosmos_rl" in {k for _, k in read.files}
    assert str(read.facts["config.cosmos_rl.base_config"]).endswith(BOTH)
    assert intent["fp8"][0] is True and intent["rollout.fp8"][0] is True


def test_a_replica_line_alone_names_no_config(tmp_path: Path) -> None:
    _, read = _run(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 ./tools/launch_replica.sh --type policy "
                             "--ngpus 2")
    assert "config.cosmos_rl.base_config" not in read.facts


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside.toml", "$CONFIG"])
def test_a_config_path_out_of_the_job_is_unknown(tmp_path: Path, target: str) -> None:
    (tmp_path / "outside.toml").write_text("[train.fp8]\nenable_fp8 = true\n")
    intent, read = _run(tmp_path, f"python tools/slurm/dispatch_job.py --config-path {target}")
    assert isinstance(read.facts["config.cosmos_rl.base_config"], Unknown)
    assert isinstance(intent["fp8"][0], Unknown)
