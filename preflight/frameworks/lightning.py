"""Lightning: LightningCLI YAML; ``trainer.strategy`` given as ``{class_path, init_args}`` also
yields ``config.lightning.trainer.strategy = <class_path>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import LIT_PRECISION, Derived, View
from preflight.frameworks.nemo import nemo_model_keys
from preflight.jobs.parse import Parsed
from preflight.jobs.readers import read_plain, where
from preflight.jobs.types import ReaderOutput

KIND = "lightning"


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a LightningCLI config."""
    top = {str(k) for k in data}
    trainer, model = data.get("trainer"), data.get("model")
    s = 0
    if isinstance(trainer, dict):
        s += 2 + len({str(k) for k in trainer} & {"precision", "strategy", "devices",
                                                  "accelerator", "max_epochs", "num_nodes",
                                                  "callbacks"})
    s += 2 * len(top & {"seed_everything", "ckpt_path", "data", "lr_scheduler"})
    if isinstance(model, dict) and "class_path" in model:
        s += 3
    s -= 4 * nemo_model_keys(model)
    return s


def read_lightning(path: str, parsed: Parsed) -> ReaderOutput:
    out = read_plain("config.lightning")(path, parsed)
    trainer = parsed.data.get("trainer") if isinstance(parsed.data, dict) else None
    strategy = trainer.get("strategy") if isinstance(trainer, dict) else None
    if isinstance(strategy, dict) and isinstance(strategy.get("class_path"), str):
        out.facts["config.lightning.trainer.strategy"] = strategy["class_path"]
        out.provenance["config.lightning.trainer.strategy"] = where(
            path, parsed, ("trainer", "strategy", "class_path"))[0]
    return out



def from_lightning(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    lit = View(f, "lightning", prov)
    out: Derived = {}
    prec = lit.get("trainer.precision")
    if prec is not None:
        mapped = LIT_PRECISION.get(str(prec))
        src = lit.src("trainer.precision")
        if mapped == "fp8":
            out["fp8"] = (True, src)
            out["backend"] = ("te", src)
            out["recipe"] = ("delayed", src)   # TransformerEnginePrecision: DelayedScaling()
            out["format"] = ("hybrid", src)    # ... whose default fp8_format is HYBRID
            out["precision"] = ("fp16" if str(prec).endswith("float16") else "bf16", src)
        else:
            out["fp8"] = (False, src)
            out["precision"] = (mapped or Unknown(f"trainer.precision {prec!r}"), src)
    strategy = lit.get("trainer.strategy")
    if isinstance(strategy, str):
        s = strategy.lower().rsplit(".", 1)[-1]
        src = lit.src("trainer.strategy")
        if s.startswith("deepspeed"):
            out["distributed"] = ("deepspeed", src)
            # lightning/pytorch/strategies/deepspeed.py register_strategies: deepspeed_stage_N
            # (also _offload, _offload_nvme); "deepspeed" and DeepSpeedStrategy default stage=2
            stage = re.match(r"deepspeed_stage_(\d)", s)
            if stage:
                out["zero_stage"] = (int(stage.group(1)), src)
            elif s == "deepspeedstrategy" and lit.int("trainer.strategy.init_args.stage"):
                out["zero_stage"] = (lit.int("trainer.strategy.init_args.stage"),
                                     lit.src("trainer.strategy.init_args.stage"))
            elif s in ("deepspeed", "deepspeedstrategy"):
                out["zero_stage"] = (2, "Lightning default (DeepSpeedStrategy stage=2)")
        elif s.startswith("fsdp"):
            out["distributed"] = ("fsdp1", src)
        elif s.startswith("modelparallel") or s.startswith("model_parallel"):
            out["distributed"] = ("fsdp2", src)
        elif s.startswith("ddp"):
            out["distributed"] = ("ddp", src)
        elif s in {"single_device", "singledevicestrategy"}:
            out["distributed"] = ("none", src)
    devices, nodes = lit.int("trainer.devices"), lit.int("trainer.num_nodes")
    if devices:
        out["num_gpus"] = (devices * (nodes or 1), lit.src("trainer.devices"))
    return out



FRAMEWORK = Framework(
    kind=KIND, title="PyTorch Lightning", formats=("yaml",), score=score, read=read_lightning,
    derive=from_lightning, precedence=9, zero_stage_rank=2,
    distributions=("lightning", "pytorch-lightning"), rule_area="PL", area_title="Lightning",
    defaults=(
        Default("trainer.strategy: deepspeed", "ZeRO stage 2", "all",
                "lightning/pytorch/strategies/deepspeed.py"),
    ),
)
