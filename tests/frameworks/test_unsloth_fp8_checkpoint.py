"""An FP8 (FineGrainedFP8) Hub checkpoint loaded by unsloth into an HF Trainer (transformers
issue 37927: unsloth/Qwen3-4B-FP8 + TRL SFTTrainer): ``config.unsloth.checkpoint_quant_method``
for the Qwen3 FP8 checkpoints unsloth's mapper lists, and FP8D-HF-0003 before unsloth's
PR 3496 made that quantizer trainable."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.jobs.read import read_paths

SCRIPT = """from unsloth import FastLanguageModel
from trl import SFTTrainer
from transformers import TrainingArguments

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "{name}",
    max_seq_length = 2048,
    load_in_4bit = {four},
)
model = FastLanguageModel.get_peft_model(model, r = 16)
trainer = SFTTrainer(model = model, tokenizer = tokenizer,
                     args = TrainingArguments(bf16 = True, output_dir = "out"))
trainer.train()
"""
ASSUME = {"gpu": "H100", "pkg.torch": "2.6.0", "pkg.transformers": "4.51.3", "pkg.trl": "0.17.0",
          "pkg.accelerate": "1.6.0", "pkg.unsloth": "2025.4.7"}


def _ids(tmp_path: Path, name: str, four: str = "False", **assume: str) -> set[str]:
    (tmp_path / "train.py").write_text(SCRIPT.format(name=name, four=four))
    report = preflight.check([str(tmp_path / "train.py")], smoke=False,
                             assume={**ASSUME, **assume})
    return {f.rule_id for f in report.findings}


@pytest.mark.parametrize("name", ["unsloth/Qwen3-4B-FP8", "Qwen/Qwen3-8B-FP8"])
def test_fp8_checkpoint_refused_by_the_trainer(tmp_path: Path, name: str) -> None:
    assert "FP8D-HF-0003" in _ids(tmp_path, name)
    facts = read_paths([str(tmp_path / "train.py")]).facts
    assert facts["config.unsloth.checkpoint_quant_method"] == "fp8"


@pytest.mark.parametrize("name, four, version", [
    ("unsloth/Qwen3-4B-FP8", "False", "2025.10.10"),       # PR 3496: quantizer made trainable
    ("unsloth/Qwen3-4B-FP8-Dynamic", "False", "2025.4.7"),  # row copy: not FineGrainedFP8 here
    ("unsloth/Qwen3-4B", "False", "2025.4.7"),              # BF16
    ("RedHatAI/Qwen3-8B-FP8-dynamic", "False", "2025.4.7"),  # compressed-tensors
    ("unsloth/Qwen3-4B-FP8", "True", "2025.4.7"),           # 4-bit loading: another path
])
def test_quiet(tmp_path: Path, name: str, four: str, version: str) -> None:
    assert "FP8D-HF-0003" not in _ids(tmp_path, name, four, **{"pkg.unsloth": version})


def test_a_name_from_a_variable_is_not_judged(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT.format(name="{}", four="False").replace(
        '"{}"', 'os.environ["MODEL"]').replace("from unsloth", "import os\nfrom unsloth", 1))
    facts = read_paths([str(tmp_path / "train.py")]).facts
    assert "config.unsloth.checkpoint_quant_method" not in facts
