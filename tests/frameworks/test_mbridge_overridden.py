"""Megatron-Bridge: ``model.fp8=e4m3`` on the launch line under a recipe whose mixed_precision has
no FP8 is FP8 *asked for and overridden* (the recipe's mixed_precision is copied onto the model
at start-up: FP8D-MBR-0001), not FP8 "not asked". The report said "FP8 asked: no" for
Megatron-Bridge's own nemotron_3 nano FSDP example (held-out set 4, 2026-11-27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.api import check
from preflight.facts import Facts
from preflight.jobs.read import read_paths

FIXTURE = (Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "megatron_bridge"
           / "slurm_pretrain_fsdp.sh")


def test_the_nemotron_example_asks_for_fp8_and_loses_it() -> None:
    read = read_paths([str(FIXTURE)])
    values, prov = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False
    assert "slurm_pretrain_fsdp.sh" in values["intent.fp8_source"]       # where it was asked
    assert values["intent.fp8_overridden_by"]                            # what reset it
    report = check([str(FIXTURE)], smoke=False, assume={"gpu": "B200"})
    assert "FP8D-MBR-0001" in {f.rule_id for f in report.findings}


@pytest.mark.parametrize(("overrides", "asked"), [
    ("model.fp8=e4m3 model.fp8_recipe=mxfp8", True),
    ("model.fp8=hybrid", True),
    ("model.fp8=null", False),
    ("model.tensor_model_parallel_size=2", False),
])
def test_only_an_fp8_format_on_the_model_is_asked(tmp_path: Path, overrides: str,
                                                 asked: bool) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\npython scripts/training/run_recipe.py --recipe "
                   f"llama3_8b_pretrain_config {overrides}\n")
    read = read_paths([str(run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert ("intent.fp8_source" in values) is asked, values
    assert values.get("intent.fp8") is not True       # reset by the recipe, or not asked
