"""torchtitan TOML FP8 intent (frameworks/torchtitan.py): [quantize.*] settings that choose a
recipe ask for FP8 when the TOML names no converter (the launch line gives --model.converters as
often: NousResearch/torchtitan f6b8b95c qwen3next_10b_a1b_mxfp8.toml, holdout23), the shipped
templates (defaults, grouped-MM fqns, a commented converter line) do not; a converter name
torchtitan does not register is a fork's, never read as "no FP8"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

HEAD = '[job]\ndump_folder = "./outputs"\n\n[model]\nname = "qwen3_next"\nflavor = "10B_A1B"\n'
MX = ('\n[compile]\nenable = true\n\n[quantize]\n[quantize.linear.mx]\n'
      'recipe_name = "mxfp8_cublas"\nfilter_fqns = ["output", "router.gate"]\n\n'
      '[quantize.grouped_mm.mx]\nrecipe_name = "mxfp8"\nfqns = ["experts"]\n')


def _derive(tmp_path: Path, text: str) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / "train_configs" / "job.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_mx_sections_without_converters_ask_for_mxfp8(tmp_path: Path) -> None:
    _, values = _derive(tmp_path, HEAD + MX)
    assert values["intent.fp8"] is True
    assert values["intent.recipe"] == "mxfp8" and values["intent.backend"] == "torchao"
    assert str(values["intent.fp8_source"]).endswith("job.toml:13")   # the linear recipe line


def test_a_float8_recipe_without_converters_asks(tmp_path: Path) -> None:
    _, values = _derive(tmp_path, HEAD + '\n[quantize.linear.float8]\nrecipe_name = "rowwise"\n')
    assert values["intent.fp8"] is True and values["intent.recipe"] == "rowwise"


@pytest.mark.parametrize("tables", [
    # torchtitan v0.2.2's shipped deepseek_v3_16b.toml / llama4 debug_model.toml: defaults only
    '\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = false\n'
    'precompute_float8_dynamic_scale_for_fsdp = false\nfilter_fqns = ["output", "router.gate"]\n'
    '\n[quantize.grouped_mm.float8]\nfqns = ["experts"]\n'
    '\n[quantize.linear.mx]\nfilter_fqns = ["output", "router.gate"]\n'
    '\n[quantize.grouped_mm.mx]\nfqns = ["experts"]\n',
    '\n[quantize.linear.mx]\nrecipe_name = ""\n',
])
def test_template_tables_ask_for_nothing(tmp_path: Path, tables: str) -> None:
    _, values = _derive(tmp_path, HEAD + '# converters = ["float8"]\n' + tables)
    assert values["intent.fp8"] is False


def test_converters_written_empty_keep_the_sections_inert(tmp_path: Path) -> None:
    # the TOML names its converters: a launch line would have to override a written list
    _, values = _derive(tmp_path, HEAD + "converters = []\n" + MX)
    assert values["intent.fp8"] is False


@pytest.mark.parametrize("name", ["modeloptimizer", "quantize.linear.qat", "kv_cache", "x" * 5000])
def test_a_fork_converter_is_unknown_not_no(tmp_path: Path, name: str) -> None:
    _, values = _derive(tmp_path, HEAD + f'converters = ["{name}"]\n')
    assert isinstance(values["intent.fp8"], Unknown)
    assert len(values["intent.fp8"].reason) < 300


@pytest.mark.parametrize("word", ["none", "None", "[]"])
def test_a_no_converter_word_is_no_fp8(tmp_path: Path, word: str) -> None:
    _, values = _derive(tmp_path, HEAD + f'converters = ["{word}"]\n')
    assert values["intent.fp8"] is False


def test_a_fork_converter_named_for_fp8_asks_with_its_recipe_unknown(tmp_path: Path) -> None:
    _, values = _derive(tmp_path, HEAD + 'converters = ["nous_mxfp8_linear"]\n')
    assert values["intent.fp8"] is True
    assert isinstance(values["intent.recipe"], Unknown)


def test_a_registered_converter_wins_over_a_fork_one(tmp_path: Path) -> None:
    _, values = _derive(tmp_path, HEAD + 'converters = ["kv_cache", "quantize.linear.float8"]\n')
    assert values["intent.fp8"] is True and values["intent.recipe"] == "tensorwise"


def test_hostile_quantize_values_are_read_without_a_traceback(tmp_path: Path) -> None:
    # a recipe written as 40 nested arrays, a table: torchtitan refuses them at start-up, but a
    # recipe is chosen, so FP8 is asked (the value is the job's to fix, not a reason for "no")
    text = HEAD + '\n[quantize.linear.mx]\nrecipe_name = ' + '[' * 40 + ']' * 40 + '\n' + \
        '\n[quantize.grouped_mm.mx]\nrecipe_name = {a = 1}\n'
    read, values = _derive(tmp_path, text)
    assert "torchtitan" in read.facts["config.kinds"]
    assert values["intent.fp8"] is True and values["intent.recipe"] == "mxfp8"
