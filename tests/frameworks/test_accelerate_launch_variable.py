"""``accelerate launch --mixed_precision="${MIXED_PRECISION}"`` where the launch script does not
set the variable (an env file beside the app, the environment it is started with): Unknown, never
the literal text read as a precision accelerate refuses; and ``TrainingArguments(bf16=True)`` in
the script replaces whatever it is, so FP8 is "no" (session 43 pyfix8 item 4, holdout21
crusoe-finetune: transformers v4.52.4 training_args.py ``__post_init__`` rewrites
``ACCELERATE_MIXED_PRECISION``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

MAIN = """from transformers import Trainer, TrainingArguments
args = TrainingArguments(output_dir="out", {precision})
trainer = Trainer(model=model, args=args)
trainer.train()
"""


def _intent(tmp: Path, launch: str, precision: str,
            assume: dict[str, str] | None = None) -> tuple[dict[str, object], dict[str, object]]:
    (tmp / ".git").mkdir(exist_ok=True)
    (tmp / "main.py").write_text(MAIN.format(precision=precision))
    (tmp / "train.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + launch + "\n")
    read = read_paths([str(tmp / "train.sh")])
    values, _ = intent.derive(Facts({**read.facts, **(assume or {})}, read.provenance))
    return read.facts, values


@pytest.mark.parametrize("flag", ['--mixed_precision="${MIXED_PRECISION}"',
                                  "--mixed_precision $MP", "--mixed_precision=${MP:?unset}"])
def test_an_unset_variable_is_unknown_and_bf16_replaces_it(tmp_path: Path, flag: str) -> None:
    facts, values = _intent(tmp_path, f"accelerate launch {flag} --num_processes=2 main.py",
                            "bf16=True")
    assert isinstance(facts["config.accelerate.mixed_precision"], Unknown)
    assert values["intent.fp8"] is False


def test_without_an_explicit_precision_fp8_stays_unknown(tmp_path: Path) -> None:
    _, values = _intent(tmp_path, 'accelerate launch --mixed_precision="${MP}" main.py',
                        "logging_steps=1")
    fp8 = values["intent.fp8"]
    assert isinstance(fp8, Unknown) and "MP" in fp8.reason and "refuses" not in fp8.reason


def test_an_unknown_bf16_leaves_fp8_unknown(tmp_path: Path) -> None:
    _, values = _intent(tmp_path, 'accelerate launch --mixed_precision="${MP}" main.py',
                        "bf16=__import__('os').environ['B'] == '1'")
    assert isinstance(values["intent.fp8"], Unknown)


def test_a_te_backend_that_survives_bf16_leaves_fp8_unknown(tmp_path: Path) -> None:
    # accelerate >= 1.9 still converts with the TE backend the launch exports (accelerate.py
    # _kept_backend): an unknown precision may be fp8 there
    _, values = _intent(tmp_path, 'accelerate launch --mixed_precision "$MP" --fp8_backend te '
                        "main.py", "bf16=True", {"pkg.accelerate.version": "1.10.0"})
    assert isinstance(values["intent.fp8"], Unknown)


def test_a_set_variable_is_its_value(tmp_path: Path) -> None:
    # quiet
    facts, values = _intent(tmp_path, "MP=fp8\naccelerate launch --mixed_precision $MP main.py",
                            "logging_steps=1")
    assert facts["config.accelerate.mixed_precision"] == "fp8"
    assert values["intent.fp8"] is True


def test_a_huge_variable_word_is_bounded(tmp_path: Path) -> None:
    facts, _ = _intent(tmp_path, "accelerate launch --mixed_precision ${" + "X" * 20000 + "} "
                       "main.py", "bf16=True")
    value = facts["config.accelerate.mixed_precision"]
    assert isinstance(value, Unknown) and len(value.reason) < 400
