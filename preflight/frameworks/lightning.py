"""Lightning: LightningCLI YAML, and scripts (``Trainer(...)`` / ``Fabric(...)`` read by their
syntax tree); ``trainer.strategy`` given as ``{class_path, init_args}`` (or a strategy object in a
script) also yields ``config.lightning.trainer.strategy = <class>``.

In a script, ``plugins=[TransformerEnginePrecision(weights_dtype=..., recipe=...)]`` is
``config.lightning.trainer.plugins`` (class names) with the plugin's arguments under
``config.lightning.trainer.plugins.TransformerEnginePrecision.*`` (a dict recipe flattened, a
recipe object's class as ``recipe_class``); Lightning builds ``DelayedScaling(**recipe)`` from a
dict and ``DelayedScaling()`` (HYBRID) without one (docs/source-pytorch/common/
precision_intermediate.rst at Lightning-AI/pytorch-lightning 5de217e).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import LIT_PRECISION, Derived, IntentOut, View
from preflight.frameworks.nemo import nemo_model_keys
from preflight.reading.parse import Parsed
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref
from preflight.reading.readers import read_plain, where
from preflight.reading.types import ReaderOutput

KIND = "lightning"
_ROOTS = ("lightning", "pytorch_lightning", "lightning_fabric")
PY_HINT = re.compile(r"\b(?:Trainer|Fabric)\b")
_TE_RECIPES = {"DelayedScaling": "delayed", "Float8CurrentScaling": "current",
               "MXFP8BlockScaling": "mxfp8", "Float8BlockScaling": "blockwise",
               "NVFP4BlockScaling": "nvfp4"}
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16",
           "float32": "fp32", "float": "fp32"}


def read_python(module: Module) -> ReaderOutput:
    """``Trainer(precision=..., strategy=..., plugins=[...])`` / ``Fabric(...)`` in a script ->
    the LightningCLI keys ``config.lightning.trainer.*`` at their lines."""
    out = PyOut(module)
    base = f"config.{KIND}.trainer"
    for call, _ in out.calls():
        if not any(n.split(".")[0] in _ROOTS and n.rsplit(".", 1)[-1] in ("Trainer", "Fabric")
                   for n in module.lineage(call.func)):
            continue
        for key in ("precision", "devices", "num_nodes", "accelerator", "max_steps"):
            if key in call.kwargs:
                out.put(f"{base}.{key}", call.kwargs[key], call.lines.get(key, call.line))
        strategy = call.value("strategy")
        if isinstance(strategy, Call):
            out.put(f"{base}.strategy", strategy.name, strategy.line)
            out.put_all(f"{base}.strategy.init_args", strategy)
        elif strategy is not None:
            out.put(f"{base}.strategy", strategy, call.lines.get("strategy", call.line))
        plugins = call.value("plugins")
        plugins = [plugins] if isinstance(plugins, Call) else plugins
        if isinstance(plugins, list):
            found = [p for p in plugins if isinstance(p, Call)]
            out.put(f"{base}.plugins", [_ALIASES.get(p.name, p.name) for p in found],
                    call.lines.get("plugins", call.line))
            for plugin in found:
                _plugin(out, f"{base}.plugins.{_ALIASES.get(plugin.name, plugin.name)}", plugin)
        elif plugins is not None:
            out.put(f"{base}.plugins", plugins, call.lines.get("plugins", call.line))
    return out.output()


_ALIASES = {"TransformerEnginePrecisionPlugin": "TransformerEnginePrecision"}
"""Lightning 2.1's Trainer plugin name for the same class (lightning/pytorch/plugins/precision/
transformer_engine.py at Lightning-AI/pytorch-lightning 0f27c857: ``TransformerEnginePrecisionPlugin
(PrecisionPlugin, FabricTEPrecision)``, its weights dtype the argument ``dtype``); 2.2 renamed both
(``TransformerEnginePrecision(weights_dtype=...)``)."""
_KEYS = {"dtype": "weights_dtype"}
NOT_FP8_PLUGINS = frozenset({
    "MixedPrecision", "MixedPrecisionPlugin", "HalfPrecision", "HalfPrecisionPlugin",
    "DoublePrecision", "DoublePrecisionPlugin", "Precision", "PrecisionPlugin",
    "BitsandbytesPrecision", "BitsandbytesPrecisionPlugin", "DeepSpeedPrecision",
    "DeepSpeedPrecisionPlugin", "FSDPPrecision", "FSDPPrecisionPlugin", "XLAPrecision",
    "XLAPrecisionPlugin", "AMPPlugin", "NativeMixedPrecisionPlugin"})
"""Lightning's precision plugins that never train in FP8 (lightning 2.x plugins/precision/)."""


def _plugin(out: PyOut, prefix: str, plugin: Call) -> None:
    for key, value in plugin.kwargs.items():
        line = plugin.lines.get(key, plugin.line)
        key = _KEYS.get(key, key) if prefix.endswith(".TransformerEnginePrecision") else key
        if key == "recipe" and isinstance(value, Call):
            out.put(f"{prefix}.recipe_class", value.name, value.line)
            for k, v in value.kwargs.items():
                out.put(f"{prefix}.recipe.{k}", v.last if isinstance(v, Ref) else v,
                        value.lines.get(k, value.line))
        elif key == "recipe" and isinstance(value, dict):
            out.put(f"{prefix}.recipe_class", "DelayedScaling", line)
            for k, v in value.items():
                out.put(f"{prefix}.recipe.{k}", v, line)
        else:
            out.put(f"{prefix}.{key}", value.last if isinstance(value, Ref) else value, line)


_TRAINER_ARGS = frozenset({
    "strategy", "devices", "accelerator", "max_epochs", "num_nodes",
    "accumulate_grad_batches", "gradient_clip_val", "log_every_n_steps", "val_check_interval",
    "limit_train_batches", "limit_val_batches", "enable_checkpointing", "plugins",
    "check_val_every_n_epoch", "num_sanity_val_steps", "default_root_dir"})
"""lightning.pytorch.Trainer's __init__ arguments (lightning 2.x trainer/trainer.py) that claim
a ``trainer:`` section; a Lightning-spelled ``precision`` ("bf16-mixed", "transformer-engine")
claims it too (``precision``, ``callbacks``, ``max_steps`` alone are any trainer's)."""


def _trainer_own(trainer: Any) -> bool:
    if not isinstance(trainer, dict):
        return False
    precision = str(trainer.get("precision", ""))
    return owns(map(str, trainer), _TRAINER_ARGS) or (
        "-" in precision and precision in LIT_PRECISION)


def _class_path(section: Any) -> bool:
    return isinstance(section, dict) and "class_path" in section


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a LightningCLI config (0 without one of its
    own keys: ``seed_everything``, ``ckpt_path``, a ``class_path`` or a Trainer argument)."""
    top = {str(k) for k in data}
    trainer, model = data.get("trainer"), data.get("model")
    if not (owns(top, {"seed_everything", "ckpt_path"}) or _class_path(model)
            or _class_path(data.get("data"))
            or _trainer_own(trainer)):
        return 0   # `data:` or `trainer:` alone is any trainer's (frameworks/_claim.py)
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



def _te_plugin(lit: View, te: str, out: IntentOut) -> None:
    """A TransformerEnginePrecision plugin given in a script: FP8 with its recipe and dtype."""
    src = lit.src("trainer.plugins")
    out["fp8"] = (True, src)
    out["backend"] = ("te", src)
    cls = lit.get(te + "recipe_class", "DelayedScaling")
    recipe = _TE_RECIPES.get(str(cls))
    out["recipe"] = (recipe if recipe else Unknown(f"a {cls} recipe"),
                     lit.src(te + "recipe_class", src))
    fmt = lit.get(te + "recipe.fp8_format")
    if recipe in ("delayed", "current") or fmt is not None:
        out["format"] = (str(fmt).lower() if fmt is not None else "hybrid",
                         lit.src(te + "recipe.fp8_format", src))
    dtype = str(lit.get(te + "weights_dtype", "")).rsplit(".", 1)[-1]
    out["precision"] = (_DTYPES.get(dtype, Unknown(f"weights_dtype {dtype or 'not given'}")),
                        lit.src(te + "weights_dtype", src))


def _other_precision_plugin(plugins: Any) -> str:
    """A plugin of the list named like a precision plugin Lightning's own list does not hold
    (a job's subclass, a third-party plugin): which precision it trains in is not known."""
    if not isinstance(plugins, list):
        return ""
    return next((str(p)[:80] for p in plugins if isinstance(p, str) and p not in NOT_FP8_PLUGINS
                 and p.endswith(("Precision", "PrecisionPlugin"))), "")


def from_lightning(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    lit = View(f, "lightning", prov)
    out = IntentOut()
    prec = lit.get("trainer.precision")
    te = "trainer.plugins.TransformerEnginePrecision."
    if isinstance(lit.get("trainer.plugins"), list) and \
            "TransformerEnginePrecision" in lit.get("trainer.plugins"):
        _te_plugin(lit, te, out)
    elif _other_precision_plugin(lit.get("trainer.plugins")):
        out["fp8"] = (Unknown(f"a precision plugin this reader does not know: "
                              f"{_other_precision_plugin(lit.get('trainer.plugins'))}"),
                      lit.src("trainer.plugins"))
    elif lit.unknown("trainer.plugins") or (prec is None and lit.unknown("trainer.precision")):
        key = "trainer.plugins" if lit.unknown("trainer.plugins") else "trainer.precision"
        unknown = lit.unknown(key)
        assert unknown is not None
        out["fp8"] = (Unknown(f"{key.split('.')[-1]} is not known: {unknown.reason}"),
                      lit.src(key))
    elif prec is not None:
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
            out.runs_on = ("deepspeed",)
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
    return out.build()



FRAMEWORK = Framework(
    kind=KIND, title="PyTorch Lightning", formats=("yaml",), score=score, read=read_lightning,
    derive=from_lightning, precedence=9, zero_stage_rank=2,
    distributions=("lightning", "pytorch-lightning"), rule_area="PL", area_title="Lightning",
    read_python=read_python, python_hint=PY_HINT,
    defaults=(
        Default("trainer.strategy: deepspeed", "ZeRO stage 2", "all",
                "lightning/pytorch/strategies/deepspeed.py"),
    ),
)
