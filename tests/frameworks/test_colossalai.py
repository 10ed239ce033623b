"""ColossalAI read from the Python script that builds its Booster plugin (never imported),
started by ``colossalai run``: holdout14's DeepSeek-MoE benchmark (``--use_fp8`` through argparse
into ``MoeHybridParallelPlugin(use_fp8=args.use_fp8)``, unread before), literal and environment
values, the plugins without FP8, and hostile spellings."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout14-colossalai-deepseek-moe-benchmark-use-fp8-a800" / "files")
A800 = {"gpu": "A800", "gpu.count": "8", "pkg.torch": "2.5.1+cu124", "pkg.colossalai": "0.5.0",
        "cuda.torch_build": "12.4"}
H100 = {**A800, "gpu": "H100"}
SCRIPT = """\
import argparse
import os

import colossalai
from colossalai.booster import Booster
from colossalai.booster.plugin import {plugin}

parser = argparse.ArgumentParser()
parser.add_argument("--use_fp8", action="store_true", default=False)
parser.add_argument("--tp", type=int, default=1)
args = parser.parse_args()
colossalai.launch_from_torch()
plugin = {plugin}({kwargs})
booster = Booster(plugin=plugin)
"""


def _job(tmp_path: Path, launch: str, plugin: str = "HybridParallelPlugin",
         kwargs: str = "tp_size=args.tp, pp_size=1, use_fp8=args.use_fp8") -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "train.py").write_text(SCRIPT.format(plugin=plugin, kwargs=kwargs))
    run = tmp_path / "run.sh"
    run.write_text(f"#!/bin/bash\n{launch}\n")
    return run


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts


def _fired(path: Path, assume: dict[str, str]) -> set[str]:
    report = preflight.check([str(path)], smoke=False, assume=assume)
    return {f.rule_id for f in report.findings}


def _holdout(tmp_path: Path) -> Path:
    shutil.copytree(JOB, tmp_path / "job")
    (tmp_path / "job" / ".git").mkdir()
    return tmp_path / "job" / "run.sh"


def test_holdout14_use_fp8_flag_reaches_the_moe_plugin(tmp_path: Path) -> None:
    got, facts = _read(_holdout(tmp_path))
    assert facts["config.colossalai.plugin"] == "MoeHybridParallelPlugin"
    assert facts["config.colossalai.use_fp8"] is True
    assert facts["config.colossalai.fp8_communication"] is False
    assert got["fp8"][0] is True and got["fp8"][1].endswith("benchmark.py:173")
    assert (got["backend"][0], got["recipe"][0], got["format"][0]) == \
        ("scaled_mm", "tensorwise", "hybrid")
    assert (got["ep"][0], got["tp"][0], got["precision"][0]) == (8, 1, "bf16")


def test_holdout14_on_a800_fires_no_fp8_tensor_cores(tmp_path: Path) -> None:
    fired = _fired(_holdout(tmp_path), A800)
    assert "FP8D-HW-0001" in fired
    assert not fired & {"FP8D-TAO-0004", "FP8D-ACC-0019", "FP8D-CFG-NO-JOB"}


def test_without_the_flag_the_plugin_trains_without_fp8(tmp_path: Path) -> None:
    got, _ = _read(_job(tmp_path, "colossalai run --nproc_per_node 8 train.py --tp 2"))
    assert got["fp8"][0] is False and got["fp8"][1].endswith("train.py:13")
    assert got["tp"][0] == 2
    assert "FP8D-HW-0001" not in _fired(tmp_path / "run.sh", A800)


@pytest.mark.parametrize("launch", [
    "colossalai run --nproc_per_node 8 train.py --use_fp8",
    "colossalai run --hostfile ./hostfile --include node1,node2 --nproc_per_node 8 "
    "--master_port 29501 train.py --use_fp8",
    "colossalai run --num_nodes 2 --hostfile hosts --extra_launch_args standalone=1 \\\n"
    "    --nproc_per_node=4 train.py --tp 1 --use_fp8",
    "colossalai run -H host1,host2 --nproc_per_node 8 --ssh-port 2222 ./train.py --use_fp8",
])
def test_launcher_flags_before_the_script(tmp_path: Path, launch: str) -> None:
    got, _ = _read(_job(tmp_path, launch))
    assert got["fp8"][0] is True and got["fp8"][1].endswith("train.py:13")
    assert "FP8D-HW-0001" in _fired(tmp_path / "run.sh", A800)
    assert "FP8D-HW-0001" not in _fired(tmp_path / "run.sh", H100)


@pytest.mark.parametrize(("plugin", "kwargs", "fp8"), [
    ("LowLevelZeroPlugin", "stage=2, precision='bf16'", False),      # default use_fp8=False
    ("GeminiPlugin", "precision='bf16', use_fp8=True", True),
    ("LowLevelZeroPlugin", "stage=1, use_fp8=1", True),                 # `if use_fp8:`
    ("TorchDDPPlugin", "fp8_communication=True", False),                # FP8 collectives only
])
def test_literal_values_and_plugins(tmp_path: Path, plugin: str, kwargs: str, fp8: bool) -> None:
    got, facts = _read(_job(tmp_path, "colossalai run --nproc_per_node 8 train.py", plugin,
                            kwargs))
    assert facts["config.colossalai.plugin"] == plugin
    assert got["fp8"][0] is fp8
    if fp8:
        assert got["backend"][0] == "scaled_mm"


@pytest.mark.parametrize("kwargs", [
    "use_fp8='yes'",                                   # not a value the text decides
    "**dict(use_fp8=os.environ['FP8'] == '1')",        # a mapping the text builds
])
def test_values_the_text_does_not_decide_are_unknown(tmp_path: Path, kwargs: str) -> None:
    got, _ = _read(_job(tmp_path, "colossalai run --nproc_per_node 8 train.py",
                        "HybridParallelPlugin", f"tp_size=1, pp_size=1, {kwargs}"))
    assert isinstance(got["fp8"][0], Unknown)
    assert "FP8D-HW-0001" not in _fired(tmp_path / "run.sh", A800)


@pytest.mark.parametrize(("env", "fp8"), [("USE_FP8=1 ", True), ("USE_FP8=0 ", False),
                                          ("", False)])     # (unset where the launch runs it)
def test_environment_set_on_the_launch_line(tmp_path: Path, env: str, fp8: bool) -> None:
    got, _ = _read(_job(tmp_path, f"{env}colossalai run --nproc_per_node 8 train.py",
                        "HybridParallelPlugin",
                        "tp_size=1, pp_size=1, use_fp8=os.environ.get('USE_FP8') == '1'"))
    assert got["fp8"][0] is fp8


def test_use_fp8_on_a_plugin_without_it_is_unknown(tmp_path: Path) -> None:
    got, _ = _read(_job(tmp_path, "colossalai run --nproc_per_node 8 train.py",
                        "TorchFSDPPlugin", "use_fp8=True"))
    assert isinstance(got["fp8"][0], Unknown)


def test_a_message_or_a_script_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    run = _job(tmp_path, 'echo "colossalai run --nproc_per_node 8 train.py --use_fp8"\n'
                         "colossalai run --nproc_per_node 8 train.py")
    got, _ = _read(run)
    assert got["fp8"][0] is False
    outside = tmp_path / "inner"
    outside.mkdir()
    run = _job(outside, "colossalai run --nproc_per_node 8 ../../elsewhere/train.py --use_fp8")
    (outside / "train.py").unlink()
    got, facts = _read(run)
    assert not any(k.startswith("config.colossalai.") for k in facts)
    assert got["fp8"][0] is not True


@pytest.mark.parametrize(("assume", "fires"), [
    (H100, True),                                            # torch 2.5.1: _scaled_mm(...)[0]
    ({**H100, "pkg.torch": "2.4.1+cu124"}, False),           # (out, amax): [0] is the output
    (A800, False),                                           # FP8D-HW-0001 says it first
])
def test_scaled_mm_return_change_rule(tmp_path: Path, assume: dict[str, str], fires: bool) -> None:
    fired = _fired(_holdout(tmp_path), assume)
    assert ("FP8D-COLOSSAL-0001" in fired) is fires
    assert ("FP8D-HW-0001" in fired) is (assume["gpu"] == "A800")
