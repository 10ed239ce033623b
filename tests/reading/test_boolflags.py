"""Boolean settings written as words or numbers (``--bf16 1``, ``--merge_lora yes``,
``fp8: "on"``) reach the rules as True / False, as each framework's parser reads them
(preflight/reading/boolflags.py); other values (``bf16: auto``) stay as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.api import check
from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.boolflags import as_bool, key_of

TRAINER = """from transformers import HfArgumentParser, Trainer, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
Trainer(model=model, args=args).train()
"""


@pytest.mark.parametrize(("raw", "want"), [
    ("1", True), ("yes", True), ("Y", True), ("t", True), ("TRUE", True), (1, True),
    ("0", False), ("no", False), ("N", False), ("f", False), ("False", False), (0, False),
    (True, True), (False, False)])
def test_hf_words_and_numbers(raw: Any, want: bool) -> None:
    assert as_bool(raw) is want


@pytest.mark.parametrize("raw", ["auto", "on", "off", "2", 2, -1, None, "", 1.0])
def test_other_values_stay(raw: Any) -> None:
    assert as_bool(raw) == raw and type(as_bool(raw)) is type(raw)


def test_on_off_only_where_the_parser_takes_them() -> None:
    assert as_bool("on", on_off=True) is True and as_bool("OFF", on_off=True) is False
    assert as_bool("on") == "on"


@given(st.text(max_size=12))
def test_a_word_is_a_bool_only_if_the_parser_says_so(word: str) -> None:
    got = as_bool(word, on_off=True)
    if isinstance(got, bool):
        assert word.strip().lower() in {"yes", "true", "t", "y", "1", "on",
                                        "no", "false", "f", "n", "0", "off"}
    elif isinstance(got, Unknown):      # a run-time value: $NAME, ${...}, $(...)
        assert re.match(r"\$[A-Za-z_{(]", word.strip())
    else:
        assert got == word


def test_key_of_names_kind_key_and_replaced() -> None:
    table = {"hf_trainer": (frozenset({"bf16"}), False), "axolotl": (frozenset({"fp8"}), True)}
    assert key_of("config.hf_trainer.bf16", table) is False
    assert key_of("config.hf_trainer.replaced.bf16", table) is False
    assert key_of("config.axolotl.fp8", table) is True
    assert key_of("config.hf_trainer.per_device_train_batch_size", table) is None
    assert key_of("config.accelerate.bf16", table) is None
    assert key_of("intent.fp8", table) is None


def _job(tmp_path: Path, line: str, script: str | None = TRAINER) -> Path:
    if script is not None:
        (tmp_path / "train.py").write_text(script)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    return tmp_path / "run.sh"


@pytest.mark.parametrize(("value", "fires"), [("1", True), ("yes", True), ("True", True),
                                              ("0", False), ("no", False), ("False", False)])
def test_bf16_as_a_number_or_word_on_the_launch_line(tmp_path: Path, value: str,
                                                     fires: bool) -> None:
    """FP8D-HF-0001 (TrainingArguments bf16 replaces accelerate's fp8) whatever way bf16 is
    switched on; `--bf16 1` was read as the number 1 and the rule stayed quiet."""
    run = _job(tmp_path, f"accelerate launch --mixed_precision fp8 train.py --bf16 {value} "
                         "--output_dir out")
    read = read_paths([str(run)])
    assert read.facts["config.hf_trainer.bf16"] is fires
    report = check([str(run)], smoke=False, assume={"gpu": "H100"})
    assert ("FP8D-HF-0001" in {f.rule_id for f in report.findings}) is fires


def test_numbers_that_are_not_booleans_stay_numbers(tmp_path: Path) -> None:
    run = _job(tmp_path, "accelerate launch --mixed_precision fp8 train.py --bf16 1 "
                         "--per_device_train_batch_size 1 --output_dir out")
    facts = read_paths([str(run)]).facts
    assert facts["config.hf_trainer.per_device_train_batch_size"] == 1
    assert facts["config.hf_trainer.per_device_train_batch_size"] is not True


def test_swift_merge_lora_1(tmp_path: Path) -> None:
    run = _job(tmp_path, "megatron sft --model Qwen/Qwen3-8B --train_type lora --fp8_format e4m3 "
                         "--fp8_recipe blockwise --merge_lora 1 --save out", script=None)
    assert read_paths([str(run)]).facts["config.swift.merge_lora"] is True
    report = check([str(run)], smoke=False, assume={"gpu": "H100"})
    assert "FP8D-SWIFT-0001" in {f.rule_id for f in report.findings}


def test_axolotl_quoted_words(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text('base_model: meta-llama/Llama-3.1-8B\nfp8: "on"\nbf16: auto\n'
                   'torch_compile: "1"\nmicro_batch_size: 1\nsequence_len: 4096\n'
                   'datasets:\n  - path: x\n')
    facts = read_paths([str(cfg)]).facts
    assert facts["config.axolotl.fp8"] is True and facts["config.axolotl.torch_compile"] is True
    assert facts["config.axolotl.bf16"] == "auto"
    assert facts["config.axolotl.micro_batch_size"] == 1


@pytest.mark.parametrize("raw", ["$BF16", "${BF16:-}", "$(cat x)"])
def test_a_run_time_value_is_unknown(raw: str) -> None:
    # redteam3: `--bf16 $BF16` kept the text, which no rule reads as true ("no problem")
    got = as_bool(raw)
    assert isinstance(got, Unknown) and raw[:6] in got.reason


def test_a_run_time_bool_flag_leaves_hf_0001_undetermined(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("from transformers import Trainer, TrainingArguments\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\naccelerate launch --mixed_precision fp8 train.py "
                      "--output_dir o --bf16 $BF16\n")
    assert isinstance(read_paths([str(script)]).facts["config.hf_trainer.bf16"], Unknown)
    report = check([str(script)], smoke=False)
    assert "FP8D-HF-0001" in {u.rule_id for u in report.undetermined}


@pytest.mark.parametrize("value", ["{a: 1}", "[1]", "[]", "{}", "\n  a: 1\n  b: [2]"])
def test_a_table_or_list_for_a_boolean_key_is_unknown(tmp_path: Path, value: str) -> None:
    # redfix (redteam10's class): a YAML table flattened into `fp8.a` left `fp8` absent, read
    # as its default (FP8 "no"); a list was kept and its truth read
    from preflight.facts import Facts, Unknown
    from preflight.intent import derive
    from preflight.jobs.read import read_paths

    (tmp_path / ".git").mkdir()
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: x\nstage: sft\nfinetuning_type: full\nbf16: true\n"
                    f"fp8: {value}\n")
    read = read_paths([str(path)])
    assert isinstance(read.facts["config.llamafactory.fp8"], Unknown)
    assert read.provenance["config.llamafactory.fp8"].endswith("sft.yaml:5") or \
        getattr(read.provenance["config.llamafactory.fp8"], "line", None) in (5, 6)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
