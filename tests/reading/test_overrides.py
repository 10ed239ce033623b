"""Hydra / OmegaConf override grammar and layered configs (issue 22 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.facts import Unknown
from preflight.reading.layered import Layered, load_chain
from preflight.reading.overrides import (
    MAX_KEY_PARTS,
    MAX_VALUE_CHARS,
    OverrideError,
    is_dotlist,
    parse_flag,
    parse_hydra,
    python_literal,
)
from preflight.reading.parse import parse_yaml


@pytest.mark.parametrize("text, op, path, value", [
    ("a.b=c", "set", ("a", "b"), "c"),
    ("+a.b=1", "add", ("a", "b"), 1),
    ("++a.b=1.5e-3", "force", ("a", "b"), 1.5e-3),
    ("~a.b", "delete", ("a", "b"), None),
    ("~a.b=3", "delete", ("a", "b"), None),
    ("a=null", "set", ("a",), None),
    ("a=NULL", "set", ("a",), None),
    ("a=True", "set", ("a",), True),
    ("a=false", "set", ("a",), False),
    ("a=", "set", ("a",), ""),
    ("a='x y'", "set", ("a",), "x y"),
    ('a="1"', "set", ("a",), "1"),
    ("a=[1, 2, x]", "set", ("a",), [1, 2, "x"]),
    ("a=[[/d/x],null]", "set", ("a",), [["/d/x"], None]),
    ('a=["console","wandb"]', "set", ("a",), ["console", "wandb"]),
    ("a={x: 1, y: [2]}", "set", ("a",), {"x": 1, "y": [2]}),
    ("a=${b.c}", "set", ("a",), "${b.c}"),
    ("a=inf", "set", ("a",), "inf"),
    ("a-b.c_d=e", "set", ("a-b", "c_d"), "e"),
])
def test_hydra_override_grammar(text: str, op: str, path: tuple[str, ...], value: object) -> None:
    ov = parse_hydra(text)
    assert (ov.op, ov.path, ov.value) == (op, path, value)


@pytest.mark.parametrize("text", ["a.b", "1a=2", "a..b=1", ".a=1"])
def test_what_hydra_refuses_is_an_error(text: str) -> None:
    with pytest.raises(OverrideError):
        parse_hydra(text)


def test_bounds() -> None:
    with pytest.raises(OverrideError):
        parse_hydra("a=" + "x" * (MAX_VALUE_CHARS + 1))
    with pytest.raises(OverrideError):
        parse_hydra(".".join(["k"] * (MAX_KEY_PARTS + 1)) + "=1")
    with pytest.raises(OverrideError):
        parse_hydra("a=" + "[" * 100 + "]" * 100)


def test_unknown_values_stay_unknown_keys() -> None:
    ov = parse_hydra("model.tp=$TP", unknown="$TP is set outside")
    assert ov.path == ("model", "tp") and isinstance(ov.value, Unknown)


def test_is_dotlist() -> None:
    assert is_dotlist("a.b=1") and is_dotlist("+x=1") and is_dotlist("~a.b")
    assert not is_dotlist("--a=1") and not is_dotlist("/path/x.yaml") and not is_dotlist("x")


def test_automodel_values_are_typed_like_translate_value() -> None:
    assert python_literal("True") is True and python_literal("none") is None
    assert python_literal("[1, 2]") == [1, 2] and python_literal("1e-5") == 1e-5
    assert python_literal("tensorwise") == "tensorwise"
    assert python_literal("{1, 2}") == "{1, 2}"           # sets are no config values
    assert python_literal("(" * 2000) == "(" * 2000       # long strings are not evaluated
    ov = parse_flag("fp8.enabled", "true", typing="python")
    assert ov.path == ("fp8", "enabled") and ov.value is True
    assert parse_flag("compile.enabled", None).value is True


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_an_override_or_an_override_error(text: str) -> None:
    try:
        parse_hydra(text)
    except OverrideError:
        pass


def _layered(yaml: str, path: str = "base.yaml") -> Layered:
    parsed = parse_yaml(yaml)
    cfg = Layered()
    cfg.merge(parsed.data, lambda p: f"{path}:{parsed.line_of(p)}")
    return cfg


def test_merge_and_overrides_keep_where_each_value_was_set() -> None:
    cfg = _layered("a:\n  b: 1\n  c: [1, 2]\n  d: {}\nx: 5\n")
    cfg.merge({"a": {"c": [3], "d": {}}}, lambda p: "child.yaml:9")
    cfg.apply(parse_hydra("a.b=2"), "run.sh:4")
    cfg.apply(parse_hydra("~x"), "run.sh:5")
    cfg.apply(parse_hydra("+n.m={k: 1}"), "run.sh:6")
    facts, prov = cfg.facts("config.t")
    assert facts == {"config.t.a.b": 2, "config.t.a.c": [3], "config.t.a.d": {},
                     "config.t.n.m.k": 1}
    assert prov["config.t.a.b"] == "run.sh:4" and prov["config.t.a.c"] == "child.yaml:9"
    assert prov["config.t.a.d"] == "base.yaml:4" and prov["config.t.n.m.k"] == "run.sh:6"


def test_override_marker_replaces_a_section() -> None:
    cfg = _layered("p:\n  a: 1\n  b: 2\n")
    cfg.merge({"p": {"_override_": True, "c": 3}}, lambda p: "child:1")
    assert cfg.facts("config.t")[0] == {"config.t.p.c": 3}


def test_defaults_chain_resolves_like_nemo_rl(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "base.yaml").write_text("p:\n  a: 1\n  b: ${p.a}\n  c: 0\n")
    (tmp_path / "mid.yaml").write_text("defaults: base.yaml\np:\n  a: 2\n")
    (tmp_path / "sub" / "top.yaml").write_text("defaults: [../mid.yaml]\np:\n  c: 3\n")
    top = tmp_path / "sub" / "top.yaml"
    chain = load_chain(str(top), parse_yaml(top.read_text()))
    chain.config.resolve()
    facts, prov = chain.config.facts("config.t")
    assert facts == {"config.t.p.a": 2, "config.t.p.b": 2, "config.t.p.c": 3}
    assert prov["config.t.p.a"].endswith("mid.yaml:3") and prov["config.t.p.c"].endswith(":3")
    assert [Path(f).name for f in chain.files] == ["mid.yaml", "base.yaml"]


def test_a_missing_or_cyclic_parent_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("defaults: b.yaml\nx: 1\n")
    b.write_text("defaults: [a.yaml, nowhere.yaml]\ny: 2\n")
    chain = load_chain(str(a), parse_yaml(a.read_text()))
    messages = " ".join(p.message for p in chain.problems)
    assert "cycle" in messages and "nowhere.yaml" in messages
    assert chain.config.facts("config.t")[0] == {"config.t.y": 2, "config.t.x": 1}


def test_a_parent_that_is_a_fifo_or_a_folder_is_named_for_what_it_is(tmp_path: Path) -> None:
    """Red team: ``defaults: fifo.yaml`` said the FIFO "does not exist here"; it is not read
    (never waited on) and the problem says what it is."""
    import os

    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "dir.yaml").mkdir()
    top = tmp_path / "top.yaml"
    top.write_text("defaults: [fifo.yaml, dir.yaml]\nx: 1\n")
    chain = load_chain(str(top), parse_yaml(top.read_text()))
    messages = " ".join(p.message for p in chain.problems)
    assert "does not exist" not in messages
    assert "FIFO" in messages and chain.config.facts("config.t")[0] == {"config.t.x": 1}
