"""ROLL's ``strategy_config.fp8`` given a value that is not None but false (redteam6, issue 21).

mcore_adapter sets every non-None field on Megatron-Core's TransformerConfig as it is
(alibaba/ROLL v0.3.0 mcore_adapter/src/mcore_adapter/models/model_config.py:146-156), and
Megatron-Core trains in FP8 only when ``config.fp8`` is true (``need_fp8_context = config.fp8``,
megatron/core/fp8_utils.py:505-508 @ core_v0.15.0) and only for the formats ``e4m3`` / ``hybrid``
as written (fp8_utils.py:441-446 raises on any other). ``fp8: false``, ``''``, ``0``, ``no``,
``[]`` were FP8 "yes" (format Unknown) and stated ``config.megatron.fp8_format`` to the Megatron
rules; ``E4M3`` was the format e4m3, which Megatron-Core refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

HEAD = ("exp_name: x\npretrain: Qwen/Qwen2.5-7B\nrollout_batch_size: 64\n"
        "num_return_sequences_in_group: 8\n")
INFER = ("actor_infer:\n  strategy_args:\n    strategy_name: vllm\n"
         "    strategy_config: {quantization: fp8}\n")


def _read(tmp_path: Path, fp8: str) -> tuple[dict[str, Any], dict[str, Any]]:
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + "actor_train:\n  model_args: {dtype: bf16}\n  strategy_args:\n"
                    "    strategy_name: megatron_train\n"
                    f"    strategy_config: {{fp8: {fp8}, fp8_param: true}}\n" + INFER)
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read.facts, dict(values)


@pytest.mark.parametrize("fp8", ["false", "''", "0", "no", "[]"])
def test_a_false_fp8_is_bf16_training(tmp_path: Path, fp8: str) -> None:
    facts, got = _read(tmp_path, fp8)
    assert got["intent.fp8"] is False
    assert "config.megatron.fp8_format" not in facts
    assert got["intent.rollout.fp8"] is True          # the rollout's quantization is apart


def test_formats_are_compared_as_written(tmp_path: Path) -> None:
    facts, got = _read(tmp_path, "E4M3")
    assert got["intent.fp8"] is True and isinstance(got["intent.format"], Unknown)
    facts, got = _read(tmp_path, "hybrid")
    assert got["intent.format"] == "hybrid" and facts["config.megatron.fp8_format"] == "hybrid"


@pytest.mark.parametrize("name", ["Megatron_Train", "'megatron_train '", "MEGATRON_TRAIN"])
def test_a_strategy_name_roll_would_refuse_is_no_megatron_run(tmp_path: Path, name: str) -> None:
    # factory.py:18-35 @ v0.3.0 compares the name as written and raises ValueError otherwise
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + "actor_train:\n  strategy_args:\n"
                    f"    strategy_name: {name}\n    strategy_config: {{fp8: e4m3}}\n" + INFER)
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown) and "factory.py" in values["intent.fp8"].reason
    assert "config.megatron.fp8_format" not in read.facts


@pytest.mark.parametrize("value", ["'${oc.env:FP8}'", "'${oc.env:FP8,e4m3}'", "'${nowhere}'"])
def test_an_interpolation_hydra_resolves_at_run_time_is_unknown(tmp_path: Path,
                                                                value: str) -> None:
    facts, got = _read(tmp_path, value)
    assert isinstance(got["intent.fp8"], Unknown)
    assert isinstance(facts["config.megatron.fp8_format"], Unknown)


@pytest.mark.parametrize(("value", "on"), [("'false'", True), ("'true'", True), ("1", True),
                                           ("0", False), ("false", False)])
def test_strategy_config_booleans_are_their_truth(tmp_path: Path, value: str, on: bool) -> None:
    # TrainingArguments(**config_dict) and TransformerConfig keep a string as it is (a quoted
    # 'false' is on); a quoted word was Unknown for Megatron's facts and intent said False
    path = tmp_path / "rlvr.yaml"
    path.write_text(HEAD + "actor_train:\n  strategy_args:\n    strategy_name: megatron_train\n"
                    f"    strategy_config: {{fp8: e4m3, fp8_param: {value}, "
                    f"sequence_parallel: {value}}}\n" + INFER)
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8_params"] is on and values["intent.sequence_parallel"] is on
    assert read.facts["config.megatron.fp8_param_gather"] is on
    assert read.facts["config.megatron.sequence_parallel"] is on
