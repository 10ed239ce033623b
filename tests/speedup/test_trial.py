"""The speed-up trial: refusal of absurd shapes before anything runs, the depth extrapolation,
the HF config reduction, and the whole path on the CPU with a tiny model (real torch, real
torchao emulation; no assertion on how fast anything was)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.cli import main
from preflight.speedup import ModelShape, trial
from preflight.speedup.shapes import model_shape
from preflight.speedup.trial_model import plain_config

TINY = ModelShape(hidden=64, ffn=128, heads=4, kv_heads=2, layers=6, vocab=256, seq=32,
                  micro_batch=2)
HAS_TORCHAO = importlib.util.find_spec("torchao") is not None


def _no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: object, **_k: object) -> dict[str, object]:
        raise AssertionError("a child was started for a refused shape")
    monkeypatch.setattr(trial, "_run_child", boom)


@pytest.mark.parametrize("change, what", [
    ({"hidden": 10 ** 12}, "hidden"), ({"heads": -4}, "heads"), ({"ffn": math.nan}, "ffn"),
    ({"seq": "4096"}, "seq"), ({"micro_batch": True}, "micro_batch"), ({"layers": None}, "layers"),
    ({"vocab": 0}, "vocab"), ({"heads": 5}, "divisible"), ({"kv_heads": 3}, "divisible"),
    ({"seq": 1 << 20, "micro_batch": 64}, "tokens"), ({"tp": 2}, "tensor parallel"),
])
def test_absurd_shapes_are_refused_before_any_child(monkeypatch: pytest.MonkeyPatch,
                                                     change: dict[str, object], what: str) -> None:
    _no_child(monkeypatch)
    shape = ModelShape(**{**TINY.__dict__, **change})
    report = trial.trial(shape, backend="torchao", recipe="tensorwise", compiled=False)
    assert report.speedup is None and report.bf16 is None
    assert report.why_not.startswith("refused before anything was allocated") and what in \
        report.why_not


def test_hidden_1e12_in_a_config_json_is_refused_and_nan_is_no_shape(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_child(monkeypatch)
    cfg = tmp_path / "config.json"
    base = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "vocab_size": 128256}
    cfg.write_text(json.dumps({**base, "hidden_size": 10 ** 12}))
    shape = model_shape({}, model_config=str(cfg), seq=4096, micro_batch=1)
    assert isinstance(shape, ModelShape)
    report = trial.trial(shape, backend="torchao", recipe="tensorwise", compiled=True)
    assert "hidden = 1000000000000 is outside" in report.why_not
    cfg.write_text(json.dumps(base).replace("4096", "NaN", 1))
    report = trial.trial(model_shape({}, model_config=str(cfg), seq=8, micro_batch=1),
                         backend="torchao", recipe="tensorwise", compiled=True)
    assert report.shape is None and "hidden_size" in report.why_not


@given(st.integers(1, 10 ** 6), st.integers(0, 10 ** 6), st.integers(1, 3),
       st.integers(1, 3), st.integers(1, 200))
def test_extrapolation_recovers_any_affine_step_time(base: int, per: int, d1: int, gap: int,
                                                     depth: int) -> None:
    d2 = d1 + gap
    points = {d1: base + per * d1, d2: base + per * d2}
    assert trial.extrapolate(points, depth) == pytest.approx(base + per * depth)


def test_depths_trained() -> None:
    assert trial.depths_for(32) == (4, 8) and trial.depths_for(8) == (4, 8)
    assert trial.depths_for(6) == (3, 6) and trial.depths_for(4) == (2, 4)
    assert trial.depths_for(3) == (1, 3) and trial.depths_for(2) == (2,)
    assert trial.depths_for(1) == (1,)
    # deepest first, (2, 4) where the deeper pair does not fit (the 1B case of gpu-results.md)
    assert trial.depth_options(16) == ((8, 16), (4, 8), (2, 4))   # full depth first
    assert trial.depth_options(12) == ((6, 12), (4, 8), (2, 4))
    assert trial.depth_options(17) == ((4, 8), (2, 4)) == trial.depth_options(32)
    assert trial.depth_options(8) == ((4, 8), (2, 4))
    assert trial.depth_options(6) == ((3, 6), (2, 4))
    assert trial.depth_options(4) == ((2, 4),) and trial.depth_options(1) == ((1,),)


def test_the_child_trains_the_deepest_pair_that_fits() -> None:
    from preflight.speedup import trial_child

    llama = ModelShape(hidden=4096, ffn=14336, heads=32, kv_heads=8, layers=32, vocab=128256,
                       seq=4096, micro_batch=2)
    options = [{"depths": list(o), "need_bytes": trial.need_bytes(llama, max(o))}
               for o in trial.depth_options(32)]
    deep, shallow = options
    assert trial_child.fits(options, 80 * 2**30) == [deep, shallow]      # an H100
    assert trial_child.fits(options, deep["need_bytes"] - 1) == [shallow]
    assert trial_child.fits(options, shallow["need_bytes"] - 1) == []


def test_memory_estimate_grows_with_depth_and_counts_states() -> None:
    llama = ModelShape(hidden=4096, ffn=14336, heads=32, kv_heads=8, layers=32, vocab=128256,
                       seq=4096, micro_batch=2)
    assert trial.params_at(llama, 32) == pytest.approx(8.03e9, rel=0.01)   # Llama-3-8B
    assert trial.need_bytes(llama, 4) > trial.need_bytes(llama, 2) > 8 * trial.params_at(llama, 2)


def test_hf_config_is_reduced_to_plain_values_cut_to_the_depth() -> None:
    cfg = {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 28,
           "layer_types": ["full_attention"] * 28, "max_window_layers": 28,
           "auto_map": {"AutoModelForCausalLM": "modeling_evil.Evil"}, "rope_theta": math.inf,
           "max_position_embeddings": 10 ** 12, "quantization_config": {"quant_method": "fp8"},
           "_private": 1, "huge": list(range(1000))}
    out = plain_config(cfg, 2, 4096)
    assert out["num_hidden_layers"] == 2 and out["max_position_embeddings"] == 4096
    assert out["max_window_layers"] == 28 and out["use_cache"] is False
    for gone in ("layer_types", "auto_map", "rope_theta", "quantization_config", "_private",
                 "huge"):
        assert gone not in out


@pytest.mark.skipif(not HAS_TORCHAO, reason="torchao is not installed")
def test_trial_on_the_cpu_trains_both_precisions_at_two_depths() -> None:
    report = trial.trial(TINY, backend="torchao", recipe="tensorwise", compiled=False,
                         device="cpu", warmup=1, steps=3, depths=(2, 4))
    assert report.child.get("status") == "ok", report.why_not
    assert report.depths == (2, 4) and report.child["depths"] == [2, 4]
    # FP8 in one child, BF16 in a fresh one that never loads the FP8 backend (trial._both)
    kids = report.child["children"]
    assert kids["fp8"]["backend_loaded"] is True and kids["bf16"]["backend_loaded"] is False
    runs = report.child["runs"]
    assert [(r["precision"], r["depth"]) for r in runs] == [
        ("bf16", 2), ("bf16", 4), ("fp8", 2), ("fp8", 4)]
    assert all(len(r["times_s"]) == 3 and r["median_s"] > 0 for r in runs)
    assert all(r["busy_pct"] == [] for r in runs)     # GPU busy % is sampled on a GPU only
    assert not any("busy only" in n for n in report.notes)
    # the generic decoder: qkv, out, fc1, fc2 per layer in FP8; the LM head stays BF16
    assert [r["fp8_linears"] for r in runs] == [0, 0, 8, 16]
    assert runs[1]["params"] > runs[0]["params"]
    assert report.bf16 is not None and set(report.bf16.measured) == {2, 4}
    assert any("emulated" in n for n in report.notes)
    assert any("extrapolated to 6 layers" in n for n in report.notes)
    # timing on a loaded CPU is noise: either a ratio with a verdict, or "inconclusive", said
    assert (report.speedup is not None and report.verdict) or \
        report.why_not.startswith("inconclusive")


def test_trial_child_past_its_timeout_is_a_reason() -> None:
    report = trial.trial(TINY, backend="torchao", recipe="tensorwise", compiled=False,
                         device="cpu", timeout=0.05)
    assert report.speedup is None and "timed out" in report.why_not


def test_te_has_no_cpu_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_child(monkeypatch)
    report = trial.trial(TINY, backend="te", recipe="delayed", compiled=False, device="cpu")
    assert "no CPU path" in report.why_not


# Two whole CLI trials (the CLI has no warmup/steps knobs): 100-128 s on the 2-core box under
# load, so pytest's 300 s per test is too close; the trial child's own limit is 900 s.
@pytest.mark.timeout(900)
@pytest.mark.skipif(not HAS_TORCHAO, reason="torchao is not installed")
def test_cli_trial_on_the_cpu(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"hidden_size": 64, "intermediate_size": 128,
                               "num_attention_heads": 4, "num_key_value_heads": 2,
                               "num_hidden_layers": 3, "vocab_size": 256}))
    out = tmp_path / "trial.json"
    code = main(["speedup", "--model-config", str(cfg), "--seq", "16", "--micro-batch", "1",
                 "--device", "cpu", "--no-compile", "--format", "json", "-o", str(out)])
    doc = json.loads(out.read_text())
    assert doc["mode"] == "trial" and doc["depths"] == [1, 3] and doc["compiled"] is False
    assert {r["precision"] for r in doc["runs"]} == {"bf16", "fp8"}
    assert code == (1 if doc["step_speedup"] is not None and doc["step_speedup"] < 1.05 else 0)
    text_out = tmp_path / "trial.txt"
    main(["speedup", "--model-config", str(cfg), "--seq", "16", "--micro-batch", "1",
          "--device", "cpu", "--no-compile", "-o", str(text_out)])
    text = text_out.read_text()
    assert "measured: a short training trial" in text and "depth" in text


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None or not HAS_TORCHAO,
                    reason="transformers or torchao is not installed")
def test_trial_builds_the_frameworks_own_class_from_the_hf_config() -> None:
    hf = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
          "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 6,
          "vocab_size": 256, "auto_map": {"AutoModelForCausalLM": "evil.Model"}}
    shape = ModelShape(**{**TINY.__dict__, "model_type": "llama", "hf_config": hf})
    report = trial.trial(shape, backend="torchao", recipe="rowwise", compiled=False,
                         device="cpu", warmup=1, steps=2)
    assert report.child.get("status") == "ok", report.why_not
    assert all("LlamaForCausalLM" in r["model"] for r in report.child["runs"])
    # q, k, v, o, gate, up, down per layer; lm_head stays BF16
    assert [r["fp8_linears"] for r in report.child["runs"]] == [0, 0, 14, 28]


def test_the_notes_say_whether_the_full_depth_was_trained_or_extrapolated() -> None:
    def side(times: dict[int, float]) -> trial.Side:
        return trial.Side(max(times.values()), 1.0, None, times, {d: None for d in times})

    sixteen = ModelShape(hidden=2048, ffn=8192, heads=32, kv_heads=8, layers=16, vocab=128256,
                         seq=4096, micro_batch=2)
    full = trial._notes(sixteen, (8, 16), side({8: 0.1, 16: 0.18}), side({8: 0.09, 16: 0.16}), {})
    assert any("full depth (16 layers)" in n for n in full)
    assert not any("extrapolated to" in n for n in full)
    part = trial._notes(sixteen, (4, 8), side({4: 0.07, 8: 0.1}), side({4: 0.06, 8: 0.09}), {})
    assert any("extrapolated to 16 layers" in n for n in part)
    assert not any("full depth" in n for n in part)
