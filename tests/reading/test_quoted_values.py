"""A boolean (or a number) a config file or Python code gives as a string, read as each framework's
loader takes it (``Framework.file_strings``; reading/boolflags.py ``from_file``).

Before, the walk turned ``bf16: 'false'`` into False for every framework with boolean keys, as
HfArgumentParser's ``string_to_bool`` does on a command line; but ``parse_yaml_file`` /
``parse_dict`` keep the string, and TrainingArguments' truth turns BF16 on (issue 22, the last
note's known limits). Each loader was read at a tag (the records cite it):

| framework | a quoted ``'false'`` in its config | source |
|---|---|---|
| HF Trainer YAML/JSON | on (parse_dict) or off (TRL ``--config``): Unknown | hf_argparser.py @ 002496228f0c; trl/scripts/utils.py l.321-372 @ v1.9.0 |
| HF Trainer ``TrainingArguments(bf16="false")`` | on | a dataclass keeps it |
| LLaMA-Factory YAML | on | hparams/parser.py l.85-107 @ v0.9.5 |
| axolotl YAML | off (pydantic) | cli/config.py l.254, utils/config/__init__.py l.439-498 @ v0.18.0 |
| ms-swift YAML | off (flags) | swift/cli/main.py l.38-71 @ v4.5.2 |
| accelerate YAML | off (``str()`` -> env -> ``str_to_bool``) | utils/launch.py l.309-316 @ v1.13.0 |
| NeMo-RL YAML | on (a dict, tested for truth) | examples/run_grpo.py l.74-81 @ v0.7.0 |
| Megatron-Bridge YAML / key=value / script | on (set unchanged) | omegaconf_utils.py l.454-516 @ v0.6.0 (tests/frameworks/test_mbridge_quoted_booleans.py) |
| verl's bool_keys, YAML / Hydra-quoted override | on (hydra.utils.instantiate keeps the string) | verl/utils/config.py l.40-50 @ v0.9.0 (tests/frameworks/test_verl_quoted_booleans.py) |
| verl's other keys, NeMo, the rest | Unknown naming file:line | per key / not read |
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

HF_YAML = """
output_dir: out
per_device_train_batch_size: 4
num_train_epochs: 1
logging_steps: 10
save_strategy: steps
bf16: {value}
"""


def _read(tmp_path: Path, name: str, text: str, kind: str | None = None) -> Any:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return read_paths([str(path)], kind=kind)


@pytest.mark.parametrize(("value", "want"), [
    ("'false'", None),        # parse_dict: on; TRL --config: off -> Unknown
    ("'0'", None),
    ("''", None),             # parse_dict: off; string_to_bool refuses it -> Unknown
    ("'true'", True),         # on for both
    ("'yes'", True),
    ("false", False),         # a YAML boolean: no string at all
    ("true", True),
])
def test_hf_trainer_yaml_string_is_unknown_where_its_loaders_differ(
        tmp_path: Path, value: str, want: bool | None) -> None:
    read = _read(tmp_path, "args.yaml", HF_YAML.format(value=value), kind="hf_trainer")
    got = read.facts["config.hf_trainer.bf16"]
    if want is None:
        assert isinstance(got, Unknown)
        assert "args.yaml:7" in got.reason and "TRL" in got.reason
    else:
        assert got is want


def test_hf_trainer_command_line_still_uses_string_to_bool(tmp_path: Path) -> None:
    read = _read(tmp_path, "run.sh", "#!/bin/bash\naccelerate launch --mixed_precision fp8 "
                 "train.py --output_dir o --per_device_train_batch_size 4 --bf16 false\n")
    assert read.facts["config.hf_trainer.bf16"] is False


def test_training_arguments_in_python_keep_the_string(tmp_path: Path) -> None:
    read = _read(tmp_path, "train.py", """
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir="o", bf16="false")
        """)
    assert read.facts["config.hf_trainer.bf16"] is True


@pytest.mark.parametrize(("value", "want"), [("'false'", True), ("'0'", True), ("''", False),
                                             ("false", False), ("'true'", True)])
def test_llamafactory_yaml_string_is_kept_and_tested_for_truth(
        tmp_path: Path, value: str, want: bool) -> None:
    read = _read(tmp_path, "sft.yaml", f"""
        model_name_or_path: meta-llama/Llama-3.1-8B
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: llama3
        output_dir: out
        bf16: {value}
        """, kind="llamafactory")
    assert read.facts["config.llamafactory.bf16"] is want


@pytest.mark.parametrize(("value", "want"), [("'false'", False), ("'on'", True), ("'0'", False),
                                             ("true", True)])
def test_axolotl_yaml_string_is_validated_by_pydantic(tmp_path: Path, value: str,
                                                       want: bool) -> None:
    read = _read(tmp_path, "axo.yml", f"""
        base_model: meta-llama/Llama-3.1-8B
        datasets:
          - path: tatsu-lab/alpaca
            type: alpaca
        sequence_len: '4096'
        micro_batch_size: 2
        fp8: {value}
        """, kind="axolotl")
    assert read.facts["config.axolotl.fp8"] is want
    assert read.facts["config.axolotl.sequence_len"] == 4096      # lax int


def test_a_number_kept_as_text_is_unknown_where_the_loader_keeps_it(tmp_path: Path) -> None:
    read = _read(tmp_path, "args.yaml", HF_YAML.format(value="true") + "max_seq_length: '4096'\n",
                 kind="hf_trainer")
    got = read.facts["config.hf_trainer.max_seq_length"]
    assert isinstance(got, Unknown) and "args.yaml:8" in got.reason


NEMO_RL = """
policy:
  model_name: Qwen/Qwen3-8B
  precision: bfloat16
  megatron_cfg:
    enabled: true
    fp8_cfg:
      enabled: {value}
      fp8: e4m3
      fp8_recipe: blockwise
      fp8_param: false
"""


@pytest.mark.parametrize(("value", "fp8"), [("'false'", True), ("false", False),
                                            ("'true'", True)])
def test_nemo_rl_yaml_string_is_tested_for_truth(tmp_path: Path, value: str, fp8: bool) -> None:
    read = _read(tmp_path, "grpo.yaml", NEMO_RL.format(value=value), kind="nemo_rl")
    assert read.facts["config.nemo_rl.policy.megatron_cfg.fp8_cfg.enabled"] is fp8
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is fp8


def test_a_quoted_boolean_where_the_loader_was_not_read_is_unknown(tmp_path: Path) -> None:
    read = _read(tmp_path, "ds.json", '{"train_micro_batch_size_per_gpu": 1, '
                 '"zero_optimization": {"stage": 3}, "bf16": {"enabled": "false"}}',
                 kind="deepspeed")
    got = read.facts["config.deepspeed.bf16.enabled"]
    assert isinstance(got, Unknown) and "ds.json" in got.reason


def test_accelerate_yaml_string_other_than_a_boolean_is_kept(tmp_path: Path) -> None:
    """accelerate converts its booleans (str_to_bool), and `mixed_precision: 'no'` is a value."""
    read = _read(tmp_path, "acc.yaml", """
        compute_environment: LOCAL_MACHINE
        distributed_type: MULTI_GPU
        mixed_precision: 'no'
        num_processes: 2
        """, kind="accelerate")
    assert read.facts["config.accelerate.mixed_precision"] == "no"


@pytest.mark.parametrize(("parser", "call", "argv", "want"), [
    # TRL's trl/scripts/sft.py at v1.9.0: TrlParser --config -> argparse default -> string_to_bool
    ("TrlParser", "parser.parse_args_and_config()", "--config recipe.yaml", False),
    # transformers examples: HfArgumentParser.parse_yaml_file(sys.argv[1]) -> parse_dict keeps it
    ("HfArgumentParser", "parser.parse_yaml_file(sys.argv[1])", "recipe.yaml", True),
])
def test_the_parser_the_script_names_decides_a_yaml_string(
        tmp_path: Path, parser: str, call: str, argv: str, want: bool) -> None:
    module = "trl" if parser == "TrlParser" else "transformers"
    (tmp_path / "sft.py").write_text(
        f"import sys\nfrom transformers import TrainingArguments\nfrom {module} import {parser}\n"
        f"parser = {parser}((TrainingArguments,))\nargs = {call}\n")
    (tmp_path / "recipe.yaml").write_text("output_dir: o\nbf16: 'false'\n"
                                          "per_device_train_batch_size: 2\n")
    (tmp_path / "run.sh").write_text(f"accelerate launch --mixed_precision fp8 sft.py {argv}\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts["config.hf_trainer.bf16"] is want


@pytest.mark.parametrize(("override", "want"), [
    ("policy.megatron_cfg.fp8_cfg.enabled=false", False),
    # a Hydra-quoted value stays a string (nemo_rl/utils/config.py l.168-188 @ v0.7.0: Hydra's
    # OverridesParser onto an untyped DictConfig), which NeMo-RL tests for truth
    ("'policy.megatron_cfg.fp8_cfg.enabled=\"false\"'", True),
])
def test_nemo_rl_hydra_override_strings_are_tested_for_truth(
        tmp_path: Path, override: str, want: bool) -> None:
    (tmp_path / "grpo.yaml").write_text(textwrap.dedent(NEMO_RL.format(value="true")))
    (tmp_path / "run.sh").write_text(f"uv run examples/run_grpo.py --config grpo.yaml {override}\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts["config.nemo_rl.policy.megatron_cfg.fp8_cfg.enabled"] is want
