"""NeMo 2 scripts read by their syntax tree (never imported or run): ``config.nemo2.*`` facts.

NeMo 2 (``nemo.collections.llm`` + NeMo-Run + ``nemo.lightning``, read at NVIDIA/NeMo 8cfedd72,
2025-09-19, between r2.4.0 and r2.5.0) is configured in Python:

- a library recipe (``llm.llama3_8b.pretrain_recipe(...)``) whose attributes the script sets
  afterwards: ``recipe.trainer.plugins = bf16_with_mxfp8_mixed()``,
  ``recipe.trainer.strategy.tensor_model_parallel_size = 2``,
  ``recipe.model.config.recompute_granularity = "full"``;
- ``nl.Trainer(precision=..., strategy=nl.MegatronStrategy(...) | nl.FSDP2Strategy(...),
  plugins=nl.MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid", ...))``;
- the HF AutoModel path: ``llm.HFAutoModelForCausalLM(model_accelerator=TEConfig(
  fp8_autocast=True))`` swaps in TE layers and wraps ``forward`` in ``te.fp8_autocast``
  (nemo/lightning/pytorch/accelerate/transformer_engine.py l.36-50, 99-117);
- the performance scripts (``scripts/performance/llm/*.py``): ``-c/--compute_dtype fp8
  -fr/--fp8_recipe mxfp8`` of ``scripts/performance/argument_parser.py`` go through
  ``helpers.set_primary_perf_configs`` -> ``set_precision_configs``, which picks the plugin
  factory (helpers.py l.211-248). The argument parser is another file of the job: it is
  parsed (never run) for its options, with the launch line's arguments.

Facts: ``config.nemo2.plugins`` (the precision plugin: a factory name of
``nemo/collections/llm/recipes/precision/mixed_precision.py`` or ``MegatronMixedPrecision``)
with ``config.nemo2.plugins.<field>`` for the fields the job sets itself;
``config.nemo2.recipe``; ``config.nemo2.trainer.{precision,strategy,...}``;
``config.nemo2.strategy.<arg>``; ``config.nemo2.model.config.<field>``;
``config.nemo2.model_accelerator`` / ``.fp8_autocast``; ``config.nemo2.perf.{compute_dtype,
fp8_recipe}``. What the text does not give is Unknown with the reason.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import replace
from typing import Any

from preflight.reading.parse import ParseError, read_text
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved, parse
from preflight.reading.pyvalues import attr_path
from preflight.reading.refs import named
from preflight.reading.types import ReaderOutput

KIND = "nemo2"
PREFIX = f"config.{KIND}"
PY_HINT = re.compile(r"\bnemo_run\b|\bnemo\.collections\.llm\b|\bnemo import lightning\b|"
                     r"\bnemo\.lightning\b|MegatronMixedPrecision|\bTEConfig\b|"
                     r"set_primary_perf_configs|_mixed\(\)|def parse_cli_args\b")
# The fields of MegatronMixedPrecision that decide FP8 (nemo/lightning/pytorch/plugins/
# mixed_precision.py l.102-132 @ 8cfedd72)
PLUGIN_FIELDS = ("precision", "fp8", "fp8_recipe", "fp8_param_gather", "fp8_params", "fp4",
                 "fp4_recipe", "first_last_layers_bf16", "reuse_grad_buf_for_mxfp8_param_ag")
STRATEGY_FIELDS = ("tensor_model_parallel_size", "context_parallel_size", "sequence_parallel",
                   "pipeline_model_parallel_size", "expert_model_parallel_size",
                   "tensor_parallel_size", "data_parallel_size")
MODEL_FIELDS = ("recompute_granularity", "recompute_method", "recompute_num_layers",
                "recompute_modules", "seq_length", "num_moe_experts", "moe_router_topk",
                # Megatron-Core's, also config.megatron.* (frameworks/mcore_graphs.py)
                "cuda_graph_impl", "cuda_graph_scope", "cuda_graph_modules", "enable_cuda_graph",
                "external_cuda_graph", "moe_grouped_gemm")
_PERF_SETTERS = ("set_primary_perf_configs", "set_perf_optimization_configs",
                 "set_precision_configs")
_TRAINER_KEYS = ("precision", "devices", "num_nodes", "max_steps")


def _nemo(module: Module, call: Call) -> bool:
    return any(n.startswith(("nemo.", "nemo_run.")) for n in module.lineage(call.func))


def read_python(module: Module) -> ReaderOutput:
    """The NeMo 2 settings of a script (see the module docstring)."""
    out = PyOut(module)
    accelerators: list[tuple[Any, int]] = []
    recipes: list[Call] = []
    for call, _ in out.calls():
        name = call.name
        if name == "Trainer" and _nemo(module, call):
            _trainer(out, call)
        elif name.endswith(("_recipe", "recipe_config")) and _nemo(module, call):
            recipes.append(call)
            trainer = call.kwargs.get("trainer")
            if isinstance(trainer, Call):
                _trainer(out, trainer)
            model = call.kwargs.get("model")
            config = model.kwargs.get("config") if isinstance(model, Call) else None
            if isinstance(config, Call):
                for key in MODEL_FIELDS:
                    if key in config.kwargs:
                        out.put(f"{PREFIX}.model.config.{key}", config.kwargs[key],
                                config.lines.get(key, config.line))
        elif name.startswith("HFAutoModel") and _nemo(module, call):
            out.put(f"{PREFIX}.model", name, call.line)
            accelerators.append((call.value("model_accelerator"),
                                 call.lines.get("model_accelerator", call.line)))
            if "enable_grad_ckpt" in call.kwargs:
                out.put(f"{PREFIX}.model.enable_grad_ckpt", call.kwargs["enable_grad_ckpt"],
                        call.lines.get("enable_grad_ckpt", call.line))
    # the recipe a script builds unconditionally is the job's; one built under a condition
    # the text does not decide (the perf scripts' `if args.dump_config_diff...:
    # pretrain_recipe(performance_mode=False)`, a base to diff against) counts only alone
    made = [c for c in recipes if c.when is None] or recipes[:1]
    for call in made:
        out.put(f"{PREFIX}.recipe", call.when or call.func.removeprefix("nemo.collections.llm."),
                call.line)
    for value, line in accelerators:
        _accelerator(out, value, line)
    # the perf scripts and their helpers by their names, in a file that imports NeMo (or
    # NeMo-Run): Megatron-Bridge's performance scripts have modules of the same names and
    # import NeMo-Run too, but take -mr/--model_recipe_name, which NeMo 2's never had
    # (holdout11: its setup_experiment.py was claimed here and the -c fp8_mx launch left unread)
    if any(v.lstrip(".").split(".")[0] in ("nemo", "nemo_run") for v in module.imports.values()) \
            and not _megatron_bridge_perf(module):
        _perf(module, out)
        _helper_module(module, out)
    return out.output()


def _megatron_bridge_perf(module: Module) -> bool:
    """A file of Megatron-Bridge's performance scripts (read by its launch line:
    :mod:`.megatron_bridge_perf`): its parser's ``-mr/--model_recipe_name`` option, or its
    launcher's name."""
    return "model_recipe_name" in module.options or bool(
        _MBRIDGE_PERF.search(module.path.replace(os.sep, "/")))


_MBRIDGE_PERF = re.compile(r"(?:^|/)scripts/performance/(?:setup_experiment|run_script|"
                           r"bootstrap)\.py$")


def _trainer(out: PyOut, call: Call) -> None:
    """``nl.Trainer(...)`` or a recipe's ``trainer`` with the attributes set on it."""
    for key in _TRAINER_KEYS:
        if key in call.kwargs:
            out.put(f"{PREFIX}.trainer.{key}", call.kwargs[key], call.lines.get(key, call.line))
    strategy = call.kwargs.get("strategy")
    if isinstance(strategy, Call):
        if strategy.name:          # a strategy object; "" = attributes set on the recipe's
            out.put(f"{PREFIX}.trainer.strategy", strategy.name, strategy.line)
        for key in STRATEGY_FIELDS:
            if key in strategy.kwargs:
                out.put(f"{PREFIX}.strategy.{key}", strategy.kwargs[key],
                        strategy.lines.get(key, strategy.line))
    elif strategy is not None:
        out.put(f"{PREFIX}.trainer.strategy", strategy, call.lines.get("strategy", call.line))
    if "plugins" in call.kwargs:
        _plugins(out, call.kwargs["plugins"], call.lines.get("plugins", call.line))


def _plugins(out: PyOut, value: Any, line: int) -> None:
    """The precision plugin among ``plugins`` (one object or a list)."""
    items = value if isinstance(value, list) else [value]
    found = [p for p in items if isinstance(p, Call) and _precision_plugin(p)]
    unknown = next((p for p in items if isinstance(p, Unresolved)), None)
    if not found:
        out.put(f"{PREFIX}.plugins", unknown if unknown is not None else
                "none" if not items or all(p is None for p in items) else
                Unresolved("trainer.plugins holds no precision plugin the text shows "
                           f"({', '.join(p.name if isinstance(p, Call) else type(p).__name__ for p in items)[:80]})",
                           line), line)
        return
    plugin = found[-1]
    fields = dict(plugin.kwargs)
    cls = plugin.args[0] if plugin.name == "Config" and plugin.args else None
    name = cls.last if isinstance(cls, Ref) else plugin.name
    out.put(f"{PREFIX}.plugins", name, plugin.line)
    for key in PLUGIN_FIELDS:
        if key in fields:
            out.put(f"{PREFIX}.plugins.{key}", fields[key], plugin.lines.get(key, plugin.line))
    if plugin.star is not None:
        for key in PLUGIN_FIELDS:
            if key not in fields:
                out.put(f"{PREFIX}.plugins.{key}", plugin.star, plugin.star.line or line)


def _precision_plugin(call: Call) -> bool:
    """A MegatronMixedPrecision (``nl.MegatronMixedPrecision(...)``, ``run.Config(
    MegatronMixedPrecision, ...)``) or one of NeMo's precision factories."""
    if call.name == "Config" and call.args and isinstance(call.args[0], Ref):
        return call.args[0].last == "MegatronMixedPrecision"
    return call.name == "MegatronMixedPrecision" or call.name.endswith("_mixed")


def _accelerator(out: PyOut, value: Any, line: int) -> None:
    """``model_accelerator=TEConfig(fp8_autocast=...)`` of an HF AutoModel."""
    if isinstance(value, Call):
        out.put(f"{PREFIX}.model_accelerator", value.name, value.line)
        if value.name == "TEConfig":
            out.put(f"{PREFIX}.model_accelerator.fp8_autocast",
                    value.value("fp8_autocast", False),
                    value.lines.get("fp8_autocast", value.line))
    else:
        out.put(f"{PREFIX}.model_accelerator", "none" if value is None else value, line)


def _perf(module: Module, out: PyOut) -> None:
    """A performance script: ``set_primary_perf_configs(..., compute_dtype=args.compute_dtype,
    fp8_recipe=args.fp8_recipe)`` with ``args`` from the job's ``argument_parser.py``."""
    setters = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and
               isinstance(n.func, ast.Name) and n.func.id in _PERF_SETTERS and
               module.imports.get(n.func.id, "").endswith(f"helpers.{n.func.id}")]
    if not setters:
        return
    # the perf scripts' own modules belong to the job (read when they hold settings)
    for name in ("parse_cli_args", _PERF_SETTERS[0]):
        target = _sibling(module, name)
        if target is not None:
            link = named(target, KIND, module.path, out.where(setters[0].lineno),
                         key=f"import {name}", line=None)
            out.linked.append(replace(link, optional=True))
    parser = _argument_parser(module)
    for node in setters[:4]:
        for kw in node.keywords:
            if kw.arg not in ("compute_dtype", "fp8_recipe"):
                continue
            dest = kw.value.attr if isinstance(kw.value, ast.Attribute) and \
                isinstance(kw.value.value, ast.Name) and kw.value.value.id == "args" else None
            value: Any
            if dest is None:
                value = Unresolved(f"{kw.arg}= is not an option of the command line", node.lineno)
            elif isinstance(parser, Unresolved):
                value = parser
            else:
                value = parser.option(dest)
            out.put(f"{PREFIX}.perf.{kw.arg}", value, kw.value.lineno)


def _argument_parser(module: Module) -> Module | Unresolved:
    """The job's ``argument_parser.py`` the script takes ``parse_cli_args`` from, parsed with
    the launch line's arguments (only a file inside the job; never run)."""
    target = module.imports.get("parse_cli_args", "")
    if not target.endswith("argument_parser.parse_cli_args"):
        return Unresolved("the script's command-line parser (parse_cli_args) is not imported "
                          "from an argument_parser module")
    path = _sibling(module, "parse_cli_args")
    if path is None:
        return Unresolved(f"the options come from {target.removesuffix('.parse_cli_args')} "
                          "(an installed module), not read")
    try:
        return Module(path, parse(path, read_text(path)), module.argv,
                      environ=module.environ)
    except (ParseError, OSError, RecursionError) as exc:
        why = exc.message if isinstance(exc, ParseError) else str(exc)
        return Unresolved(f"{os.path.basename(path)} (the script's command-line options) was "
                          f"not read: {why[:160]}")


def _sibling(module: Module, name: str) -> str | None:
    """The file of the job a relative ``from ..x import name`` takes ``name`` from (None for
    an absolute import: an installed module)."""
    dotted = module.imports.get(name, "").removesuffix(f".{name}")
    level = len(dotted) - len(dotted.lstrip("."))
    if not dotted or level == 0 or level > 16:
        return None
    folder = os.path.dirname(module.path)
    for _ in range(level - 1):
        folder = os.path.dirname(folder)
    return os.path.join(folder, *dotted.lstrip(".").split(".")) + ".py"


_CODE = re.compile(r"^\w{1,32}$")


def _helper_module(module: Module, out: PyOut) -> None:
    """The performance scripts' helper modules read alone or with the script: which factory
    ``helpers.set_precision_configs`` sets for each ``-fr`` code (``if fp8_recipe.lower() ==
    "mxfp8": recipe.trainer.plugins = bf16_with_mxfp8_mixed()``, and fields it sets on it),
    and the defaults ``argument_parser.parse_cli_args`` gives ``-c`` / ``-fr``."""
    fn = module.functions.get(_PERF_SETTERS[2])
    for node in ast.walk(fn[0]) if fn is not None else ():
        code = _recipe_test(node.test) if isinstance(node, ast.If) else None
        if code is None:
            continue
        for stmt in node.body:     # type: ignore[attr-defined]
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], ast.Attribute)):
                continue
            path = attr_path(stmt.targets[0]) or ()
            if path[-2:] == ("trainer", "plugins") and isinstance(stmt.value, ast.Call) and \
                    isinstance(stmt.value.func, ast.Name):
                out.put(f"{PREFIX}.perf.factory.{code}", stmt.value.func.id, stmt.lineno)
            elif path[-3:-1] == ("trainer", "plugins") and \
                    isinstance(stmt.value, ast.Constant) and _CODE.match(path[-1]):
                out.put(f"{PREFIX}.perf.sets.{code}.{path[-1]}", stmt.value.value, stmt.lineno)
    if "parse_cli_args" in module.functions:
        for dest in ("compute_dtype", "fp8_recipe"):
            opt = module.options.get(dest)
            if opt is not None:
                out.put(f"{PREFIX}.perf.defaults.{dest}", opt.default, opt.line)


def _recipe_test(test: ast.expr) -> str | None:
    """``X`` of ``fp8_recipe.lower() == "X"``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
            isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Call) and
            isinstance(test.left.func, ast.Attribute) and test.left.func.attr == "lower" and
            isinstance(test.left.func.value, ast.Name) and
            test.left.func.value.id == "fp8_recipe"):
        return None
    value = test.comparators[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and \
            _CODE.match(value.value):
        return value.value.lower()
    return None
