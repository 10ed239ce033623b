"""Megatron-Bridge sets a YAML's (or a key=value override's) value on its dataclasses unchanged
(omegaconf_utils.process_config_with_overrides / _apply_overrides @ v0.6.0), so a quoted
``'false'`` on a boolean field is a non-empty string and tests true: decided, not Unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths


@pytest.mark.parametrize(("value", "precision"), [("'false'", "fp16"), ("false", "bf16"),
                                                  ("'true'", "fp16"), ("true", "fp16")])
def test_a_quoted_false_on_a_bool_field_is_on(tmp_path: Path, value: str, precision: str) -> None:
    (tmp_path / "cfg.yaml").write_text(f"mixed_precision:\n  fp16: {value}\n")
    run = tmp_path / "run.sh"
    run.write_text("python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
                   "--config-file cfg.yaml\n")
    read = read_paths([str(run)])
    assert not isinstance(read.facts.get("config.megatron_bridge.mixed_precision.fp16"), Unknown)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.precision"] == precision
