"""The host margin (speedup/hostmargin.py): the narrow twin of the trial's model, the margin
logic over run documents, the note and error it leads to, and the twin trained for real by the
trial child on the CPU (real torch; no assertion on how fast anything was)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from preflight.speedup import HOST_BOUND_ERROR, TRIAL_ERROR, ModelShape, hostmargin, trial

HAS_TORCHAO = importlib.util.find_spec("torchao") is not None
HAS_HF = importlib.util.find_spec("transformers") is not None
SPEC = {"hidden": 2048, "ffn": 8192, "heads": 32, "kv_heads": 8, "layers": 16, "vocab": 128256,
        "seq": 4096, "micro_batch": 2, "gated": True, "tied": True}


def _run(precision: str, depth: int, step: float, twin: float | None = None,
         busy: list[int] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"precision": precision, "depth": depth, "median_s": step,
                           "busy_pct": busy or []}
    if twin is not None:
        doc["twin_s"] = twin
    return doc


def test_the_twin_cuts_every_width_and_keeps_what_decides_the_kernels() -> None:
    twin = hostmargin.twin_spec(SPEC)
    assert (twin["hidden"], twin["heads"], twin["ffn"], twin["vocab"], twin["seq"]) == \
        (256, 4, 512, 2048, 128)
    assert twin["kv_heads"] == 2                      # grouped-query stays grouped
    assert (twin["layers"], twin["gated"], twin["tied"]) == (16, True, True)
    assert hostmargin.twin_spec({**SPEC, "kv_heads": 32})["kv_heads"] == 4   # plain MHA stays so
    assert hostmargin.twin_spec({**SPEC, "micro_batch": 512})["micro_batch"] == 8
    assert SPEC["hidden"] == 2048                     # the request's spec is not changed


def test_the_twin_of_an_hf_config_cuts_its_widths_and_head_dim_only_where_named() -> None:
    hf = {"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
          "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
          "vocab_size": 151936, "num_hidden_layers": 36, "rope_theta": 1e6}
    cut = hostmargin.twin_spec({**SPEC, "hf_config": hf})["hf_config"]
    assert (cut["hidden_size"], cut["intermediate_size"], cut["num_attention_heads"],
            cut["num_key_value_heads"], cut["head_dim"], cut["vocab_size"]) == \
        (256, 512, 4, 2, 64, 2048)
    assert cut["rope_theta"] == 1e6 and cut["num_hidden_layers"] == 36 and hf["head_dim"] == 128
    no_hd = hostmargin.twin_spec({**SPEC, "hf_config": {"model_type": "llama"}})["hf_config"]
    assert "head_dim" not in no_hd


# The 1B TE eager cell on an H100 (2026-11-28): the FP8 step 184 ms at 16 layers with the GPU busy;
# a twin of 160 ms (illustrative) leaves a margin of 1.15x; BF16's 190 ms over a 70 ms twin: 2.7x.
def test_a_tight_margin_widens_the_error_and_says_why() -> None:
    runs = [_run("bf16", 8, 0.115), _run("bf16", 16, 0.190, 0.070),
            _run("fp8", 8, 0.109), _run("fp8", 16, 0.184, 0.160)]
    m = hostmargin.tight(runs)
    assert m is not None and (m.precision, m.depth) == ("fp8", 16)
    assert m.ratio == pytest.approx(1.15, abs=0.01)
    assert hostmargin.limited(runs)
    notes = hostmargin.notes(runs, HOST_BOUND_ERROR)
    assert notes[0].startswith("the host needs 160 ms to issue the FP8 step's kernels at 16")
    assert "87% of the 184 ms step" in notes[0] and "+-15%" in notes[0]
    assert notes[1] == ("host margin (step time / the host's time to issue it): BF16 2.71x, "
                        "FP8 1.15x (under 2.00x the host may limit the step)")
    assert hostmargin.why(runs) == "a host-sensitive step's"


# The GPU-limited Llama-3-8B TE delayed cell at 8 layers (H200, 2026-11-28): FP8 198 ms over a
# 54 ms twin (3.69x), BF16 251 ms over 23 ms.
def test_room_on_the_host_keeps_the_trials_error() -> None:
    runs = [_run("bf16", 8, 0.2506, 0.0234), _run("fp8", 8, 0.1983, 0.0537)]
    assert hostmargin.tight(runs) is None and not hostmargin.limited(runs)
    notes = hostmargin.notes(runs, TRIAL_ERROR)
    assert len(notes) == 1 and notes[0].startswith("host margin") and "FP8 3.69x" in notes[0]
    # exactly at the threshold: room enough
    at = hostmargin.HOST_MARGIN
    assert hostmargin.tight([_run("fp8", 4, at, 1.0)]) is None
    assert hostmargin.tight([_run("fp8", 4, at - 1e-4, 1.0)]) is not None


def test_the_gpu_idling_comes_first_and_names_the_fp8_step() -> None:
    runs = [_run("fp8", 16, 0.195, 0.180, busy=[60, 70, 80]), _run("bf16", 16, 0.19, 0.07)]
    notes = hostmargin.notes(runs, HOST_BOUND_ERROR)
    assert notes[0].startswith("the GPU was busy only 70% of the FP8 step at 16 layers")
    assert not any(n.startswith("the host needs") for n in notes)
    assert hostmargin.why(runs) == "a host-limited FP8 step's"


@pytest.mark.parametrize("twin", [None, 0, -1.0, "0.1", float("nan")])
def test_a_twin_that_was_not_timed_gives_no_margin(twin: Any) -> None:
    runs = [{"precision": "fp8", "depth": 16, "median_s": 0.18, "twin_s": twin}]
    assert hostmargin.margins(runs) == [] and not hostmargin.limited(runs)
    assert hostmargin.margins([{"precision": "fp8", "depth": 16, "twin_error": "x"}]) == []


def test_the_deepest_timed_twin_counts() -> None:
    runs = [_run("fp8", 8, 0.11, 0.105), _run("fp8", 16, 0.18, 0.09)]
    assert [m.depth for m in hostmargin.margins(runs)] == [16]


def test_a_twin_that_fails_is_a_reason_not_a_failure() -> None:
    def boom(*_a: object) -> dict[str, Any]:
        raise RuntimeError("no FP8 kernel for this shape")
    out = hostmargin.time_twin(boom, None, {"spec": dict(SPEC)}, 16, "fp8")
    assert out == {"twin_error": "RuntimeError: no FP8 kernel for this shape"}


# Two trials, four torch children: 82 s for the plain one alone with 8 other jobs on the 2 cores
# (load 14), past pytest's 300 s for both; the trial child's own limit is 900 s (test_trial.py)
@pytest.mark.timeout(900)
@pytest.mark.skipif(not HAS_TORCHAO, reason="torchao is not installed")
def test_the_trial_child_times_the_twin_for_real_on_the_cpu() -> None:
    tiny = ModelShape(hidden=64, ffn=128, heads=4, kv_heads=2, layers=6, vocab=256, seq=32,
                      micro_batch=2)
    report = trial.trial(tiny, backend="torchao", recipe="tensorwise", compiled=False,
                         device="cpu", warmup=1, steps=2, depths=(2, 4), host_twin=True)
    assert report.child.get("status") == "ok", report.why_not
    runs = report.child["runs"]
    timed = [(r["precision"], r["depth"]) for r in runs if r.get("twin_s")]
    assert timed == [("bf16", 4), ("fp8", 4)]          # the deepest depth of each precision
    assert all(r["twin_s"] > 0 for r in runs if "twin_s" in r)
    assert any(n.startswith("host margin") for n in report.notes)
    if report.speedup is not None:   # timing noise may make it "inconclusive"; said either way
        assert report.error == (HOST_BOUND_ERROR if hostmargin.limited(runs) else TRIAL_ERROR)
    # off by default on the CPU, and for a compiled job on the GPU (the request says so)
    plain = trial.trial(tiny, backend="torchao", recipe="tensorwise", compiled=False,
                        device="cpu", warmup=1, steps=2, depths=(2, 4))
    assert not any("twin_s" in r for r in plain.child.get("runs", []))


@pytest.mark.skipif(not HAS_HF, reason="transformers is not installed")
def test_the_twin_of_an_hf_model_is_the_same_class_narrow() -> None:
    import torch

    from preflight.speedup import trial_model

    hf = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
          "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16,
          "vocab_size": 128256, "tie_word_embeddings": True}
    model, built = trial_model.build(torch, hostmargin.twin_spec({**SPEC, "hf_config": hf}), 2,
                                     "cpu")
    assert "LlamaForCausalLM" in built
    cfg = model.config
    assert (cfg.hidden_size, cfg.intermediate_size, cfg.num_attention_heads,
            cfg.num_key_value_heads, cfg.vocab_size, cfg.num_hidden_layers) == \
        (256, 512, 4, 2, 2048, 2)
