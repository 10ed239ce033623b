"""A script whose launches differ in FP8 (holdout21 Megatron MoE model zoo: two BF16 runs of
``sbatch_benchmarking.sh``, then ``PR=fp8``) asks for FP8, with the FP8 launch's settings (the
lead's policy, session 43: reading/launchpick.py ``_fp8_runs``, jobs/fp8asks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.intent import derive_intent
from preflight.jobs.read import read_paths

TRAIN = """#!/bin/bash
PR=${PR:-bf16}
ARGS="--bf16 --seq-length ${SEQ:-4096}"
if [ "$PR" = fp8 ]; then ARGS="$ARGS --fp8-format e4m3 --fp8-recipe ${RECIPE:-blockwise}"; fi
torchrun pretrain_gpt.py $ARGS
"""


class _Facts(dict):  # type: ignore[type-arg]
    provenance: dict[str, str]


def _job(tmp_path: Path, runs: str) -> tuple[dict[str, object], object, str]:
    (tmp_path / "train.sh").write_text(TRAIN)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + runs)
    read = read_paths([str(tmp_path / "run.sh")])
    facts = _Facts(read.facts)
    facts.provenance = dict(read.provenance)
    values, prov = derive_intent(facts)
    return dict(read.facts), values["intent.fp8"], prov["intent.fp8"]


def test_one_fp8_launch_among_bf16_ones_is_the_job(tmp_path: Path) -> None:
    facts, fp8, prov = _job(tmp_path, "SEQ=2048 bash ./train.sh\nbash ./train.sh\n"
                                      "PR=fp8 bash ./train.sh\n")
    assert fp8 is True
    assert "1 of 3" in prov and "run.sh:4" in prov
    assert facts["config.megatron.fp8_recipe"] == "blockwise"
    assert facts["config.megatron.seq_length"] == 4096      # the FP8 launch's, not Unknown


def test_fp8_launches_that_differ_among_themselves_leave_that_setting_unknown(
        tmp_path: Path) -> None:
    facts, fp8, prov = _job(tmp_path, "bash ./train.sh\nPR=fp8 bash ./train.sh\n"
                                      "PR=fp8 RECIPE=tensorwise bash ./train.sh\n")
    assert fp8 is True and "2 of 3" in prov
    assert isinstance(facts["config.megatron.fp8_recipe"], Unknown)
    assert facts["config.megatron.fp8_format"] == "e4m3"


@pytest.mark.parametrize("runs", [
    "bash ./train.sh\nSEQ=1 bash ./train.sh\n",                      # all BF16
])
def test_quiet_when_no_launch_asks(tmp_path: Path, runs: str) -> None:
    facts, fp8, _ = _job(tmp_path, runs)
    assert fp8 is False
    assert isinstance(facts["config.megatron.seq_length"], Unknown)   # as before: they differ


def test_every_launch_fp8_reads_as_before(tmp_path: Path) -> None:
    facts, fp8, prov = _job(tmp_path, "PR=fp8 bash ./train.sh\nPR=fp8 SEQ=1 bash ./train.sh\n")
    assert fp8 is True and "of 2 launches" not in prov
    assert isinstance(facts["config.megatron.seq_length"], Unknown)


def test_a_plain_run_is_not_given_another_runs_environment(tmp_path: Path) -> None:
    facts, fp8, prov = _job(tmp_path, "SEQ=2048 bash ./train.sh\nbash ./train.sh\n"
                                      "PR=fp8 RECIPE=mxfp8 bash ./train.sh\n")
    assert fp8 is True and "1 of 3" in prov
    assert facts["config.megatron.fp8_recipe"] == "mxfp8"


def test_a_launch_whose_fp8_is_not_known_keeps_it_unknown(tmp_path: Path) -> None:
    _, fp8, _ = _job(tmp_path, "bash ./train.sh\nPR=$MODE bash ./train.sh\n")
    assert isinstance(fp8, Unknown)


def test_an_unknown_launch_beside_an_fp8_one_asks(tmp_path: Path) -> None:
    facts, fp8, _ = _job(tmp_path, "PR=$MODE bash ./train.sh\nPR=fp8 bash ./train.sh\n")
    assert fp8 is True and facts["config.megatron.fp8_format"] == "e4m3"
