"""verl ``--config-name`` after a ``cd`` out of the job (holdout22, swiss-ai/verl fork
eb33d557 experiments/base/run_grpo.sh): the script changes to its clone on the cluster
(``/capstor/.../verl``, never opened) and runs ``python -m verl.trainer.main_ppo
--config-name=grpo_math_base``; the job is that fork's checkout and holds
``verl/trainer/config/grpo_math_base.yaml``. That copy (and no ``config/`` folder elsewhere)
is read, with the assumption stated in a
warning naming the launch line; without a copy in the job nothing is read and nothing outside
is opened (FP8D-CFG-REFERENCE, as before)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_RECORDING: list[list[str]] = []
_BASE = ("defaults:\n  - ppo_trainer\n  - _self_\n"
         "actor_rollout_ref:\n  actor:\n    strategy: fsdp2\n    fsdp_config:\n"
         "      model_dtype: bf16\n  rollout:\n    name: sglang\n    dtype: bfloat16\n")


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_verl_copy_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_verl_copy_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A job folder (a clone: its own .git) beside an outside clone holding a decoy config."""
    outside = tmp_path / "cluster" / "verl" / "verl" / "trainer" / "config"
    outside.mkdir(parents=True)
    (outside / "grpo_math_base.yaml").write_text(
        "actor_rollout_ref:\n  rollout:\n    name: vllm\n    quantization: fp8\n")
    job = tmp_path / "job"
    (job / ".git").mkdir(parents=True)
    (job / "experiments" / "base").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(world: Path, cd: str, name: str = "grpo_math_base", *, copy: str | None = None,
         ) -> tuple[dict[str, Any], Any, str]:
    job = world / "job"
    if copy is not None:
        (job / copy).parent.mkdir(parents=True, exist_ok=True)
        (job / copy).write_text(_BASE)
    script = job / "experiments" / "base" / "run_grpo.sh"
    script.write_text(
        "#!/bin/bash\nset -xeuo pipefail\n"
        f"WORKING_DIR={cd}\ncd \"${{WORKING_DIR}}\"\n"
        "pip install --no-deps -e .\n"
        "HYDRA_FULL_ERROR=1 python -m verl.trainer.main_ppo \\\n"
        f"\t\t--config-name=\"{name}\" \\\n"
        "\t\tactor_rollout_ref.model.path=org/model \\\n\t\t\"$@\"\n")
    read = read_paths([str(script)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read, str(script)


def test_the_jobs_own_copy_is_read_with_the_assumption_stated(world: Path,
                                                              opened: list[str]) -> None:
    copy = "verl/trainer/config/grpo_math_base.yaml"
    outside = str(world / "cluster" / "verl")
    intent, read, script = _run(world, outside, copy=copy)
    assert read.facts["config.verl.base_config"] == str(world / "job" / copy)
    assert intent["fp8"] is False and intent["distributed"] == "fsdp2"
    assert intent["rollout.engine"] == "sglang" and intent["rollout.fp8"] is False
    warned = [p for p in read.problems if p.code == "reference"]
    assert [(p.path, p.line, p.level) for p in warned] == [(script, 7, "warning")]
    assert outside in warned[0].message and copy in warned[0].message
    assert not [p for p in opened if p.startswith(str(world / "cluster"))]


def test_an_unknown_cd_target_also_falls_back(world: Path) -> None:
    intent, read, _ = _run(world, "$SCRATCH/verl", copy="verl/trainer/config/grpo_math_base.yaml")
    assert intent["rollout.engine"] == "sglang"
    assert [p.level for p in read.problems if p.code == "reference"] == ["warning"]


def test_without_a_copy_in_the_job_nothing_is_read_or_opened(world: Path,
                                                             opened: list[str]) -> None:
    intent, read, script = _run(world, str(world / "cluster" / "verl"))
    assert isinstance(read.facts["config.verl.base_config"], Unknown)
    assert isinstance(intent["rollout.fp8"], Unknown)
    assert (script, 7) in [(p.path, p.line) for p in read.problems]
    assert not [p for p in read.problems if "was read instead" in p.message]
    assert not [p for p in opened if p.startswith(str(world / "cluster"))]


def test_a_config_folder_elsewhere_in_the_job_is_not_taken(world: Path) -> None:
    # Hydra looks in the installed verl's verl/trainer/config, never in a job's config/
    intent, read, _ = _run(world, str(world / "cluster" / "verl"),
                           copy="config/grpo_math_base.yaml")
    assert isinstance(read.facts["config.verl.base_config"], Unknown)
    assert not [p for p in read.problems if "was read instead" in p.message]


def test_a_cd_into_the_job_reads_its_config_without_a_warning(world: Path) -> None:
    copy = "verl/trainer/config/grpo_math_base.yaml"
    intent, read, _ = _run(world, str(world / "job"), copy=copy)
    assert read.facts["config.verl.base_config"] == str(world / "job" / copy)
    assert intent["rollout.engine"] == "sglang"
    assert not [p for p in read.problems if p.code == "reference"]


@pytest.mark.parametrize("name", ["../../../cluster/verl/verl/trainer/config/grpo_math_base",
                                  "/etc/passwd", "../../../../../../proc/self/environ"])
def test_a_name_that_leaves_the_job_has_no_fallback(world: Path, name: str,
                                                    opened: list[str]) -> None:
    intent, read, _ = _run(world, str(world / "cluster" / "verl"), name,
                           copy="verl/trainer/config/grpo_math_base.yaml")
    assert isinstance(read.facts["config.verl.base_config"], Unknown)
    assert not [p for p in read.problems if "was read instead" in p.message]
    assert not [p for p in opened if p.startswith((str(world / "cluster"), "/etc/passwd",
                                                   "/proc/self/environ"))]
    assert os.path.isdir(world / "job")
