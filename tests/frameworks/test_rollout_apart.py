"""frameworks/rollout_apart.py: a rollout whose servers are launched apart from the files given
keeps the precision of the weights it serves (the engines' default: no quantization), says so
in its provenance, and passes an Unknown on unchanged."""

from __future__ import annotations

import pytest

from preflight.facts import Unknown
from preflight.frameworks import rollout_apart
from preflight.frameworks._derived import IntentOut


@pytest.mark.parametrize("held", [True, False])
def test_the_weights_decide_and_the_provenance_says_why(held: bool) -> None:
    fp8, src = rollout_apart.served(held, "job/run.sh:3", "vllm")
    assert fp8 is held
    assert src.startswith("job/run.sh:3 (") and "vllm/engine/arg_utils.py" in src
    assert "sglang" not in src


def test_an_engine_not_named_cites_both() -> None:
    _, src = rollout_apart.served(False, "a.toml:9", "any")
    assert "server_args.py" in src and "arg_utils.py" in src


def test_unknown_weights_stay_unknown() -> None:
    why = Unknown("outside the job")
    assert rollout_apart.served(why, "a.toml:1", "sglang") == (why, "a.toml:1")


@pytest.mark.parametrize("held", ["fp8", None, 1])
def test_anything_else_is_unknown(held: object) -> None:
    fp8, src = rollout_apart.served(held, "a.toml:1", "vllm")
    assert isinstance(fp8, Unknown) and src == "a.toml:1"


def test_kv_cache_is_the_engines_auto() -> None:
    value, src = rollout_apart.kv_cache("sglang", "a.toml:2")
    assert value is False and "server_args.py" in src


def _out(engine: object = "vllm") -> IntentOut:
    out = IntentOut()
    out["rollout.engine"] = (engine, "t.toml:2")
    out["rollout.kv_cache_fp8"] = (False, "t.toml:2")
    return out


def test_put_states_no_precision_over_bf16_weights() -> None:
    """fwrl10: the servers' own launch (not given) may quantize; no confident "no"."""
    out = _out()
    rollout_apart.put(out, False, "t.toml:3", "vllm")
    assert "rollout.fp8" not in out and "rollout.kv_cache_fp8" not in out
    assert "launched apart" in out["rollout.engine"][1]


@pytest.mark.parametrize("held", [True, Unknown("outside the job"), "float8?"])
def test_put_states_fp8_or_unknown_weights(held: object) -> None:
    out = _out(Unknown("SGLang or vLLM"))
    rollout_apart.put(out, held, "t.toml:3", "any")
    fp8 = out["rollout.fp8"][0]
    assert fp8 is True if held is True else isinstance(fp8, Unknown)
    assert "rollout.kv_cache_fp8" not in out


@pytest.mark.parametrize("held, path, want", [
    (True, "/m/Qwen3-8B", True), (False, "/m/Qwen3-8B-FP8", False),
    (Unknown("x"), "/m/Qwen3-8B-FP8", True), (None, "/m/Qwen3-8B", False),
    (None, "/m/step_900", None), (None, Unknown("a variable"), None), (None, "x" * 5000, None),
])
def test_by_weights(held: object, path: object, want: object) -> None:
    assert rollout_apart.by_weights(held, path) is want


@pytest.mark.parametrize("kv, want", [
    (None, False), ("auto", False), ("", False), ("fp8", True), ("FP8_E5M2", True),
    ("bfloat16", False), (3, False),
])
def test_kv_fp8(kv: object, want: bool) -> None:
    assert rollout_apart.kv_fp8(kv) is want


def test_kv_fp8_keeps_an_unknown() -> None:
    why = Unknown("$KV is set at run time")
    assert rollout_apart.kv_fp8(why) is why
