"""``fp8-doctor speedup`` against a hostile job (issue 21, redteam5): absurd shapes in the job's
model config are refused with a finding before any child starts on both paths (``--quick`` too,
not only the trial), a trial on the CPU is refused when its memory floor cannot fit the machine
(the GPU path caps the child's allocator; the CPU path had no bound: a shape inside
:data:`~preflight.speedup.trial.LIMITS` asked the allocator for 2 TB), the HF config the trial
builds its model from cannot size the model past the shape that was checked (``head_dim``), and
the trial's report is redacted and escaped like every other output."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.cli import main
from preflight.speedup import ModelShape, trial
from preflight.speedup.run import speedup
from preflight.speedup.shapes import model_shape

TINY = ModelShape(hidden=64, ffn=128, heads=4, kv_heads=2, layers=6, vocab=256, seq=32,
                  micro_batch=2)
# inside every bound of trial.LIMITS, yet its parameters alone are ~2 TB in BF16 + AdamW
HUGE_BUT_IN_LIMITS = ModelShape(hidden=1 << 17, ffn=1 << 19, heads=1024, kv_heads=1024,
                                layers=4096, vocab=1 << 22, seq=1024, micro_batch=1)


def _no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.base import proc

    def boom(*_a: object, **_k: object) -> object:
        raise AssertionError("a child was started for a refused shape")
    monkeypatch.setattr(proc, "run", boom)
    monkeypatch.setattr(trial, "_run_child", boom)


@pytest.mark.parametrize("change", [
    {"hidden": 10 ** 12}, {"layers": 10 ** 9}, {"vocab": 10 ** 12}, {"ffn": 1 << 39},
    {"seq": 1 << 30}, {"heads": 10 ** 6},
])
def test_quick_refuses_absurd_shapes_before_any_child(monkeypatch: pytest.MonkeyPatch,
                                                     change: dict[str, int]) -> None:
    """--quick sent hidden 1e12 (and 1e9 layers) to the timing child, which sizes
    ``torch.randn(tokens, d_in)`` on the GPU from it."""
    _no_child(monkeypatch)
    shape = ModelShape(**{**TINY.__dict__, **change})
    report = speedup({}, shape, device="cpu")
    assert report.prediction is None
    assert "refused" in report.why_not, report.why_not


@pytest.mark.parametrize("doc", [
    {"hidden_size": 10 ** 12}, {"num_hidden_layers": 10 ** 9}, {"vocab_size": 10 ** 12},
])
def test_a_config_json_of_absurd_sizes_never_reaches_the_quick_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict[str, int]) -> None:
    _no_child(monkeypatch)
    cfg = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
           "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 256, **doc}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    shape = model_shape({}, model_config=str(path), seq=32, micro_batch=1)
    report = speedup({}, shape, device="cpu")
    assert report.prediction is None and "refused" in report.why_not, report.why_not


_CPU_TRIAL = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))   # a safety net for the old code
from preflight.speedup import ModelShape, trial
shape = ModelShape(**json.loads(sys.argv[1]))
r = trial.trial(shape, backend="torchao", recipe="tensorwise", compiled=False, device="cpu",
                timeout=120)
print(json.dumps({"why_not": r.why_not}))
"""


def _cpu_trial(shape: ModelShape, hf: dict[str, object] | None = None) -> str:
    doc = {k: v for k, v in shape.__dict__.items() if k not in ("source", "hf_config")}
    code = _CPU_TRIAL if hf is None else _CPU_TRIAL.replace(
        "ModelShape(**json.loads(sys.argv[1]))",
        f"ModelShape(**json.loads(sys.argv[1]), hf_config={hf!r})")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(doc)], capture_output=True,
                         text=True, timeout=300, check=False)
    return str(json.loads(out.stdout.strip().splitlines()[-1])["why_not"])


def test_a_cpu_trial_that_cannot_fit_in_memory_is_refused_before_allocating() -> None:
    """The CPU trial had no memory bound at all (the GPU path caps the child's allocator at
    MEM_FRACTION of the free memory): a shape inside LIMITS made the child ask for 2 TB; one of
    30 GB on a 24 GB machine would be granted by overcommit and paged in until the OOM killer."""
    why = _cpu_trial(HUGE_BUT_IN_LIMITS)
    assert why.startswith("refused before anything was allocated"), why


def test_the_hf_config_cannot_size_the_model_past_the_checked_shape() -> None:
    """The trial builds transformers' class from the job's config.json, whose ``head_dim``
    (Llama, Qwen3, Gemma read it) sizes q/k/v/o: 1e9 passed refuse() and need_bytes, which
    assume hidden / heads."""
    hf = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
          "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 6,
          "vocab_size": 256, "head_dim": 10 ** 9}
    why = _cpu_trial(TINY, hf)
    assert why.startswith("refused before anything was allocated"), why


def test_the_trial_report_is_redacted_and_escaped(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``--quick`` went through finish_output (redaction, control characters); the trial wrote
    its text raw: the home directory and a name's escape sequences reached the terminal."""
    home = tmp_path / "home"
    (home / "m").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    cfg = home / "m" / "conf\x1b]0;owned\x07.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 10 ** 12,
                               "intermediate_size": 128, "num_attention_heads": 4,
                               "num_hidden_layers": 2, "vocab_size": 256}))
    from preflight.redact import default_redactor

    default_redactor.cache_clear()      # cached per process: built again with this home
    try:
        for fmt in ("json", "text", "markdown"):
            code = main(["speedup", "--model-config", str(cfg), "--seq", "32", "--micro-batch",
                         "1", "--device", "cpu", "-q", "--format", fmt])
            out = capsys.readouterr().out
            assert code in (0, 1)
            assert str(home) not in out, fmt
            assert "\x1b" not in out and "\x07" not in out, fmt
    finally:
        default_redactor.cache_clear()


def test_quick_json_keeps_the_gemm_pass_names(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    """Redaction took the GEMM table's ``pass`` key for a password: every row of --quick's JSON
    said ``"pass": "[REDACTED]"`` instead of fwd / dgrad / wgrad. The key is ``gemm`` now (a key
    named ``pass`` in a job's config stays masked: redact/tokens.py)."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 64,
                               "intermediate_size": 128, "num_attention_heads": 4,
                               "num_hidden_layers": 2, "vocab_size": 256}))
    main(["speedup", "--quick", "--model-config", str(cfg), "--seq", "32", "--micro-batch", "1",
          "-q", "--format", "json", "--timeout", "120"])
    doc = json.loads(capsys.readouterr().out)
    assert {g["gemm"] for g in doc["gemms"]} == {"fwd", "dgrad", "wgrad"}


def test_nan_strings_lists_and_negatives_are_no_shape(tmp_path: Path) -> None:
    for bad in (math.nan, "4096", [[4096]], -4096, 0, 1e12, True):
        path = tmp_path / "config.json"
        path.write_text(json.dumps({"hidden_size": bad, "intermediate_size": 128,
                                    "num_attention_heads": 4, "num_hidden_layers": 2}))
        got = model_shape({}, model_config=str(path), seq=32, micro_batch=1)
        assert not isinstance(got, ModelShape), bad

