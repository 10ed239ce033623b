"""Megatron-Bridge scripts that build their config from a library recipe function, read by their
syntax tree (never imported or run): ``config.megatron_bridge.*`` facts (issue 22, holdout6).

Every Megatron-Bridge example script has this shape (examples/quantization/
pretrain_quantized_llama3_8b.py at NVIDIA-NeMo/Megatron-Bridge 067f987d, lines 75, 99-121,
150-195)::

    from megatron.bridge.recipes.llama import llama3_8b_pretrain_config as pretrain_config
    args, cli_overrides = parser.parse_known_args()
    cfg: ConfigContainer = pretrain_config()
    cfg.model.x = ...                      # the script's own edits
    merged = OmegaConf.merge(OmegaConf.structured(cfg), OmegaConf.load(args.config_file))
    merged = parse_hydra_overrides(merged, cli_overrides)   # torchrun ... key=value
    apply_overrides(cfg, OmegaConf.to_container(merged), excluded_fields)

Read here: the recipe function called, through its import (``as`` aliases included), as
``config.megatron_bridge.recipe`` (its name; the preset it ends up with is the recipe table's,
:func:`.megatron_bridge_presets.for_recipe`); the attributes the script sets on the result
(``cfg.mixed_precision = "bf16_with_mxfp8_mixed"`` or a preset factory's call, ``cfg.model.fp8
= ...``) as ``config.megatron_bridge.<section>.<field>``; and, when the script applies Hydra
overrides from its command line (``parse_hydra_overrides`` / ``process_config_with_overrides``
of ``megatron.bridge.training.utils.omegaconf_utils``), the ``key=value`` words of the launch line
that runs it (those that are no value of the script's own argparse options), which win. The
``--config-file`` YAML is read as a file of its own (``megatron_bridge.read_yaml``). A recipe
built under a condition the text does not decide, or two different ones, leave it Unknown.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.reading.overrides import OverrideError, is_dotlist, parse_hydra
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.types import ReaderOutput

KIND = "megatron_bridge"
PREFIX = f"config.{KIND}"
PY_HINT = re.compile(r"\bmegatron\.bridge\.(?:perf_)?recipes\b")
_RECIPES = ("megatron.bridge.recipes.", "megatron.bridge.perf_recipes.")
# ConfigContainer's sections (src/megatron/bridge/training/config.py): the attributes of a
# recipe's result; any other keyword of the recipe call is an argument of the function
SECTIONS = frozenset({
    "model", "train", "optimizer", "scheduler", "dataset", "logger", "tokenizer", "checkpoint",
    "dist", "ddp", "rng", "mixed_precision", "comm_overlap", "peft", "profiling", "ft",
    "straggler", "nvrx_straggler", "inprocess_restart", "rerun_state_machine", "tensor_inspect",
    "validation"})
_APPLIES = frozenset({"parse_hydra_overrides", "process_config_with_overrides"})
# the base templates of recipes/common.py (`_sft_common()`, v0.3.1+: bf16_mixed), which a
# user's own recipe function starts from (awslabs/awsome-distributed-ai 4ee69021
# 3.test_cases/megatron/megatron-bridge/dsv3/conf/dsv3_sft.py l.42, 116): tabled like the
# public recipes (tools/megatron_bridge_recipes.py COMMON)
TEMPLATE = re.compile(r"_\w+_common(?:_\w+)?")
MAX_OVERRIDES = 256


def read_python(module: Module) -> ReaderOutput:
    """The recipe a Megatron-Bridge script builds, its edits and its launch line's overrides."""
    out = PyOut(module)
    recipes: list[Call] = []
    applies = False
    for call, _ in out.calls():
        if call.func.startswith(_RECIPES) and (call.name.endswith("_config") or
                                               TEMPLATE.fullmatch(call.name)):
            recipes.append(call)
        elif call.name in _APPLIES and call.func.startswith("megatron.bridge."):
            applies = True
    if not recipes:
        return ReaderOutput()
    # one recipe, however often called, is the job's; two (one under a condition the text
    # does not decide) leave it Unknown naming both lines (PyOut.put)
    made = recipes if len({c.name for c in recipes}) > 1 else \
        [next((c for c in recipes if c.when is None), recipes[0])]
    for call in made[:8]:
        with out.made(call):
            out.put(f"{PREFIX}.recipe", call.name, call.line)
            _edits(out, call)
    escape = _escape(module, made)
    if escape is not None:
        out.put(f"{PREFIX}.mixed_precision", Unresolved(escape[1], escape[0]), escape[0])
    out.put(f"{PREFIX}.entry", module.path, made[0].line)
    if applies and module.argv is not None:
        _overrides(out, module)
    return out.output()


# what a script may pass the recipe's result to without changing it (the example scripts:
# OmegaConf.structured, apply_overrides with the YAML and command line read here, pretrain /
# finetune, printing and logging)
_KEEP = frozenset({"pretrain", "finetune", "structured", "apply_overrides", "print",
                   "print_yaml", "to_yaml", "info", "debug", "warning", "error", "pformat",
                   "pprint", "str", "repr", "isinstance", "getattr", "hasattr", "type", "len",
                   "id", "log_config", "get_rank_safe"})
_CHANGES = frozenset({"setattr", "exec", "eval", "vars", "update", "setdefault", "__setattr__",
                      "merge_with"})
_PRECISION_ARG = re.compile(r"precision|fp8|fp4|mxfp|nvfp", re.I)


def _escape(module: Module, made: list[Call]) -> tuple[int, str] | None:
    """Where the recipe's result is changed in a way :func:`_edits` does not follow: bound to
    another name (``m = cfg.model; m.fp8 = ...``), given to a function of the script or
    ``setattr`` / ``dataclasses.replace`` / ``exec``, changed through ``__dict__``, or the recipe
    called with a precision argument (older recipes took ``precision_config=``; v0.6.0's take
    none). Each left the recipe's BF16 preset standing (redteam4, issue 21): its mixed
    precision is then Unknown, at that line."""
    for call in made:
        arg = next((k for k in call.kwargs if k not in SECTIONS and _PRECISION_ARG.search(k)),
                   None)
        if arg is not None:
            return call.line, (f"the recipe is called with {arg}= (line {call.line}): what it "
                               "does with it depends on the Megatron-Bridge release")
    lines = {c.line for c in made}
    nodes = list(ast.walk(module.tree))
    names = {t.id for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and
             isinstance(n.value, ast.Call) and n.value.lineno in lines
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
             if isinstance(t, ast.Name)}
    if not names:
        return None

    def rooted(expr: ast.expr, deep: bool = False) -> bool:
        """``cfg`` or ``cfg.section`` (any depth with ``deep``)."""
        depth = 0
        while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)) and \
                (deep or depth < 1):
            expr, depth = expr.value, depth + (not isinstance(expr, ast.Starred))
        return isinstance(expr, ast.Name) and expr.id in names

    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and \
                node.value is not None and rooted(node.value) and not any(
                    isinstance(t, ast.Name) and t.id in names for t in
                    (node.targets if isinstance(node, ast.Assign) else [node.target])):
            return node.lineno, (f"the recipe's config is bound to another name at line "
                                 f"{node.lineno}: what is set through it is not followed")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else ""
        given = [*node.args, *(k.value for k in node.keywords)]
        if name in ("exec", "eval") or name in _CHANGES and (
                any(rooted(a, True) for a in given) or
                isinstance(func, ast.Attribute) and rooted(func.value, True)) or \
                name not in _KEEP and any(rooted(a) for a in given) and not _library(module, func):
            return node.lineno, (f"{name or 'a call'}() at line {node.lineno} takes the "
                                 "recipe's config: what it changes there is not followed")
    return None


def _library(module: Module, func: ast.expr) -> bool:
    """A function of Megatron-Bridge or OmegaConf (``create_omegaconf_dict_config``,
    ``apply_overrides``): what it does with the config is the library's, read as the example
    scripts use it (the YAML and command-line overrides are read here)."""
    ref = module.evaluate(func, module.module)
    if isinstance(ref, Ref):
        return ref.name.startswith(_LIBRARIES)
    return isinstance(func, ast.Name) and _guarded_import(module, func.id)


_LIBRARIES = ("megatron.bridge.", "omegaconf.")


def _guarded_import(module: Module, name: str) -> bool:
    """``name`` is only ever a library import or ``None``: ``try: from megatron.bridge.x import
    f`` / ``except ImportError: f = None`` (dsv3_sft.py l.51-54), then ``if f is not None:
    f(cfg.model, ...)``. Any other binding of the name (a ``def``, another value) is not. The
    file is walked once (a hostile file's thousands of calls each ask)."""
    cache = module.__dict__.setdefault("_mbr_guarded", {})
    if not cache:
        cache.update(_bindings(module.tree))
    return cache.get(name) is True


def _bindings(tree: ast.AST) -> dict[str, bool]:
    """The names whose every binding in the file is a library import or ``None`` (one an
    import)."""
    lib: set[str] = set()
    other: set[str] = {""}                  # never empty once walked
    for node in ast.walk(tree):
        if isinstance(node, (ast.ImportFrom, ast.Import)):
            ours = isinstance(node, ast.ImportFrom) and \
                f"{node.module or ''}.".startswith(_LIBRARIES)
            (lib if ours else other).update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and
                    node.value.value is None):
                other.update(t.id for t in targets if isinstance(t, ast.Name))
    return {name: name not in other for name in lib | other}


def _edits(out: PyOut, call: Call) -> None:
    """The attributes set on the recipe's result (``cfg.a.b = v`` folded into the call)."""
    for key, value in call.kwargs.items():
        line = call.lines.get(key, call.line)
        if key == "mixed_precision" and isinstance(value, Call) and not value.args and (
                not value.func or presets.preset(value.name) is not None):
            # `cfg.mixed_precision.x = v` on the recipe's own MixedPrecisionConfig, or on a
            # preset made here (`cfg.mixed_precision = bf16_with_mxfp8_mixed()` then
            # `cfg.mixed_precision.fp8_dot_product_attention = True`, as Megatron-Bridge's
            # recipes/qwen/gb200/qwen3_moe.py l.37-62 @ v0.6.0 do): the preset stands, with
            # those fields changed (a preset factory takes no arguments)
            if value.func:
                out.put(f"{PREFIX}.mixed_precision", value.name, line)
            for field, inner in value.kwargs.items():
                _tree(out, f"{PREFIX}.mixed_precision.{field}", inner,
                      value.lines.get(field, line), 1)
        elif key == "mixed_precision":
            out.put(f"{PREFIX}.mixed_precision", _preset(value), line)
        elif key in SECTIONS:
            _tree(out, f"{PREFIX}.{key}", value, line, 0)


def _preset(value: Any) -> Any:
    """``mixed_precision``'s value as the preset name it is: a name, a preset factory called
    (``bf16_with_mxfp8_mixed()``), ``get_mixed_precision_config("...")``; else Unknown."""
    if isinstance(value, Call) and not value.args and not value.kwargs and \
            presets.preset(value.name) is not None:
        return value.name
    if isinstance(value, Call) and value.name == "get_mixed_precision_config" and \
            value.args and isinstance(value.args[0], str):
        return value.args[0]
    if isinstance(value, Call):
        return Unresolved(f"mixed_precision is a {value.name or 'computed'}() object the text "
                          "does not give as a preset", value.line)
    return value


def _tree(out: PyOut, name: str, value: Any, line: int, depth: int) -> None:
    if isinstance(value, Call) and not value.func and depth < 8:
        for key, inner in value.kwargs.items():     # `cfg.model.x = v` set field by field
            _tree(out, f"{name}.{key}", inner, value.lines.get(key, line), depth + 1)
        return
    later = _set_after(out, value, line) if depth == 0 else {}
    if later:
        # a section a call built (`cfg.model = AutoBridge.from_hf_pretrained(...)
        # .to_megatron_provider(load_weights=False)`, dsv3_sft.py l.130-132), then fields set
        # on it (`cfg.model.fp8 = ...`): those are read; the call's own keywords are its
        # arguments, not fields, and what it builds stays unsaid
        for key, inner in later.items():
            _tree(out, f"{name}.{key}", inner, value.lines.get(key, line), depth + 1)
        return
    out.put(name, value, line)


def _set_after(out: PyOut, value: Any, line: int) -> dict[str, Any]:
    """The attributes set on a call's result after the statement that makes it."""
    if not isinstance(value, Call) or value.path is not None or not value.kwargs:
        return {}
    at = value.line        # the simple statement that makes it ends where its keywords end
    end = max((n.end_lineno or at for n in ast.walk(out.module.tree)
               if isinstance(n, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)) and
               n.lineno <= at <= (n.end_lineno or at)), default=at)
    return {k: v for k, v in value.kwargs.items() if value.lines.get(k, line) > end}


def _overrides(out: PyOut, module: Module) -> None:
    """``key=value`` words of the launch line, as Hydra parses them, over what the script set
    (``parse_known_args`` leaves them over: a value of one of its own options is no override)."""
    argv = module.argv or ()
    takes_value = {f for a in module.options.values() if a.action == "store" for f in a.flags}
    i, seen = 0, 0
    while i < len(argv) and seen < MAX_OVERRIDES:
        word = argv[i]
        i += 1
        if word.startswith("-"):
            if word in takes_value:
                i += 1
            continue
        if not is_dotlist(word):
            continue
        seen += 1
        try:
            ov = parse_hydra(word, "known only when the launch script runs"
                             if "$" in word or "`" in word else None)
        except OverrideError as exc:
            value: Any = Unknown(f"{word[:60]!r}: {exc}")
            path: tuple[str, ...] = (word.split("=", 1)[0].lstrip("+~"),)
        else:
            if ov.op == "delete":
                continue
            value, path = ov.value, ov.path
        name = f"{PREFIX}.{'.'.join(path)}"
        out.facts[name] = value             # the command line wins over the script's edits
        out.prov[name] = Source(module.path)
