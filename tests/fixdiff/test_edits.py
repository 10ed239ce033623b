"""Line edits keep what they do not touch: comments, order, quoting, indentation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from preflight.cli import main
from preflight.fixdiff import edits as E


def test_yaml_set_keeps_the_comment_and_the_rest() -> None:
    text = "a: 1\nfp8_config:\n  fp8_format: E4M3   # why\n  backend: TE\n"
    out = E.set_value(text, "yaml", "fp8_format", 3, "HYBRID")
    assert out == "a: 1\nfp8_config:\n  fp8_format: HYBRID   # why\n  backend: TE\n"


def test_yaml_delete_takes_the_block_under_the_key() -> None:
    text = "x:\n  keep: 1\n  gone:\n    - 1\n    - 2\n  after: 2\n"
    out = E.delete_key(text, "yaml", "gone", 3)
    assert yaml.safe_load(out) == {"x": {"keep": 1, "after": 2}}


def test_yaml_add_next_to_a_sibling_and_nested() -> None:
    text = "fp8_config:\n  backend: TE\nmixed_precision: fp8\n"
    out = E.add_key_before(text, "yaml", ("fp8_format",), 2, "HYBRID")
    assert yaml.safe_load(out)["fp8_config"] == {"fp8_format": "HYBRID", "backend": "TE"}
    out = E.add_key_before(text, "yaml", ("fsdp_config", "fsdp_version"), 3, 2)
    assert yaml.safe_load(out)["fsdp_config"] == {"fsdp_version": 2}


def test_json_set_and_delete_keep_it_valid() -> None:
    text = json.dumps({"bf16": {"enabled": False}, "fp16": {"enabled": True}}, indent=2) + "\n"
    lines = text.splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if '"enabled": true' in ln)
    assert json.loads(E.set_value(text, "json", "enabled", line, "auto"))["fp16"] == {
        "enabled": "auto"}
    out = E.delete_key(text, "json", "enabled", line)
    assert json.loads(out) == {"bf16": {"enabled": False}, "fp16": {}}
    first = next(i for i, ln in enumerate(lines, 1) if '"enabled": false' in ln)
    assert json.loads(E.add_key_before(text, "json", ("x",), first, 1))["bf16"] == {
        "x": 1, "enabled": False}


def test_inline_mappings_get_their_one_value_replaced() -> None:
    text = '{\n  "fp16": {"enabled": true, "loss_scale": 0},\n  "x": 1\n}\n'
    out = E.set_value(text, "json", "enabled", 2, False)
    assert json.loads(out) == {"fp16": {"enabled": False, "loss_scale": 0}, "x": 1}
    ytext = "fp16: {enabled: true, loss_scale: 0}  # keep\n"
    out = E.set_value(ytext, "yaml", "enabled", 1, False)
    assert out == "fp16: {enabled: false, loss_scale: 0}  # keep\n"


def test_shell_flags_keep_the_continuation() -> None:
    text = "torchrun a.py \\\n    --fp8-format hybrid --fp8-interval 4 \\\n    --bf16\n"
    out = E.delete_flag(text, "fp8_interval", 2)
    assert out == "torchrun a.py \\\n    --fp8-format hybrid \\\n    --bf16\n"
    out = E.set_flag(text, "fp8_format", 2, "e4m3")
    assert "--fp8-format e4m3 --fp8-interval 4 \\\n" in out
    out = E.add_flag_after(text, "fp8-recipe", 2, "delayed")
    assert out.splitlines()[1].endswith("--fp8-recipe delayed \\")
    only = "x \\\n  --fp8-interval 4 \\\n  --bf16\n"
    assert E.delete_flag(only, "fp8_interval", 2) == "x \\\n  --bf16\n"


@pytest.mark.parametrize("call", [
    lambda: E.set_value("a:\n  b: 1\n", "yaml", "a", 1, 2),          # a block, not a scalar
    lambda: E.set_value("a: 1\n", "yaml", "zz", 1, 2),               # not that key
    lambda: E.set_value("a: 1\n", "yaml", "a", 5, 2),                # no such line
    lambda: E.delete_flag("torchrun x\n", "fp8", 1),
    lambda: E.add_key_before("- a: 1\n", "yaml", ("b",), 1, 2),      # a list item
])
def test_an_edit_that_would_guess_is_refused(call) -> None:
    with pytest.raises(E.EditError):
        call()


# keys YAML 1.1 reads as booleans or null (on, no, y ...) are no plain keys for this property
KEYS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True).filter(
    lambda k: k not in ("y", "n", "yes", "no", "on", "off", "true", "false", "null"))
VALUES = st.one_of(st.booleans(), st.integers(-10**6, 10**6),
                   st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                           max_size=12))


@given(st.dictionaries(KEYS, st.integers(0, 9), min_size=1, max_size=6), VALUES, st.data())
def test_yaml_set_gives_the_value_back_and_nothing_else_changes(doc: dict, value, data) -> None:
    keys = list(doc)
    text = "".join(f"{k}: {v}  # c{i}\n" for i, (k, v) in enumerate(doc.items()))
    i = data.draw(st.integers(0, len(keys) - 1))
    out = E.set_value(text, "yaml", keys[i], i + 1, value)
    got = yaml.safe_load(out)
    assert got == {**doc, keys[i]: value}
    assert [ln.split("#")[-1] for ln in out.splitlines()] == [
        ln.split("#")[-1] for ln in text.splitlines()]


def test_cli_check_diff_goes_to_stdout_and_touches_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds.json"
    original = json.dumps({"bf16": {"enabled": True}, "fp16": {"enabled": True}}, indent=2)
    ds.write_text(original)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "ds.json", "--diff", "--no-smoke"])
    out = capsys.readouterr().out
    assert code == 1 and "--- a/ds.json" in out and '+    "enabled": false' in out
    assert ds.read_text() == original
