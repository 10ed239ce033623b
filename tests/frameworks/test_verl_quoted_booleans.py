"""verl's boolean keys given as strings (``use_remove_padding: 'false'`` in a YAML,
``...fp8_param='"false"'`` or ``sequence_parallel=no`` on a Hydra launch line), decided per key
as verl takes them (issue 22; was Unknown in a YAML and the raw string on a launch line).

Read at verl-project/verl v0.7.1 and v0.9.0 with OmegaConf v2.3.0 (the release hydra-core 1.3
takes): a verl config has ``_target_``, so ``omega_conf_to_dataclass`` builds it with
``hydra.utils.instantiate`` (verl/utils/config.py l.40-50), which sets the string unchanged -
no ``OmegaConf.structured``, so no ``BooleanNode`` conversion (omegaconf/nodes.py l.394-414);
the v0.7.1 workers read the DictConfig directly (megatron_workers.py l.212, fsdp_workers.py
l.868) and ``override_transformer_config`` is a dict set on Megatron's provider key by key
(transformer_impl.py l.364-365 @ v0.9.0). Megatron and verl then test the value's truth: any
non-empty string is on. ``rollout.enable_chunked_prefill`` becomes a vLLM command-line flag
(vllm_async_server.py l.297, 409; vllm_rollout/utils.py l.455-460 @ v0.9.0): vLLM's parser
decides, so a quoted boolean there stays Unknown. OmegaConf loads YAML with PyYAML's SafeLoader
(omegaconf/_utils.py l.136-175 @ v2.3.0): an unquoted ``off`` / ``yes`` is a YAML 1.1 boolean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight import intent
from preflight.engine import evaluate, load_rules
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

MEG = "actor_rollout_ref.actor.megatron"
TFC = f"{MEG}.override_transformer_config"
PAD = "config.verl.actor_rollout_ref.model.use_remove_padding"
FSDP_YAML = """\
actor_rollout_ref:
  model:
    path: Qwen/Qwen3-8B
    use_remove_padding: {value}
  actor:
    strategy: fsdp
  rollout:
    name: vllm
    enable_chunked_prefill: {value}
trainer:
  nnodes: 1
"""


def _yaml(tmp_path: Path, value: str) -> Any:
    path = tmp_path / "ppo.yaml"
    path.write_text(FSDP_YAML.format(value=value))
    return read_paths([str(path)])


def _line(tmp_path: Path, *overrides: str) -> tuple[Any, dict[str, Any]]:
    run = tmp_path / "run.sh"
    run.write_text("python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer "
                   f"actor_rollout_ref.rollout.name=vllm +{TFC}.fp8=hybrid "
                   f"{MEG}.tensor_model_parallel_size=4 " + " ".join(overrides) + "\n")
    read = read_paths([str(run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


@pytest.mark.parametrize("value", ["'false'", '"False"', "'0'", "'no'", "'true'", "'1'"])
def test_a_quoted_string_on_use_remove_padding_is_on(tmp_path: Path, value: str) -> None:
    read = _yaml(tmp_path, value)
    assert read.facts[PAD] is True
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.packing"] is True


@pytest.mark.parametrize(("value", "want"), [("false", False), ("off", False), ("no", False),
                                             ("''", False), ("true", True), ("yes", True)])
def test_yaml_booleans_and_the_empty_string(tmp_path: Path, value: str, want: bool) -> None:
    # PyYAML's SafeLoader (OmegaConf's loader): off / no are booleans; '' is a false string
    assert _yaml(tmp_path, value).facts[PAD] is want


@pytest.mark.parametrize("value", ["'false'", "'true'"])
def test_chunked_prefill_is_left_to_vllm(tmp_path: Path, value: str) -> None:
    got = _yaml(tmp_path, value).facts["config.verl.actor_rollout_ref.rollout.enable_chunked_prefill"]
    assert isinstance(got, Unknown)
    assert "ppo.yaml:9" in got.reason and "vLLM" in got.reason


def test_hydra_quoted_false_on_fp8_param_is_on(tmp_path: Path) -> None:
    read, values = _line(tmp_path, f"+{TFC}.fp8_param='\"false\"'",
                         f"+{TFC}.fp8_dot_product_attention='false'")
    assert read.facts[f"config.verl.{TFC}.fp8_param"] is True
    # `x='false'`: the shell removes the quotes, Hydra reads the boolean false
    assert read.facts[f"config.verl.{TFC}.fp8_dot_product_attention"] is False
    assert values["intent.fp8"] is True and values["intent.fp8_params"] is True
    assert values["intent.fp8_attention"] is False


@pytest.mark.parametrize(("word", "want"), [("no", True), ("off", True), ("'\"0\"'", True),
                                            ("0", False), ("1", True), ("False", False),
                                            ("'\"\"'", False)])
def test_sequence_parallel_words_on_the_launch_line(tmp_path: Path, word: str,
                                                    want: bool) -> None:
    # Hydra's grammar: no / off are strings (only true/false are booleans), 0 and 1 integers
    read, values = _line(tmp_path, f"{MEG}.sequence_parallel={word}")
    assert read.facts[f"config.verl.{MEG}.sequence_parallel"] is want
    assert values["intent.sequence_parallel"] is want


def test_a_shell_variable_stays_unknown(tmp_path: Path) -> None:
    read, values = _line(tmp_path, f"{MEG}.sequence_parallel=$SP")
    assert isinstance(read.facts[f"config.verl.{MEG}.sequence_parallel"], Unknown)
    assert isinstance(values["intent.sequence_parallel"], Unknown)


def test_quoted_false_dynamic_cp_under_fp8_is_refused(tmp_path: Path) -> None:
    # McoreEngineConfig(dynamic_context_parallel="false") is on for verl: FP8D-VERL-0001 fires
    read, values = _line(tmp_path, f"+{MEG}.dynamic_context_parallel='\"false\"'")
    assert read.facts[f"config.verl.{MEG}.dynamic_context_parallel"] is True
    facts = Facts(read.facts, read.provenance).merged(values, {})
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False), facts).findings}
    assert "FP8D-VERL-0001" in fired


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="abcdefFTNOY01 -_.", max_size=12))
def test_any_string_on_a_bool_key_is_its_truth(tmp_path: Path, text: str) -> None:
    # a double-quoted YAML scalar is always a string: verl tests its truth
    read = _yaml(tmp_path, json.dumps(text))
    assert read.facts[PAD] is bool(text)
