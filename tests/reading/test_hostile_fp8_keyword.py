"""An FP8 switch keyword on a call no reader reads (reading/pyfacts.py ``_unread_fp8``) against a
hostile job file (redteam6, issue 21): the unread call on the same line as a read one
(``;``, nested in the read call), inside a lambda, or the keyword set as ``kw["load_in_fp8"]``
before ``**kw``. Each left FP8 "no" on the code before; now FP8 is Unknown naming the keyword.
Keywords set off, and calls in a branch the text shows never runs, change nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

# a library no reader reads (unsloth's FastLanguageModel is read since main a7bb771)
HEAD = "from fastloader import FastLanguageModel\nfrom trl import GRPOConfig\n"
ARGS = 'GRPOConfig(output_dir="o", learning_rate=5e-6)'
LOAD = 'FastLanguageModel.from_pretrained("m", load_in_fp8=True)'


def _fp8(tmp_path: Path, body: str) -> object:
    path = tmp_path / "grpo.py"
    path.write_text(HEAD + textwrap.dedent(body))
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("body", [
    f"model = {LOAD}; args = {ARGS}\n",                                  # one line, two calls
    f"from trl import GRPOTrainer\nt = GRPOTrainer(model={LOAD}[0], args={ARGS})\n",   # nested
    f"load = lambda: {LOAD}\nmodel = load()\nargs = {ARGS}\n",             # in a lambda
    f"model = (lambda: {LOAD})()\nargs = {ARGS}\n",
    f'kw = {{}}\nkw["load_in_fp8"] = True\nmodel = FastLanguageModel.from_pretrained("m", **kw)'
    f"\nargs = {ARGS}\n",                                                 # a mapping's key
])
def test_an_fp8_switch_the_reader_did_not_read_is_never_no(tmp_path: Path, body: str) -> None:
    got = _fp8(tmp_path, body)
    assert isinstance(got, Unknown) and "load_in_fp8" in got.reason


@pytest.mark.parametrize("body", [
    f'model = FastLanguageModel.from_pretrained("m", load_in_fp8=False); args = {ARGS}\n',
    f'load = lambda: FastLanguageModel.from_pretrained("m", load_in_fp8=None)\nargs = {ARGS}\n',
    f'kw = {{}}\nkw["load_in_fp8"] = False\nargs = {ARGS}\n',
    f"if False:\n    model = {LOAD}\nargs = {ARGS}\n",                    # never runs
])
def test_a_switch_set_off_or_never_run_changes_nothing(tmp_path: Path, body: str) -> None:
    assert _fp8(tmp_path, body) is False


def test_a_keyword_the_reader_states_at_its_line_is_read(tmp_path: Path) -> None:
    # TRL's GRPOConfig is read keyword by keyword: its own fp8-named keyword is a fact there
    got = _fp8(tmp_path, f"args = {ARGS[:-1]}, model_init_kwargs=dict(load_in_fp8=True))\n")
    assert got is False


@pytest.mark.parametrize("word", ["fp8_enabled", "enable_fp8_training", "use_float8_training",
                                  "fp8_enable"])
def test_switches_spelt_with_a_suffix_count_too(tmp_path: Path, word: str) -> None:
    # TE's make_graphed_callables(fp8_enabled=True), job models' fp8_enabled, torchtune's key
    got = _fp8(tmp_path, f"from mylib import Model\nm = Model({word}=True)\nargs = {ARGS}\n")
    assert isinstance(got, Unknown) and word in got.reason


@pytest.mark.parametrize("word", ["fp8_recipe", "fp8_format", "fp8_param_gather",
                                  "enable_fsdp_float8_all_gather", "fp8_amax_history_len"])
def test_options_of_fp8_are_no_switch(tmp_path: Path, word: str) -> None:
    assert _fp8(tmp_path, f"from mylib import Model\nm = Model({word}=1)\nargs = {ARGS}\n") \
        is False


def test_lambdas_nested_two_thousand_deep_are_read_once(tmp_path: Path) -> None:
    # each node is visited once: a walk of every lambda's body took 5 CPU seconds here
    from tests.cputime import cpu_seconds

    nested = "lambda: " * 2000 + 'FastLanguageModel.from_pretrained("m", load_in_fp8=False)'
    start = cpu_seconds()
    assert _fp8(tmp_path, f"f = {nested}\nargs = {ARGS}\n") is False
    assert cpu_seconds() - start < 2.5


@pytest.mark.parametrize("body", [
    'kw.update({"load_in_fp8": True})\n', 'kw |= {"load_in_fp8": True}\n',
    'kw.setdefault("load_in_fp8", True)\n', 'kw["load_in_fp8"]: bool = True\n',
    'kw["load_in_fp8"] |= True\n', 'kw["load_in_fp8"], n = True, 1\n',
    'setattr(ns, "load_in_fp8", True)\n'])
def test_a_switch_set_in_a_mapping_passed_as_keywords_counts(tmp_path: Path, body: str) -> None:
    got = _fp8(tmp_path, "import types\nkw = {}\nns = types.SimpleNamespace()\n" + body +
               'model = FastLanguageModel.from_pretrained("m", **kw, **vars(ns))\n'
               f"args = {ARGS}\n")
    assert isinstance(got, Unknown) and "load_in_fp8" in got.reason
