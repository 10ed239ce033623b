"""torchtitan's Python configs: ``config_registry.py`` functions returning ``Trainer.Config``
(torchtitan main has had no TOML train configs since 2026-02), read by their syntax tree into the
keys the TOML reader gives (``config.torchtitan.<table>.<key>``), so the same derivation and
rules apply.

Read at pytorch/torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a: a config function returns
``Trainer.Config(training=TrainingConfig(...), parallelism=ParallelismConfig(...),
compile=CompileConfig(...), activation_checkpoint=SelectiveAC.Config(), model_spec=
model_registry("8B", converters=[Float8LinearConverter.Config(...)]))``, or calls another and
sets attributes (``config.compile = CompileConfig(enable=True, components=["model"])``). Which
function is the job: the one ``FILE.py::NAME`` names, else the file's only one; several and no
name is a problem listing them (the launch line's ``--config NAME`` picks one at run time).
"""

from __future__ import annotations

import os
from typing import Any

from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.types import ConfigProblem, ReaderOutput

PREFIX = "config.torchtitan"
# converter config class -> the TOML converter name, and its recipe default at b5bcd76
# (components/quantization/float8.py recipe_name "rowwise"; mx.py "mxfp8_rceil")
_CONVERTERS = {
    "Float8LinearConverter": ("quantize.linear.float8", "rowwise"),
    "Float8GroupedExpertsConverter": ("quantize.grouped_mm.float8", "rowwise"),
    "MXFP8LinearConverter": ("quantize.linear.mx", "mxfp8_rceil"),
    "MXFP8GroupedExpertsConverter": ("quantize.grouped_mm.mx", "mxfp8_rceil"),
    "NVFP4LinearConverter": ("quantize.linear.nvfp4", None),
}
_AC = {"SelectiveAC": "selective", "FullAC": "full", "NoAC": "none", "MemoryBudgetAC": "memory_budget"}
_MAX_DEPTH = 8


def config_functions(module: Module) -> list[str]:
    """The file's functions that build a torchtitan ``Trainer.Config`` (by annotation or by what
    they return)."""
    names = []
    for name, (fn, _) in module.functions.items():
        note = fn.returns
        text = ""
        if note is not None:
            value = module.evaluate(note, module.module)
            text = value.name if isinstance(value, Ref) else ""
        if text.startswith("torchtitan") and text.endswith(("Trainer.Config", "JobConfig")):
            names.append(name)
    return names


def read_python(module: Module) -> ReaderOutput:
    """The one config function of the file (or the one named) -> ``config.torchtitan.*``."""
    out = PyOut(module)
    names = config_functions(module)
    if not names:
        return out.output()
    chosen = module.entry if module.entry in names else (names[0] if len(names) == 1 else None)
    if chosen is None:
        listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        what = f"{module.entry!r} is none of them" if module.entry else "which one runs is "\
            "chosen on the launch line (--config NAME)"
        out.problems.append(ConfigProblem(module.path, None, (
            f"this torchtitan config registry defines {len(names)} configs ({listed}); {what}, "
            "so none was read"), level="warning", code="not_a_config",
            fix=f"Name one: fp8-doctor check {os.path.basename(module.path)}::{names[0]}"))
        return out.output()
    fn, scope = module.functions[chosen]
    result = module.evaluate(scope.returns[0], scope) if len(scope.returns) == 1 else \
        Unresolved(f"{chosen}() has no single return", fn.lineno)
    if not isinstance(result, Call):
        out.put(f"{PREFIX}.model.converters", result, fn.lineno)
        return out.output()
    out.put(f"{PREFIX}.job.config_function", chosen, fn.lineno)
    _tree(out, PREFIX, result, 0, module)
    return out.output()


def _tree(out: PyOut, prefix: str, call: Call, depth: int, module: Module) -> None:
    for key, value in call.kwargs.items():
        line = call.lines.get(key, call.line)
        name = f"{prefix}.{key}"
        if key == "model_spec" and isinstance(value, Call):
            _model(out, value, module)
        elif key == "activation_checkpoint" and isinstance(value, Call):
            cls = value.func.rsplit(".", 2)[-2] if value.name == "Config" else value.name
            out.put(f"{name}.mode", _AC.get(cls, Unresolved(f"activation checkpointing {cls}")),
                    line)
        elif isinstance(value, Call) and depth < _MAX_DEPTH:
            cls = value.func.rsplit(".", 2)[-2] if value.name == "Config" else value.name
            out.put(f"{name}.class", cls, value.line)
            _tree(out, name, value, depth + 1, module)
        elif not isinstance(value, (Call, dict)):
            out.put(name, value, line)


def _model(out: PyOut, spec: Call, module: Module) -> None:
    """``model_registry("8B", converters=[...])``: the flavor, the model (its package folder)
    and the converters as the TOML names them, with each converter's recipe."""
    if spec.args:
        out.put(f"{PREFIX}.model.flavor", spec.args[0], spec.line)
    parts = os.path.normpath(module.path).split(os.sep)
    if spec.func.startswith(".") and len(parts) >= 3 and parts[-3] == "models":
        out.put(f"{PREFIX}.model.name", parts[-2], spec.line)   # models/<name>/config_registry
    converters = spec.value("converters")
    if not isinstance(converters, list):
        if converters is not None:
            out.put(f"{PREFIX}.model.converters", converters, spec.lines.get("converters"))
        return
    names: list[Any] = []
    for conv in converters:
        cls = conv.func.rsplit(".", 2)[-2] if isinstance(conv, Call) else None
        known = _CONVERTERS.get(cls or "")
        if known is None:
            names.append(Unresolved(f"a converter the text does not name ({cls or conv!r})"))
            continue
        names.append(known[0])
        assert isinstance(conv, Call)
        for key, value in conv.kwargs.items():
            out.put(f"{PREFIX}.{known[0]}.{key}", value, conv.lines.get(key, conv.line))
        if "recipe_name" not in conv.kwargs and known[1] is not None:
            out.put(f"{PREFIX}.{known[0]}.recipe_name", known[1], conv.line)
    out.put(f"{PREFIX}.model.converters", names, spec.lines.get("converters", spec.line))
