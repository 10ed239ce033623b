"""TRL: its trainer configs (``SFTConfig``, ``GRPOConfig``, ...) are TrainingArguments subclasses,
so a TRL job runs on the HF Trainer (whose reader gives their arguments as
``config.hf_trainer.*``). What TRL adds is its own defaults: from trl 0.19.0 its configs turn
``bf16`` on when neither ``bf16`` nor ``fp16`` is given (FP8D-HF-0050). This module records which
TRL config a script builds or parses into (``config.trl.config_class``) and that the job runs on
TRL (its version is then probed and needed).

Read at huggingface/trl v1.9.0 (a785283c0ea7395092fc5bd60fc38e7f4d972003):
trl/trainer/base_config.py ``_BaseConfig(TrainingArguments)`` and every ``*Config(_BaseConfig)``;
``TrlParser`` parses the command line (or ``--config FILE``) into them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.frameworks._record import Framework
from preflight.frameworks._view import Derived
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module  # noqa: F401 - Call: the calls read
from preflight.reading.types import ReaderOutput

KIND = "trl"
CONFIGS = frozenset({
    "SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "RewardConfig", "RLOOConfig",
    "ORPOConfig", "CPOConfig", "BCOConfig", "PPOConfig", "PRMConfig", "OnlineDPOConfig",
    "XPOConfig", "NashMDConfig", "GKDConfig", "GOLDConfig", "GMPOConfig", "MiniLLMConfig",
    "AsyncGRPOConfig", "DistillationConfig", "GRPOWithReplayBufferConfig", "IWOPDConfig",
    "SDFTConfig", "SDPOConfig", "SSDConfig", "TPOConfig"})
PY_HINT = re.compile(r"\btrl\b")


def config_class(module: Module, func: str) -> str | None:
    """The TRL config class ``func`` is (or a class of this file is built on), else None."""
    for name in module.lineage(func):
        if name.split(".", 1)[0] == "trl" and name.rsplit(".", 1)[-1] in CONFIGS:
            return name.rsplit(".", 1)[-1]
    return None


def read_python(module: Module) -> ReaderOutput:
    """``SFTConfig(...)`` or ``TrlParser((..., SFTConfig, ...))`` -> ``config.trl.config_class``."""
    out = PyOut(module)
    for call, _ in out.calls():
        found = config_class(module, call.func)
        if found is None and call.name in ("TrlParser", "HfArgumentParser"):
            first = call.args[0] if call.args else call.kwargs.get("dataclass_types")
            classes = first if isinstance(first, list) else [first]
            found = next((c for a in classes
                          if (c := config_class(module, getattr(a, "name", ""))) is not None),
                         None)
        if found is not None:
            out.put(f"config.{KIND}.config_class", found, call.line)
    return out.output()


def score(data: Any) -> int:
    """TRL's YAML is TrainingArguments (read as the HF Trainer's); its configs are Python."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("TRL is read from the script that builds its config (a TRL YAML is the HF "
                     "Trainer's: --kind hf_trainer)")


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    return Derived()        # its TrainingArguments are the HF Trainer's (hf_trainer derives them)


FRAMEWORK = Framework(
    kind=KIND, title="TRL", formats=("python",), score=score, read=read, derive=derive,
    precedence=13, runs_on=("hf_trainer",), distributions=("trl",),
    read_python=read_python, python_hint=PY_HINT,
)
