"""torchtitan's Python configs: ``config_registry.py`` functions building a ``Trainer.Config``
(or a subclass: ``GraphTrainer.Config``, ``FluxTrainer.Config``...), recognised by that return
annotation or, without one, by what they return, as torchtitan's ConfigManager does (it calls
``NAME()`` and takes the type of the result; a config built by code in another file -- another
registry's ``llama3_8b()``, graph_trainer's ``to_graph_trainer_config(...)`` -- or chosen by a
condition leaves ``config.torchtitan.base_config`` Unknown, so FP8 is undetermined)
(torchtitan main has had no TOML train configs since 2026-02), read by their syntax tree into the
keys the TOML reader gives (``config.torchtitan.<table>.<key>``), so the same derivation and
rules apply.

Two layouts, read at pytorch/torchtitan 00d1c0e4 (2026-04-17) and b5bcd76c (2026-08-21):

- from the config refactor (PR 2386, 9810191b, 2026-02-23) to PR 3127 (6348d93d, 2026-04-27):
  ``Trainer.Config(model_spec=model_registry("405B"), model_converters=ModelConvertersContainer.
  Config(converters=[Float8LinearConverter.Config(...)]), activation_checkpoint=
  ActivationCheckpointConfig(mode="full"), ...)``; ``Float8LinearConverter.Config.recipe_name``
  defaults to None, which builds torchao's ``Float8LinearConfig()`` (tensorwise) with the FSDP
  float8 all-gather (components/quantization/float8.py l.29-56, l.97-130 at 00d1c0e4);
- from PR 3127: ``model_spec=model_registry("8B", converters=[Float8LinearConverter.Config(...)])``
  and ``activation_checkpoint=SelectiveAC.Config()``; ``recipe_name`` defaults to "rowwise"
  (float8.py l.58 at b5bcd76c).

A config function may call another and set attributes (``config = llama3_debugmodel();
config.model_converters = ...``). Which function is the job: the one ``FILE.py::NAME`` names
(``run_train.sh`` / ``-m torchtitan.train --module M --config NAME`` picks it at run time,
torchtitan/config/manager.py l.21-106 at 00d1c0e4), else the file's only one. A registry of
several read with no name is read whole: what every config gives the same is stated, what they
differ on is Unknown naming which config says what (so FP8 is Unknown in a registry where some
configs ask for it), never one config taken for the job.
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks.torchtitan_pyset import through_helpers
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.types import ConfigProblem, ReaderOutput

PREFIX = "config.torchtitan"
# converter config class -> the TOML converter name, and its recipe default, in the 2026-02..04
# layout (model_converters=, 00d1c0e4: Float8LinearConverter recipe_name None = tensorwise, MXFP8Converter
# "mxfp8_rceil") and from PR 3127 (model_registry(converters=), b5bcd76: float8.py recipe_name
# "rowwise"; mx.py "mxfp8_rceil")
_CONVERTERS_2026_02 = {
    "Float8LinearConverter": ("quantize.linear.float8", None),
    "Float8GroupedMMConverter": ("quantize.grouped_mm.float8", None),
    "MXFP8Converter": ("quantize.linear.mx", "mxfp8_rceil"),
}
_CONVERTERS = {
    "Float8LinearConverter": ("quantize.linear.float8", "rowwise"),
    "Float8GroupedExpertsConverter": ("quantize.grouped_mm.float8", "rowwise"),
    "MXFP8LinearConverter": ("quantize.linear.mx", "mxfp8_rceil"),
    "MXFP8GroupedExpertsConverter": ("quantize.grouped_mm.mx", "mxfp8_rceil"),
    "NVFP4LinearConverter": ("quantize.linear.nvfp4", None),
}
# converters that change no precision to FP8 (73aed7f6: components/lora.py, experiments/rl/
# models/cast_linear.py -- the LM head's logits in fp32 --, experiments/rl/batch_invariance.py)
_NOT_QUANTIZING = frozenset({"LoRAConverter", "LMHeadCastConverter", "BatchInvariantFlexConverter"})
_AC = {"SelectiveAC": "selective", "FullAC": "full", "NoAC": "none", "MemoryBudgetAC": "memory_budget"}
_MAX_DEPTH = 8
_MAX_FUNCTIONS = 256
"""Functions of one file looked at (each is evaluated to see what it returns)."""
_MAX_CONFIGS = 64
"""Config functions of one registry read (torchtitan's llama3 registry has about twenty)."""


# The classes a registry function builds (torchtitan's ConfigManager calls ``NAME()`` and takes
# ``type(result)`` as the config class, whatever the annotation says: torchtitan/config/manager.py
# l.34-46, l.143-160 at b5bcd76c): ``Trainer.Config`` (torchtitan/trainer.py l.68-70) and its
# subclasses ``GraphTrainer.Config`` (experiments/graph_trainer/trainer.py l.104-106),
# ``FluxTrainer.Config`` (models/flux/trainer.py l.31-33), ``FaultTolerantTrainer`` (experiments/
# torchft/trainer.py l.35), ``TransformersBackendConfig`` (experiments/transformers_modeling_backend/
# configs.py l.15, an ``HFTransformerTrainer.Config``); ``JobConfig`` before 2026-02.
# torchtitan's RL examples (experiments/rl/examples/<x>/config_registry.py) build a
# ``Controller.Config`` (experiments/rl/controller.py l.282-336 at 73aed7f6): model_spec and
# compile at its top, the trainer's settings under ``trainer=PolicyTrainer.Config(...)``.
_CONFIG_CLASS = re.compile(r"^torchtitan\.(?:\w+\.)*(?:\w*Trainer\.Config|TransformersBackendConfig|"
                           r"JobConfig|rl\.(?:\w+\.)*Controller\.Config)$")
# a function of another registry (graph_trainer's ``llama3_8b()`` from models/llama3): a config,
# built by a file that is not this one
_OTHER_REGISTRY = re.compile(r"^torchtitan\.(?:\w+\.)*config_registry\.\w+$")


def _config_class(module: Module, name: str) -> bool:
    """``name`` (qualified) is a torchtitan trainer config class, or a class of this file that
    subclasses one."""
    return any(_CONFIG_CLASS.match(n) for n in module.lineage(name))


def builds(module: Module, name: str) -> str | None:
    """How the file's function ``name`` is a config function: "annotated" (``-> Trainer.Config``),
    "built" (it returns a trainer config the text gives, annotated or not), "other" (it returns
    another registry's config, whose settings are not in this file), None (not one the text
    shows: a helper taking arguments, one returning anything else or what the text does not
    decide)."""
    fn, scope = module.functions[name]
    if fn.returns is not None:
        note = module.evaluate(fn.returns, module.module)
        if isinstance(note, Ref) and _config_class(module, note.name):
            return "annotated"
    if name.startswith("_") or any(p not in scope.defaults for p in scope.params):
        return None         # torchtitan calls NAME() with no arguments; _names are helpers
    result = module.result(scope)
    if isinstance(result, Call) and _config_class(module, result.func):
        return "built"
    if isinstance(result, Call) and _OTHER_REGISTRY.match(result.func):
        return "other"
    return None


def _may_build(module: Module, name: str) -> bool:
    """``NAME()`` returns what the text does not decide (a condition, a call to code elsewhere):
    it may be a config."""
    scope = module.functions[name][1]
    return not any(p not in scope.defaults for p in scope.params) and \
        isinstance(module.result(scope), (Call, Unresolved))


def config_functions(module: Module) -> list[str]:
    """The file's functions that build a torchtitan ``Trainer.Config`` (by annotation or by what
    they return)."""
    return [name for name in list(module.functions)[:_MAX_FUNCTIONS]
            if builds(module, name) is not None]


UNRELEASED = f"{PREFIX}.job.unreleased_api"
"""True for a config-registry job: it runs torchtitan code from after v0.2.2, whatever the
checkout's version says. No release has the registry API (v0.1.0-v0.2.2 have no
``config_registry.py``; main has 17 at b5bcd76c, the refactor is PR 2386, 9810191b, 2026-02-23),
yet a source checkout of main still reports 0.2.2 (``assets/version.txt`` at b5bcd76c). Rules
about the 0.2.x code (FP8D-TT-0012, 0014, 0017, 0019) are for jobs where it is not true."""


def read_python(module: Module) -> ReaderOutput:
    """:func:`_read_python`, plus :data:`UNRELEASED` wherever a config function was read (as
    that function's fact is: Unknown when which one runs is not known)."""
    got = _read_python(module)
    chosen = got.facts.get(f"{PREFIX}.job.config_function")
    if chosen is None:
        return got
    facts = {**got.facts, UNRELEASED: chosen if isinstance(chosen, Unknown) else True}
    provenance = {**got.provenance,
                  UNRELEASED: got.provenance.get(f"{PREFIX}.job.config_function", module.path)}
    return ReaderOutput(facts, provenance, got.problems, got.linked)


def _read_python(module: Module) -> ReaderOutput:
    """The config function named (or the file's only one) -> ``config.torchtitan.*``; a
    registry of several and no name: every config, what they differ on Unknown."""
    out = PyOut(module)
    names = config_functions(module)
    if not names:
        return out.output()
    if module.entry is not None and module.entry in module.functions and \
            module.entry not in names and names and _may_build(module, module.entry):
        # the launch line names a function of a registry that the text does not show building a
        # config (it returns what a condition or code elsewhere decides): its settings are
        # undetermined, never read as "none"
        _undecided(out, module, module.entry)
        return out.output()
    if module.entry is not None and module.entry not in names:
        listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        out.problems.append(ConfigProblem(module.path, None, (
            f"this torchtitan config registry defines {len(names)} configs ({listed}); "
            f"{module.entry!r} is none of them, so none was read"), level="warning",
            code="not_a_config",
            fix=f"Name one: fp8-doctor check {os.path.basename(module.path)}::{names[0]}"))
        return out.output()
    if module.entry is not None or len(names) == 1:
        _config(out, module, module.entry or names[0])
        return out.output()
    return _registry(module, names)


def _config(out: PyOut, module: Module, chosen: str) -> None:
    fn, scope = module.functions[chosen]
    result = through_helpers(module, scope, module.result(scope))
    if not isinstance(result, Call):
        out.put(f"{PREFIX}.model.converters", result, fn.lineno)
        return
    config, elsewhere = _unwrap(module, result, 0)
    if config is None:
        # returns what code not in this file (or a condition) builds
        _undecided(out, module, chosen)
        return
    out.put(f"{PREFIX}.job.config_function", chosen, fn.lineno)
    if elsewhere is not None:
        # another registry's llama3_8b(), with what this file sets on it: those settings are
        # read, the rest of that config is not (a rule that needs it is undetermined)
        out.put(f"{PREFIX}.base_config", Unknown(
            f"{os.path.basename(module.path)}: {chosen}() starts from {elsewhere}, not read "
            "here: only what this file sets on it is known"), fn.lineno)
    _tree(out, PREFIX, config, 0, module)


# Functions of torchtitan that turn a trainer config into another, keeping its fields: the
# qualified name -> (the class they return, their parameters, the fields they drop (left to
# the class default), whether a set activation_checkpoint becomes SelectiveAC).
# to_graph_trainer_config(base_config, model_registry) copies every field of the base, pops
# `compile` (GraphTrainer.Config's default GraphTrainerCompileConfig(), enable False) and turns
# any activation checkpointing into SelectiveAC.Config() (experiments/graph_trainer/configs.py
# l.239-300 at 73aed7f6); model_spec keeps the base's converters (dataclasses.replace).
_WRAPPERS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], bool]] = {
    "torchtitan.experiments.graph_trainer.configs.to_graph_trainer_config": (
        "torchtitan.experiments.graph_trainer.trainer.GraphTrainer.Config",
        ("base_config", "model_registry"), ("compile",), True),
}


def _unwrap(module: Module, value: Any, depth: int) -> tuple[Call | None, str | None]:
    """The trainer config ``value`` is, as a call whose keywords are its fields as far as this
    file gives them, and, where it starts from another registry's config function, that
    function (whose own settings are not in this file); (None, None) when the text does not
    show a config."""
    if not isinstance(value, Call) or depth > _MAX_DEPTH:
        return None, None
    if _config_class(module, value.func):
        return value, None
    if _OTHER_REGISTRY.match(value.func):
        path = value.func.rsplit(".", 1)[0].replace(".", "/") + ".py"
        return value, f"{value.func.rsplit('.', 1)[-1]}() of {path}"
    wrapper = _WRAPPERS.get(value.func)
    if wrapper is None:
        return None, None
    cls, params, drops, selective = wrapper
    base = value.args[0] if value.args else value.kwargs.get(params[0])
    inner, elsewhere = _unwrap(module, base, depth + 1)
    if inner is None:
        return None, None
    kwargs = {k: v for k, v in inner.kwargs.items() if k not in drops}
    lines = {k: v for k, v in inner.lines.items() if k in kwargs}
    if selective and "activation_checkpoint" in kwargs:
        kwargs["activation_checkpoint"] = Call(
            "torchtitan.distributed.activation_checkpoint.SelectiveAC.Config", value.line)
        lines["activation_checkpoint"] = value.line
    # what the file sets on the wrapper's result afterwards (config.compile = ...)
    for key, got in value.kwargs.items():
        if key not in params:
            kwargs[key], lines[key] = got, value.lines.get(key, value.line)
    return Call(cls, value.line, kwargs=kwargs, lines=lines, star=inner.star), elsewhere


def _undecided(out: PyOut, module: Module, chosen: str) -> None:
    """``chosen()`` is the job, but what config it returns is not in the text: the config's
    settings (FP8 among them) are Unknown with what it returns, never read as unset."""
    fn, scope = module.functions[chosen]
    result = module.result(scope)
    said = f"returns {result.func}(...)" if isinstance(result, Call) else (
        f"returns what the text does not give ({result.reason})" if isinstance(result, Unresolved)
        else f"returns {_short(result)}")
    out.put(f"{PREFIX}.job.config_function", chosen, fn.lineno)
    out.put(f"{PREFIX}.base_config", Unknown(
        f"{os.path.basename(module.path)}: {chosen}() {said}, which is built by code not in "
        "this file (or decided when it runs): its settings, FP8 among them, are not read"),
        fn.lineno)


_ABSENT = object()


def _registry(module: Module, names: list[str]) -> ReaderOutput:
    """Every config of the registry: a fact they all give alike as it is, one they differ on
    (or some leave unset) Unknown with who says what."""
    read = {}
    for name in names[:_MAX_CONFIGS]:
        one = PyOut(module)
        _config(one, module, name)
        read[name] = one.output()
    file = os.path.basename(module.path)
    fix = (f"the launch line's --config picks one (name it: fp8-doctor check "
           f"{file}::{names[0]}, or give the run_train.sh line that runs it)")
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    keys = dict.fromkeys(k for r in read.values() for k in r.facts)
    for key in keys:
        values = {n: r.facts.get(key, _ABSENT) for n, r in read.items()}
        first = next(n for n, v in values.items() if v is not _ABSENT)
        prov[key] = read[first].provenance.get(key, module.path)
        distinct = list({repr(v): v for v in values.values()}.values())
        if len(distinct) == 1:
            facts[key] = distinct[0]
            continue
        groups: dict[str, list[str]] = {}
        for n, v in values.items():
            groups.setdefault("not set" if v is _ABSENT else _short(v), []).append(n)
        said = "; ".join(f"{v} in {', '.join(ns[:4])}{' ...' if len(ns) > 4 else ''}"
                         for v, ns in list(groups.items())[:4])
        facts[key] = Unknown(f"{file} is a registry of {len(names)} configs that differ here "
                             f"({said}); {fix}")
    facts[f"{PREFIX}.job.config_function"] = Unknown(
        f"{file} defines {len(names)} configs ({', '.join(names[:8])}); {fix}")
    prov[f"{PREFIX}.job.config_function"] = module.path
    return ReaderOutput(facts, prov)


def _short(value: Any) -> str:
    text = f"unknown ({value.reason})" if isinstance(value, Unknown) else repr(value)
    return text if len(text) <= 48 else text[:45] + "..."


def _tree(out: PyOut, prefix: str, call: Call, depth: int, module: Module) -> None:
    for key, value in call.kwargs.items():
        line = call.lines.get(key, call.line)
        name = f"{prefix}.{key}"
        if key == "model_spec" and isinstance(value, Call) and value.name == "model_registry":
            _model(out, value, module)
        elif key in ("model_spec", "model_converters") and not (
                key == "model_converters" and isinstance(value, Call) and value.name == "Config"):
            # the converters live in what this builds (`model_spec=make_spec()` imported from
            # elsewhere, a name the text does not give): unknown, never "no converters" (the
            # red team's registry made FP8 "no" and the check exit 0)
            said = f"{value.func}(...)" if isinstance(value, Call) else _short(value)
            out.put(f"{PREFIX}.model.converters", Unresolved(
                f"{key}={said} is built by code not in this file: its converters are not read"),
                line)
        elif key == "model_converters" and isinstance(value, Call):
            # the 2026-02..04 layout: ModelConvertersContainer.Config(converters=[...])
            _converters(out, value.value("converters"), value.lines.get("converters", value.line),
                        _CONVERTERS_2026_02)
        elif key == "activation_checkpoint" and isinstance(value, Call):
            cls = value.func.rsplit(".", 2)[-2] if value.name == "Config" else value.name
            mode = value.kwargs.get("mode") if "mode" in value.kwargs else \
                _AC.get(cls, Unresolved(f"activation checkpointing {cls}"))
            out.put(f"{name}.mode", mode, value.lines.get("mode", line))
        elif key == "trainer" and depth == 0 and isinstance(value, Call) and \
                value.func.endswith("PolicyTrainer.Config"):
            # the RL controller's trainer: its parallelism, training ... are the job's
            out.put(f"{name}.class", "PolicyTrainer", value.line)
            _tree(out, prefix, value, depth + 1, module)
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
    named = re.match(r"^torchtitan\.models\.(\w+)\.model_registry$", spec.func)
    if spec.func.startswith(".") and len(parts) >= 3 and parts[-3] == "models":
        out.put(f"{PREFIX}.model.name", parts[-2], spec.line)   # models/<name>/config_registry
    elif named:     # an experiment's registry building models/<name>'s model (graph_trainer)
        out.put(f"{PREFIX}.model.name", named.group(1), spec.line)
    converters = spec.value("converters")
    if converters is not None or "converters" in spec.kwargs:
        _converters(out, converters, spec.lines.get("converters", spec.line), _CONVERTERS)


def _converters(out: PyOut, converters: Any, line: int,
                table: dict[str, tuple[str, str | None]]) -> None:
    """The converter Config objects as the TOML names them, each with its settings and recipe
    (its default where the object does not set one)."""
    if not isinstance(converters, list):
        if converters is not None:
            out.put(f"{PREFIX}.model.converters", converters, line)
        return
    names: list[Any] = []
    for conv in converters:
        cls = conv.func.rsplit(".", 2)[-2] if isinstance(conv, Call) else None
        known = table.get(cls or "")
        if cls in _NOT_QUANTIZING:
            continue
        if known is None:
            names.append(Unresolved(f"a converter the text does not name ({cls or conv!r})"))
            continue
        names.append(known[0])
        assert isinstance(conv, Call)
        for key, value in conv.kwargs.items():
            out.put(f"{PREFIX}.{known[0]}.{key}", value, conv.lines.get(key, conv.line))
        if "recipe_name" not in conv.kwargs and known[1] is not None:
            out.put(f"{PREFIX}.{known[0]}.recipe_name", known[1], conv.line)
    out.put(f"{PREFIX}.model.converters", names, line)
