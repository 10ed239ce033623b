"""Tests for preflight.facts: registry templates, Facts layering, value encoding."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.facts import Facts, Unknown, decode_value, encode_value
from preflight.registry import FactSpec, Registry, registry


def test_templates_match_exactly_one_or_more_segments() -> None:
    reg = Registry((FactSpec("pkg.<dist>.version", "version", ""),
                    FactSpec("config.<kind>.<path...>", "any", ""),
                    FactSpec("gpu.count", "int", "")))
    assert reg.lookup("pkg.torch.version").name == "pkg.<dist>.version"
    assert reg.lookup("pkg.torch.extra.version") is None          # <dist> is one segment
    assert reg.lookup("config.accelerate.fp8_config.backend").name == "config.<kind>.<path...>"
    assert reg.lookup("config.accelerate") is None                 # <path...> needs >= 1 segment
    assert reg.lookup("gpu.count").type == "int"
    assert reg.lookup("gpu.counts") is None


def test_exact_name_registered_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        Registry((FactSpec("a.b", "int", ""), FactSpec("a.b", "str", "")))


def test_bundled_registry_has_every_namespace() -> None:
    names = {s.name.split(".")[0] for s in registry().specs()}
    assert {"host", "gpu", "cuda", "pkg", "import", "env", "config", "intent", "smoke",
            "runtime", "cluster"} <= names
    for spec in registry().specs():
        assert spec.doc, f"{spec.name} has no doc"


def test_merged_layers_and_provenance() -> None:
    base = Facts({"a": 1, "b": 2}, {"a": "probe", "b": "probe"})
    top = base.merged({"b": 3, "c": Unknown("x")}, {"b": "/f.yaml:3"}, source="config")
    assert dict(top) == {"a": 1, "b": 3, "c": Unknown("x")}
    assert top.source("a") == "probe"
    assert top.source("b") == "/f.yaml:3"
    assert top.source("c") == "config"
    assert dict(base) == {"a": 1, "b": 2}  # immutable: the original is untouched


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=10,
)


@given(st.one_of(json_values, st.builds(Unknown, st.text(max_size=30))))
def test_encode_decode_round_trip(value: object) -> None:
    if isinstance(value, dict) and set(value) == {"$unknown"}:
        return  # the one reserved shape
    assert decode_value(json.loads(json.dumps(encode_value(value)))) == value


