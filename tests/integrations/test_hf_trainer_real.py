"""The HF callback inside a real (tiny, CPU) transformers Trainer run (issue 22 / 24 item 7).

transformers is not in the test extras (a large install for CI); these tests skip where it is
absent, and the expectation logic is tested with fakes of our own interfaces in
test_callbacks.py.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")


def _trainer(tmp_path: Path, **args: Any) -> Any:
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=2, max_position_embeddings=32)
    model = transformers.LlamaForCausalLM(config)
    data = [{"input_ids": torch.arange(8), "labels": torch.arange(8)} for _ in range(4)]
    training = transformers.TrainingArguments(
        output_dir=str(tmp_path), use_cpu=True, max_steps=1, per_device_train_batch_size=2,
        report_to=[], save_strategy="no", logging_strategy="no", **args)
    return transformers.Trainer(model=model, args=training, train_dataset=data)


def test_bf16_over_the_launchers_fp8_is_reported_with_a_fix_naming_bf16(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.integrations.hf import FP8DoctorCallback

    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp8")   # accelerate launch ... fp8
    trainer = _trainer(tmp_path, bf16=True)
    callback = FP8DoctorCallback.attach(trainer, on_failure="warn")
    assert callback.accelerator is trainer.accelerator
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    ids = [f.rule_id for f in callback.report.findings]
    assert "FP8D-RT-0020" in ids and "FP8D-RT-0001" not in ids
    finding = next(f for f in callback.report.findings if f.rule_id == "FP8D-RT-0020")
    assert "TrainingArguments(bf16=True)" in finding.message
    assert "bf16=True" in finding.fix.text
    text = "\n".join(str(w.message) for w in caught if "fp8-doctor" in str(w.message))
    assert "FP8D-RT-0020" in text and "this exception" not in text


def test_a_plain_bf16_run_is_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.integrations.hf import FP8DoctorCallback

    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)
    trainer = _trainer(tmp_path, bf16=True)
    callback = FP8DoctorCallback.attach(trainer)
    trainer.train()
    assert callback.report.ok() and callback.report.facts["runtime.expect_fp8"] is False
