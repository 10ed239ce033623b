"""The typed intent hand-over (issue 25 item 5): a framework states intent through IntentOut and
hands over a frozen Derived; a misspelt name is refused by mypy and at run time, and the names a
framework may state are exactly the registry's intent names that intent.py does not compute."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.frameworks import FRAMEWORKS
from preflight.frameworks._derived import (
    COMPUTED,
    INTERNAL,
    NAMES,
    Derived,
    IntentOut,
    Stated,
)
from preflight.registry.intent import SPECS as INTENT_SPECS

ROOT = Path(__file__).resolve().parents[2]
REGISTERED = {s.name.removeprefix("intent.") for s in INTENT_SPECS}


def test_stated_names_are_the_registry_less_what_intent_computes() -> None:
    stated = set(get_args(Stated))
    assert stated <= REGISTERED, stated - REGISTERED
    assert COMPUTED <= REGISTERED, COMPUTED - REGISTERED
    assert stated | COMPUTED == REGISTERED, REGISTERED - stated - COMPUTED
    assert not stated & COMPUTED
    # internal GEMM inputs are never facts
    assert not INTERNAL & REGISTERED
    assert set(intent.NAMES) == REGISTERED


@pytest.mark.parametrize("name", ["fp9", "default.compile", "overrides_fp8", "runs_on",
                                  "intent.fp8", "stack", "shapes.gemms"])
def test_a_name_no_framework_may_state_is_refused_at_run_time(name: str) -> None:
    out = IntentOut()
    with pytest.raises(ValueError, match="not an intent name"):
        out[name] = (True, "x.yaml:1")   # type: ignore[index]
    with pytest.raises(ValueError, match="not an intent name"):
        out.default(name, (True, "x.yaml:1"))   # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        out.overrides_fp9 = (True, "x.yaml:1")   # type: ignore[attr-defined]


def test_the_builder_hands_over_a_frozen_record() -> None:
    out = IntentOut()
    out["fp8"] = (True, "a.yaml:3")
    out["shapes.tp"] = (2, "a.yaml:4")
    out.default("compile", (False, "default"))
    out.overrides_fp8 = (Unknown("bf16 set under a condition"), "t.py:9")
    out.runs_on = ("deepspeed",)
    derived = out.build()
    assert derived.values == {"fp8": (True, "a.yaml:3"), "shapes.tp": (2, "a.yaml:4")}
    assert derived.defaults == {"compile": (False, "default")}
    assert derived.runs_on == ("deepspeed",) and derived.survives_override is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        derived.runs_on = ()   # type: ignore[misc]
    with pytest.raises(TypeError):
        derived.values["fp8"] = (False, "b.yaml:1")   # type: ignore[index]
    out["fp8"] = (False, "later")        # the builder goes on; what it handed over does not
    out.discard("shapes.tp")
    assert derived.values["fp8"] == (True, "a.yaml:3") and "shapes.tp" in derived.values


def test_every_framework_hands_over_a_derived_record() -> None:
    facts: dict[str, Any] = {"config.kinds": [f.kind for f in FRAMEWORKS]}
    for f in FRAMEWORKS:
        derived = f.derive(facts, {})
        assert isinstance(derived, Derived), f.kind
        assert set(derived.values) <= NAMES and set(derived.defaults) <= NAMES, f.kind
    values, _ = intent.derive(Facts(facts, {}))
    assert "intent.fp8" in values and set(values) <= {f"intent.{n}" for n in intent.NAMES}


def test_the_hf_default_counts_only_where_no_framework_states_the_value() -> None:
    hf = {"config.kinds": ["hf_trainer"], "config.hf_trainer.output_dir": "out"}
    assert intent.derive(Facts(hf, {}))[0]["intent.compile"] is False
    both = {**hf, "config.kinds": ["hf_trainer", "accelerate"],
            "config.accelerate.dynamo_config.dynamo_backend": "INDUCTOR"}
    values, prov = intent.derive(Facts(both, {"config.accelerate.dynamo_config.dynamo_backend":
                                              "acc.yaml:7"}))
    assert values["intent.compile"] is True and prov["intent.compile"] == "acc.yaml:7"


def test_mypy_refuses_a_misspelt_intent_name(tmp_path: Path) -> None:
    snippet = tmp_path / "misspelt.py"
    snippet.write_text(
        "from preflight.frameworks._derived import IntentOut\n"
        "out = IntentOut()\n"
        "out['fp8'] = (True, 'a.yaml:1')\n"
        "out['pf8'] = (True, 'a.yaml:1')\n"
        "out.default('compille', (False, 'default'))\n"
        "out.overides_fp8 = (True, 'a.yaml:2')\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "mypy", "--config-file",
                          str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
                          str(snippet)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         check=False)
    errors = [line for line in res.stdout.splitlines() if ": error:" in line]
    assert res.returncode == 1, res.stdout + res.stderr
    lines = sorted(int(e.split(":")[1]) for e in errors)
    assert lines == [4, 5, 6], res.stdout
    assert "[index]" in errors[0] and "[arg-type]" in errors[1] and "[attr-defined]" in errors[2]
