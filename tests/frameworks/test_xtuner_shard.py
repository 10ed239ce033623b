"""XTuner V1's FSDP shard mesh (``intent.fsdp_shard_size``) and what it decides: the tile-wise
all-gather of xtuner PR 1948 (FP8D-XTUNER-0002). The mesh is (world // ep_size, ep_size) with
every layer sharded over its first dim, or ``hsdp_sharding_size`` (moe.py l.1122-1173 at
v1.0.1); the ep_size is the one of the model's and FSDPConfig's that is not 1 (trainer.py
l.1715-1722). Every XTuner V1 checkout reports version 0.2.0 (xtuner/version.py), the version
the rules ask for."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight import api
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "xtuner"
HEAD = ("from xtuner.v1.float8.config import Float8Config, ScalingGranularity\n"
        "from xtuner.v1.model.moe.qwen3 import Qwen3MoE30BA3Config\n"
        "from xtuner.v1.config import FSDPConfig\n"
        "from xtuner.v1.train import TrainerConfig\n"
        "f8 = Float8Config(scaling_granularity_gemm=ScalingGranularity.TILEWISE,\n"
        "                  scaling_granularity_grouped_gemm=ScalingGranularity.TILEWISE)\n")


def _intent(job: Path) -> dict[str, Any]:
    read = read_paths([str(job / "launch.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}


def _job(tmp_path: Path, body: str, launch: str) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    (job / "cfg.py").write_text(HEAD + body)
    (job / "launch.sh").write_text("#!/bin/bash\ntorchrun " + launch +
                                   " xtuner/v1/train/cli/sft.py --config cfg.py\n")
    return job


def test_autotest_job_shards_over_two_ranks(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(FIX, job)
    (job / ".git").mkdir()
    intent = _intent(job)                    # 2 nodes x 8, ep_size 8: a (2, 8) mesh
    assert intent["fsdp_shard_size"] == 2 and intent["ep"] == 8


@pytest.mark.parametrize("body, launch, size", [
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=8)\n"
     "t = TrainerConfig(model_cfg=m, fsdp_cfg=FSDPConfig(ep_size=8))\n", "--nproc-per-node 8", 1),
    # FSDPConfig's ep_size alone (the trainer copies it to the model, trainer.py l.1717-1719)
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8)\n"
     "t = TrainerConfig(model_cfg=m, fsdp_cfg=FSDPConfig(ep_size=8))\n", "--nproc-per-node 8", 1),
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=4)\n"
     "t = TrainerConfig(model_cfg=m)\n", "--nproc-per-node 8", 2),
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8)\n"
     "t = TrainerConfig(model_cfg=m)\n", "--nproc-per-node 1", 1),
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8)\n"
     "t = TrainerConfig(model_cfg=m, fsdp_cfg=FSDPConfig(hsdp_sharding_size=4))\n",
     "--nnodes 2 --nproc-per-node 8", 4),
])
def test_shard_size(tmp_path: Path, body: str, launch: str, size: int) -> None:
    intent = _intent(_job(tmp_path, body, launch))
    assert intent["fsdp_shard_size"] == size


@pytest.mark.parametrize("body, launch", [
    # an FSDPConfig from elsewhere, its ep_size not in the file
    ("from common import fsdp\nm = Qwen3MoE30BA3Config(float8_cfg=f8)\n"
     "t = TrainerConfig(model_cfg=m, fsdp_cfg=fsdp)\n", "--nproc-per-node 8"),
    ("import os\nm = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=int(os.environ['EP']))\n"
     "t = TrainerConfig(model_cfg=m)\n", "--nproc-per-node 8"),
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=8)\n"
     "t = TrainerConfig(model_cfg=m)\n", "--nproc-per-node $NGPU"),
    # a tensor-parallel mesh is not worked out
    ("m = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=8)\n"
     "t = TrainerConfig(model_cfg=m, fsdp_cfg=FSDPConfig(tp_size=2))\n", "--nproc-per-node 8"),
])
def test_shard_size_not_known(tmp_path: Path, body: str, launch: str) -> None:
    intent = _intent(_job(tmp_path, body, launch))
    assert isinstance(intent["fsdp_shard_size"], Unknown)


@pytest.mark.parametrize("launch, fires", [("--nproc-per-node 8", True),
                                           ("--nnodes 2 --nproc-per-node 8", False)])
def test_tilewise_ep_equal_to_world_size_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               launch: str, fires: bool) -> None:
    job = _job(tmp_path, "m = Qwen3MoE30BA3Config(float8_cfg=f8, ep_size=8)\n"
                         "t = TrainerConfig(model_cfg=m)\n", launch)
    monkeypatch.chdir(job)
    report = api.check(["launch.sh"], assume={"gpu": "H100", "pkg.xtuner": "0.2.0",
                                              "pkg.torch": "2.8.0"})
    hits = [f for f in report.findings if f.rule_id == "FP8D-XTUNER-0002"]
    assert bool(hits) is fires
    if fires:
        assert str(hits[0].location).endswith("cfg.py:7")     # ep_size=8 of the model config
