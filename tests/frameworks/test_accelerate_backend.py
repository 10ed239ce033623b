"""accelerate's FP8 backend where the job names none: ``Accelerator`` picks torchao (>= 0.6.1),
else Transformer Engine, else MS-AMP from what is installed (accelerator.py l.480-503 at v1.11.0,
l.457-474 at v1.8.0); before 1.8.0 it stays Unknown (FP8D-ACC-0021). holdout19 sbhavani-unsloth:
``accelerate launch --mixed_precision fp8`` of an SFTTrainer script with gradient checkpointing on
an NGC image with TE and no torchao gave intent.backend Unknown, so FP8D-TE-0002 was undetermined.
Real launch lines and scripts, read by their syntax tree, never run."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import intent
from preflight.assume import apply_assumptions
from preflight.facts import Facts, Unknown
from preflight.frameworks.accelerate_backend import auto_backend
from preflight.jobs.read import read_paths

SCRIPT = """from accelerate import Accelerator
from transformers import Trainer, TrainingArguments
accelerator = Accelerator({args})
args = TrainingArguments(output_dir="out", gradient_checkpointing=True)
trainer = Trainer(model=model, args=args)
trainer.train()
"""


def _pkgs(**versions: object) -> dict[str, object]:
    return {f"pkg.{k.replace('_', '-')}.version": v for k, v in versions.items()}


@pytest.mark.parametrize(("installed", "backend"), [
    ({"accelerate": "1.11.0", "transformer_engine": "2.8.0"}, "te"),
    ({"accelerate": "1.11.0", "transformer_engine": "2.8.0", "torchao": "0.13.0"}, "torchao"),
    ({"accelerate": "1.8.0", "torchao": "0.6.1"}, "torchao"),
    # is_torchao_available() wants >= 0.6.1: an older torchao is passed over
    ({"accelerate": "1.11.0", "transformer_engine": "2.8.0", "torchao": "0.5.0"}, "te"),
    ({"accelerate": "1.14.0", "ms_amp": "0.4.0"}, "msamp"),
])
def test_the_first_installed_backend_is_picked(installed: dict[str, str], backend: str) -> None:
    picked, why = auto_backend(_pkgs(**installed))
    assert picked == backend and "accelerator.py" in why


@pytest.mark.parametrize("installed", [
    {"accelerate": "1.6.0", "transformer_engine": "2.8.0"},      # 1.4-1.7: ACC-0021
    {"accelerate": "1.11.0"},                                    # none: ImportError at start
    {"transformer_engine": "2.8.0"},                             # accelerate not known
    {"accelerate": Unknown("pip failed"), "transformer_engine": "2.8.0"},
    {"accelerate": "1.11.0", "torchao": Unknown("metadata unreadable"),
     "transformer_engine": "2.8.0"},                             # torchao would come first
    {"accelerate": "not.a.version!", "transformer_engine": "2.8.0"},
])
def test_what_is_not_known_stays_unknown(installed: dict[str, object]) -> None:
    picked, _ = auto_backend(_pkgs(**installed))
    assert isinstance(picked, Unknown) and len(picked.reason) < 600


@pytest.mark.parametrize("fact", ["config.accelerate.kwargs_handlers",
                                  "config.accelerate.accelerator.fp8_backend",
                                  "config.accelerate.fp8_config.backend",
                                  "env.ACCELERATE_FP8_BACKEND", "config.accelerate.cli.script"])
def test_a_handler_or_backend_the_text_does_not_give_stays_unknown(fact: str) -> None:
    facts = {**_pkgs(accelerate="1.11.0", transformer_engine="2.8.0"),
             fact: Unknown("built when the script runs " + "x" * 5000)}
    picked, _ = auto_backend(facts)
    assert isinstance(picked, Unknown) and len(picked.reason) <= 300


def test_a_handler_without_a_backend_stays_unknown() -> None:
    facts = {**_pkgs(accelerate="1.11.0", transformer_engine="2.8.0"),
             "config.accelerate.kwargs_handlers": ["FP8RecipeKwargs"]}
    assert isinstance(auto_backend(facts)[0], Unknown)


def _backend(tmp: Path, launch: str, args: str, assume: dict[str, str]) -> object:
    (tmp / ".git").mkdir(exist_ok=True)
    (tmp / "train.py").write_text(SCRIPT.format(args=args))
    (tmp / "run.sh").write_text("#!/bin/bash\n" + launch + "\n")
    read = read_paths([str(tmp / "run.sh")])
    facts = apply_assumptions(Facts(read.facts, read.provenance), assume)
    values, _ = intent.derive(facts)
    return values["intent.backend"]


NGC = {"pkg.accelerate": "1.11.0", "pkg.transformer-engine": "2.8.0"}


def test_the_launch_flag_alone_gets_transformer_engine(tmp_path: Path) -> None:
    # firing: holdout19's shape (TE-0002 needs intent.backend te)
    assert _backend(tmp_path, "accelerate launch --mixed_precision fp8 train.py", "",
                    NGC) == "te"


def test_torchao_installed_is_picked_first(tmp_path: Path) -> None:
    assert _backend(tmp_path, "accelerate launch --mixed_precision fp8 train.py", "",
                    {**NGC, "pkg.torchao": "0.13.0"}) == "torchao"


def test_a_named_backend_is_kept(tmp_path: Path) -> None:
    # quiet: the flag decides, whatever is installed
    assert _backend(tmp_path, "accelerate launch --mixed_precision fp8 --fp8_backend msamp "
                    "train.py", "", {**NGC, "pkg.torchao": "0.13.0"}) == "msamp"


@pytest.mark.parametrize(("launch", "args"), [
    ("accelerate launch --mixed_precision fp8 --fp8_backend $B train.py", ""),
    ("accelerate launch --mixed_precision fp8 train.py", "kwargs_handlers=make_handlers()"),
    ("accelerate launch --mixed_precision fp8 other/missing.py", ""),
])
def test_hostile_a_backend_the_job_may_still_choose_stays_unknown(
        tmp_path: Path, launch: str, args: str) -> None:
    assert isinstance(_backend(tmp_path, launch, args, NGC), Unknown)
