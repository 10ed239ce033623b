"""frameworks/rollout_apart.py: a rollout whose servers are launched apart from the files given
keeps the precision of the weights it serves (the engines' default: no quantization), says so
in its provenance, and passes an Unknown on unchanged."""

from __future__ import annotations

import pytest

from preflight.facts import Unknown
from preflight.frameworks import rollout_apart


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
