"""A PyTorch training loop that calls Transformer Engine or torchao itself (no trainer framework):
read from the script's syntax tree, never run.

Transformer Engine (read at NVIDIA/TransformerEngine v2.18 62f366a,
transformer_engine/pytorch/quantization.py and common/recipe/__init__.py): ``te.autocast`` /
``te.fp8_autocast(enabled=True, recipe=...)`` (``enabled`` defaults to True from TE 1.0; 0.x
defaulted to False), a recipe object (``DelayedScaling`` and ``Float8CurrentScaling`` default to
HYBRID, ``MXFP8BlockScaling`` and ``Float8BlockScaling`` to E4M3; no recipe is TE's
``get_default_fp8_recipe()``, which depends on the TE version and the GPU:
``intent.recipe_by_backend``), ``quantized_model_init`` / ``fp8_model_init`` (FP8 parameters), TE modules,
and activation checkpointing through ``torch.utils.checkpoint`` (TE layers recompute outside the
autocast: FP8D-TE-0002) or TE's own ``checkpoint``. torchao: ``convert_to_float8_training(model,
config=..., module_filter_fn=...)`` with ``Float8LinearConfig.from_recipe_name(...)`` (no config:
``Float8LinearConfig()``, tensorwise; fields that leave the scaling alone, such as
``enable_fsdp_float8_all_gather``, keep it tensorwise: torchao v0.16.0 float8/config.py l.180-275).
A model wrapped in ``DistributedDataParallel`` (``ddp``), FSDP1's ``FullyShardedDataParallel``
(``fsdp1``) or FSDP2 ``fully_shard(...)`` (with or without a ``mesh``) and the ``torchrun --nproc_per_node N
--nnodes M`` line that runs the script (``config.pytorch.launch.*``, :mod:`preflight.jobs.scripts`)
give the distribution, the world size and what each parameter is sharded over. ``torch.compile``
calls say the model is compiled.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.frameworks.pytorch_loop import HINT, training_step
from preflight.frameworks.pytorch_loop_eval import training_side
from preflight.frameworks.pytorch_own import own_fp8
from preflight.frameworks.pytorch_te import (
    dims_align,
    fp8_attention,
    gemm_sizes,
    model_loaded,
    te_modules,
    te_refs,
)
from preflight.reading.parse import Parsed, ParseError, read_text
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref
from preflight.reading.pyvalues import Unresolved, dotted
from preflight.reading.types import ReaderOutput
from preflight.registry.intent import RECIPES

KIND = "pytorch"
PREFIX = f"config.{KIND}"
PY_HINT = re.compile(r"transformer_engine|torchao|fp8_autocast|convert_to_float8_training|_scaled_"
                     r"(?:grouped_)?mm")
_RECIPES = {"DelayedScaling": ("delayed", "hybrid"), "Float8CurrentScaling": ("current", "hybrid"),
            "MXFP8BlockScaling": ("mxfp8", "e4m3"), "Float8BlockScaling": ("blockwise", "e4m3"),
            "NVFP4BlockScaling": ("nvfp4", None)}
# Float8LinearConfig fields that leave the scaling recipe as it is (torchao v0.16.0
# float8/config.py l.218-246): a config built from these alone is still tensorwise.
_NOT_SCALING = frozenset({"enable_fsdp_float8_all_gather", "pad_inner_dim", "emulate",
                          "force_recompute_fp8_weight_in_bwd", "round_scales_to_power_of_2"})
# Data-parallel wrappers a training loop calls itself (torch v2.10.0: nn/parallel/distributed.py,
# distributed/fsdp/fully_sharded_data_parallel.py); FSDP2's fully_shard is read apart (its mesh).
_WRAPPERS = {"torch.nn.parallel.DistributedDataParallel": "ddp",
             "torch.nn.parallel.distributed.DistributedDataParallel": "ddp",
             "torch.distributed.fsdp.FullyShardedDataParallel": "fsdp1",
             "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel": "fsdp1"}
_TE_MODULES = frozenset({"Linear", "LayerNormLinear", "LayerNormMLP", "TransformerLayer",
                         "GroupedLinear", "MultiheadAttention", "DotProductAttention"})


def _te(call: Call) -> str | None:
    return call.name if call.func.startswith("transformer_engine.") else None


def read_python(module: Module) -> ReaderOutput:
    """TE and torchao calls of a training loop -> ``config.pytorch.*`` at their lines; a loop
    with none of them is read only when it trains and no other framework takes it
    (:mod:`.pytorch_loop`), then ``config.pytorch.training_loop`` at its backward pass."""
    out = PyOut(module)
    words = _fp8_words(module)
    if not words and not _loop(out, module):
        return ReaderOutput()
    modules: set[str] = set()
    built: list[tuple[Call, str]] = []
    calls = [c for c, _ in out.module.calls()]
    regions = {what: [c for c in calls if _te(c) in names] for what, names in
               (("te.autocast", ("autocast", "fp8_autocast")),
                ("te.model_init", ("quantized_model_init", "fp8_model_init")))}
    for what, made in regions.items():
        # an autocast in evaluation code beside the training step's: the step decides
        made = training_side(out.module, made, {id(c): c.line if c.path is None else None
                                                for c in made})
        # `with te.autocast(enabled=False):` inside the FP8 region keeps that part in high
        # precision (autocasts nest: transformer_engine/pytorch/quantization.py at v2.18): where
        # the file also opens an FP8 one, those are exclusions, not a second setting
        on = [c for c in made if c.value("enabled", True) is not False]
        if on and len(on) < len(made):
            out.put(f"{PREFIX}.{what}.disabled_regions", len(made) - len(on), None)
        for call in on or made:
            with out.made(call):
                _autocast(out, call, what,
                          "fp8_recipe" if _te(call) == "fp8_autocast" else "recipe")
    for call, _ in out.calls():
        te = _te(call)
        if te in ("autocast", "fp8_autocast", "quantized_model_init", "fp8_model_init"):
            continue
        elif te in _TE_MODULES:
            modules.add(te)
            built.append((call, te))
        elif te == "checkpoint":
            out.put(f"{PREFIX}.checkpoint", "te", call.line)
        elif call.func in ("torch.utils.checkpoint.checkpoint",
                           "torch.utils.checkpoint.checkpoint_sequential"):
            out.put(f"{PREFIX}.checkpoint", "torch.utils.checkpoint", call.line)
            if "use_reentrant" in call.kwargs:
                out.put(f"{PREFIX}.checkpoint_use_reentrant", call.kwargs["use_reentrant"],
                        call.lines["use_reentrant"])
        elif call.name == "convert_to_float8_training" and call.func.startswith("torchao"):
            _torchao(out, call)
        elif call.func == "torch.compile":
            out.put(f"{PREFIX}.compile", True, call.line)
        elif call.func in _WRAPPERS:
            # the model wrapped in code (torch.nn.parallel.DistributedDataParallel as DDP, ...)
            out.put(f"{PREFIX}.wrapper.{_WRAPPERS[call.func]}", True, call.line)
        elif call.name == "fully_shard" and call.func.startswith("torch.distributed"):
            # FSDP2; without a mesh it shards over every rank (torch.distributed.fsdp
            # fully_shard: `mesh = mesh or _init_default_fully_shard_mesh()`, v2.10.0)
            out.put(f"{PREFIX}.fully_shard", True, call.line)
            mesh = call.value("mesh")
            out.put(f"{PREFIX}.fully_shard_mesh", Unknown("a **mapping may give the mesh")
                    if isinstance(mesh, Unresolved) else mesh is not None or len(call.args) > 1,
                    call.lines.get("mesh", call.line))
    modules |= te_refs(out.module)
    if modules:
        out.put(f"{PREFIX}.te.modules", sorted(modules), None)
    gemm_sizes(out, PREFIX, built)
    if words and not out.facts:
        # its FP8 calls only in branches that do not run (holdout19 bdh trainer.py,
        # `if config.low_precision.use_fp8 and ...: te.fp8_autocast`, use_fp8 false): a loop
        _loop(out, module)
    if out.facts:       # (a file this reader says nothing else about is no PyTorch job)
        model_loaded(out, PREFIX, calls)
    if not any(c.func == "torch.compile" for c in calls) and not out.module.bindings:
        _compile_not_run(out)       # (a helper module's unused compile says nothing)
    own_fp8(out, PREFIX)
    return out.output()


def _loop(out: PyOut, module: Module) -> bool:
    """``config.pytorch.training_loop`` at the backward pass of a loop no other framework
    takes (:mod:`.pytorch_loop`); False when ``module`` is no such loop."""
    line = training_step(module, KIND)
    if line is not None:
        out.put(f"{PREFIX}.training_loop", True, line)
    return line is not None


def _fp8_words(module: Module) -> bool:
    try:
        return PY_HINT.search(read_text(module.path)) is not None
    except (ParseError, OSError):
        return True


def _compile_not_run(out: PyOut) -> None:
    """The file compiles only in branches the launch line's values show do not run
    (lightning-thunder 1e22aacb, benchmark_litgpt.py:667-672 ``if self.compile == "inductor":
    model = torch.compile(model)`` under ``--compile eager``): not compiled here."""
    module = out.module
    for scope in module.scopes:
        for node in scope.calls:
            if isinstance(node.func, (ast.Attribute, ast.Name)) and \
                    dotted(node.func) in ("torch.compile", "compile"):
                func = module.evaluate(node.func, scope, 1)
                if isinstance(func, Ref) and func.name == "torch.compile":
                    out.put(f"{PREFIX}.compile", False, node.lineno)
                    return


def _autocast(out: PyOut, call: Call, what: str, recipe_key: str) -> None:
    enabled = call.value("enabled", True)      # the default since TE 1.0
    out.put(f"{PREFIX}.{what}.enabled", enabled, call.lines.get("enabled", call.line))
    recipe = call.value(recipe_key, call.value("recipe"))
    if isinstance(recipe, Call) and not recipe.func.startswith("transformer_engine."):
        # redteam8: the job's own `class DelayedScaling:` (or one of another module) is no TE
        # recipe, whatever its name
        out.put(f"{PREFIX}.{what}.recipe", Unknown(
            f"{recipe.func.removeprefix('__main__.')}() is not a Transformer Engine recipe "
            "class"), recipe.line, recipe.path)
    elif isinstance(recipe, Call):
        out.put(f"{PREFIX}.{what}.recipe", recipe.name, recipe.line, recipe.path)
        for key, value in recipe.kwargs.items():
            out.put(f"{PREFIX}.{what}.recipe_args.{key}",
                    value.last if isinstance(value, Ref) else value,
                    recipe.lines.get(key, recipe.line), recipe.path)
    elif recipe is None:
        # TE's get_default_fp8_recipe(): which one depends on the TE version and the GPU
        # (effective.recipe from intent.recipe_by_backend)
        out.put(f"{PREFIX}.{what}.recipe_by_backend", True, call.line)
    else:
        out.put(f"{PREFIX}.{what}.recipe", recipe, call.lines.get(recipe_key, call.line))


def _torchao(out: PyOut, call: Call) -> None:
    out.put(f"{PREFIX}.torchao.convert", True, call.line)
    config = call.value("config")
    recipe: Any = "tensorwise"                  # Float8LinearConfig(): tensorwise scaling
    if isinstance(config, Call):
        if config.name == "from_recipe_name":
            recipe = config.args[0] if config.args else config.kwargs.get("recipe_name")
        elif config.args or config.star is not None or set(config.kwargs) - _NOT_SCALING:
            recipe = Unknown("a Float8LinearConfig built field by field")
        # emulate=True: every float8 matmul dequantized and run in FP32 (FP8D-TAO-0016)
        for field in ("enable_fsdp_float8_all_gather", "emulate"):
            if field in config.kwargs:
                out.put(f"{PREFIX}.torchao.{field}", config.kwargs[field],
                        config.lines.get(field, config.line), config.path)
    elif config is not None:
        recipe = config
    out.put(f"{PREFIX}.torchao.recipe", recipe, call.lines.get("config", call.line))
    out.put(f"{PREFIX}.torchao.module_filter_fn", call.value("module_filter_fn") is not None,
            call.lines.get("module_filter_fn", call.line))


def score(data: Any) -> int:
    """A training loop is read from Python only."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("a PyTorch training loop is read from its Python script")


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    p = View(f, KIND, prov)
    out = IntentOut()
    if p.has("te.autocast.enabled"):
        enabled = p.get("te.autocast.enabled")
        src = p.src("te.autocast.enabled")
        out["fp8"] = (enabled if isinstance(enabled, bool) else
                      p.unknown("te.autocast.enabled") or Unknown(f"enabled={enabled!r}"), src)
        out["backend"] = ("te", src)
        if p.truthy("te.autocast.recipe_by_backend"):
            out["recipe_by_backend"] = (True, p.src("te.autocast.recipe_by_backend"))
            return _rest(p, out)
        cls = str(p.get("te.autocast.recipe"))
        recipe, fmt = _RECIPES.get(cls, (None, None))
        rsrc = p.src("te.autocast.recipe", src)
        out["recipe"] = (p.unknown("te.autocast.recipe") or recipe or Unknown(f"a {cls} recipe"),
                         rsrc)
        fp8_attention(p, out)
        given = p.get("te.autocast.recipe_args.fp8_format")
        if given is not None or fmt is not None:
            out["format"] = (str(given or fmt).lower(),
                             p.src("te.autocast.recipe_args.fp8_format", rsrc))
    elif p.unknown("torchao.convert"):
        out["fp8"] = (p.unknown("torchao.convert"), p.src("torchao.convert"))
        out["backend"] = ("torchao", p.src("torchao.convert"))
    elif p.truthy("torchao.convert"):
        src = p.src("torchao.convert")
        out["fp8"] = (True, src)
        out["backend"] = ("torchao", src)
        recipe = p.get("torchao.recipe")
        out["recipe"] = (recipe if isinstance(recipe, str) else
                         p.unknown("torchao.recipe") or Unknown("torchao recipe"),
                         p.src("torchao.recipe", src))
    elif p.has("own_fp8.convert"):
        # FP8 the job wrote itself on torch._scaled_mm (nanochat's Float8Linear): no torchao
        src = p.src("own_fp8.convert")
        out["fp8"] = (p.unknown("own_fp8.convert") or p.get("own_fp8.convert") is True, src)
        out["backend"] = ("scaled_mm", src)
        recipe = p.get("own_fp8.recipe")
        out["recipe"] = (recipe if isinstance(recipe, str) and recipe in RECIPES else
                         p.unknown("own_fp8.recipe") or Unknown(f"the job's own recipe {recipe!r}"),
                         p.src("own_fp8.recipe", src))
    elif p.truthy("training_loop"):
        # a training loop that calls no FP8 API trains in the precision it sets itself
        out["fp8"] = (False, p.src("training_loop"))
    return _rest(p, out)


def _rest(p: View, out: IntentOut) -> Derived:
    """Checkpointing, FP8 parameters, compile and distribution, whatever the backend; the TE
    modules' sizes (:mod:`.pytorch_te`)."""
    dims_align(p, out, out.get("recipe", (None,))[0])
    te_modules(p, out)
    if p.has("checkpoint"):
        out["activation_checkpointing"] = (True, p.src("checkpoint"))
    if p.has("te.model_init.enabled"):
        out["fp8_params"] = (p.get("te.model_init.enabled") is True, p.src("te.model_init.enabled"))
    if p.truthy("compile") or p.get("compile") is False:
        out["compile"] = (p.get("compile") is not False, p.src("compile"))
    gpus, nodes = p.int("launch.nproc_per_node"), p.int("launch.nnodes")
    if gpus is not None and gpus > 0:
        out["num_gpus"] = (gpus * (nodes if nodes is not None and nodes > 0 else 1),
                           p.src("launch.nproc_per_node"))
    wrapped = sorted({w for w in ("ddp", "fsdp1") if p.truthy(f"wrapper.{w}")} |
                     ({"fsdp2"} if p.truthy("fully_shard") else set()))
    if len(wrapped) == 1:
        key = "fully_shard" if wrapped[0] == "fsdp2" else f"wrapper.{wrapped[0]}"
        out["distributed"] = (wrapped[0], p.src(key))
    elif wrapped:
        out["distributed"] = (Unknown(f"the script wraps the model in {' and '.join(wrapped)}"),
                              p.src("fully_shard", p.src(f"wrapper.{wrapped[0]}")))
    if p.truthy("fully_shard"):
        if p.get("fully_shard_mesh") is False and "num_gpus" in out:
            out["fsdp_shard_size"] = (out["num_gpus"][0], p.src("launch.nproc_per_node"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="PyTorch training loop (Transformer Engine / torchao in code)",
    formats=("python",), score=score, read=read, derive=derive, precedence=12,
    read_python=read_python,
    python_hint=re.compile(f"{PY_HINT.pattern}|{HINT.pattern}"), torchrun_size=True,
    defaults=(
        Default("te.autocast(enabled=)", "True", "transformer-engine >= 1.0",
                "transformer_engine/pytorch/quantization.py (v2.18)"),
        Default("autocast recipe", "get_default_fp8_recipe(): by TE version and GPU "
                "(effective.recipe)", "all", "transformer_engine/pytorch/quantization.py"),
        Default("convert_to_float8_training(config=)", "Float8LinearConfig(): tensorwise",
                "all", "torchao/float8/config.py"),
    ),
)
