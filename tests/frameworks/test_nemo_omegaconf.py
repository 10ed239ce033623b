"""OmegaConf's oc.env / oc.decode / references as frameworks/nemo_omegaconf.py evaluates them
(omry/omegaconf v2.3.0 omegaconf/resolvers/oc/__init__.py: oc.env gives text, str(default) or
None; oc.decode reads one grammar element)."""

from __future__ import annotations

from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.frameworks.nemo_omegaconf import MAX_STEPS, EnvText, primitive, resolve_env
from preflight.reading.shellvars import runtime

ENV = {"FP8": ("True", "run.sh:2"), "HIST": ("4", "run.sh:3"), "ALGO": ("max", "run.sh:4"),
       "LATE": (runtime("set from $1"), "run.sh:5")}


def _one(value: str, env: Any = ENV, **more: Any) -> Any:
    return resolve_env({"k": value, **more}, env)["k"]


@pytest.mark.parametrize(("text", "want"), [
    ("True", True), ("false", False), ("FALSE", False), ("null", None), ("4", 4), ("-1_000", -1000),
    ("0.0004", 0.0004), ("1e-8", 1e-8), ("bf16-mixed", "bf16-mixed"), ("'x,y'", "x,y"),
])
def test_primitive(text: str, want: Any) -> None:
    got = primitive(text)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(("value", "want"), [
    ("${oc.decode:${oc.env:FP8,False}}", True),
    ("${oc.decode:${oc.env:NOPE,False}}", False),
    ("${oc.decode:${oc.env:HIST,128}}", 4),
    ("${oc.env:ALGO,most_recent}", "max"),
    ("${oc.env:NOPE,most_recent}", "most_recent"),
    ("${oc.env:NOPE,null}", None),
    ("${oc.decode:${oc.env:NOPE,null}}", None),
    ("${oc.env:NOPE,8}", "8"),             # str(default): text, not an int
    ("h${oc.env:HIST}x", "h4x"),
    ("\\${oc.env:FP8}", "${oc.env:FP8}"),
    ("${oc.decode:'${oc.env:HIST}'}", 4),   # the quoted text "4", decoded
])
def test_resolved(value: str, want: Any) -> None:
    got = _one(value)
    assert got == want and type(got) in (type(want), EnvText)


@pytest.mark.parametrize("value", [
    "${oc.env:NOPE}",                       # unset, no default: OmegaConf raises
    "${oc.env:LATE,False}",                 # set at run time
    "${oc.decode:${oc.env:FP8}",            # unclosed
    "${multiply:2,3}",                      # a resolver the app registers
    "${nope.key}",                          # not a key
    "${oc.decode:1}",                       # oc.decode of an int: TypeError
    "${${oc.env:FP8}}",                     # an interpolated key name
])
def test_unknown(value: str) -> None:
    assert isinstance(_one(value), Unknown)


def test_sourced_or_no_launch() -> None:
    sourced = {"*": (runtime("a sourced file's exports"), "run.sh:1")}
    assert isinstance(_one("${oc.env:FP8,False}", sourced), Unknown)
    assert isinstance(_one("${oc.env:FP8,False}", None), Unknown)


def test_references_and_cycles() -> None:
    data = {"a": {"x": "${oc.decode:${oc.env:HIST}}", "y": "${.x}", "z": "${a.w}",
                  "w": "${a.z}"}, "b": "${a.y}"}
    out = resolve_env(data, ENV)
    assert out["a"]["y"] == 4 and out["b"] == 4
    assert isinstance(out["a"]["z"], Unknown) and isinstance(out["a"]["w"], Unknown)


def test_bounded() -> None:
    # a chain of references each used many times: the work stops at MAX_STEPS, Unknown
    data = {f"k{i}": "${k%d}${k%d}" % (i + 1, i + 1) for i in range(60)}
    data["k60"] = "${oc.env:HIST}"
    out = resolve_env(data, ENV)
    assert out["k59"] == "44"
    deep = "${oc.decode:" * 100 + "1" + "}" * 100
    assert isinstance(_one(deep), Unknown)
    assert MAX_STEPS > 0
