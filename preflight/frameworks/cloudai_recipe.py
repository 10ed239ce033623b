"""cloudai's own NeMo 2 recipe factories (``cloudai_llama3_405b_recipe`` ...): the function a
NeMoRun test's ``recipe_name`` names, read by its syntax tree (never imported or run) from the
job's checkout of cloudai, into the ``config.nemo2.*`` facts :mod:`.nemo2` derives.

cloudai runs ``python cloudai_nemorun.py --factory <recipe_name> -y <overrides>``
(src/cloudai/workloads/nemo_run/slurm_command_gen_strategy.py l.109-150 at v1.3.0, d80e439d);
the ``cloudai_*_recipe`` factories of src/cloudai/workloads/nemo_run/cloudai_nemorun.py build
``run.Partial(llm.pretrain, trainer=run.Config(nl.Trainer, plugins=run.Config(
nl.MegatronMixedPrecision, ...), strategy=run.Config(nl.MegatronStrategy, ...)), optim=run.Config(
nl.MegatronOptimizerModule, config=run.Config(OptimizerConfig, use_precision_aware_optimizer=True,
...)))`` and then set attributes (``recipe.model.config.seq_length = 8192``). The keywords of those
``run.Config`` calls and the attributes set outside any condition are read as literals; one set
under a condition (cloudai a719c120: ``if CLOUDAI_GPU_TYPE == "gb200" and CLOUDAI_GPU_DTYPE ==
"fp8": recipe.optim.config.use_precision_aware_optimizer = False``) is Unknown naming its line.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from preflight.facts import Unknown
from preflight.reading.boundary import above
from preflight.reading.parse import ParseError, read_text

NEMO = "config.nemo2"
FILE = "src/cloudai/workloads/nemo_run/cloudai_nemorun.py"
# run.Config(<class>, ...) -> where its keywords go among the config.nemo2.* facts (nemo2_py's
# names: plugins.<field>, strategy.<arg>, trainer.<key>; optim.config.<field> for Megatron-Core's
# OptimizerConfig)
_SECTIONS = {"MegatronMixedPrecision": "plugins", "MegatronStrategy": "strategy",
             "Trainer": "trainer", "OptimizerConfig": "optim.config",
             "DistributedDataParallelConfig": "strategy.ddp"}
# recipe.<path> attributes -> the same facts
_ATTRS = (("trainer.plugins.", "plugins."), ("trainer.strategy.", "strategy."),
          ("trainer.", "trainer."), ("optim.config.", "optim.config."),
          ("model.config.", "model.config."))
_MAX_UP = 8          # conf/common/test/x.toml -> the checkout's top, with room for deeper trees
_MAX_NODES = 20000   # a factory is ~150 lines; more than this is no recipe of cloudai's


def _last(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < 16:
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _value(node: ast.expr, where: str) -> Any:
    """A literal, the dotted name of a constant (``torch.bfloat16``), else Unknown."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)) or \
            isinstance(node, ast.Constant) and node.value is None:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    dotted = _dotted(node)
    if dotted is not None and isinstance(node, ast.Attribute):
        return dotted
    return Unknown(f"computed at {where} ({type(node).__name__}), not read")


def locate(toml_path: str) -> str | None:
    """cloudai_nemorun.py of the checkout holding the test TOML, inside the job; else None."""
    root = above(toml_path, FILE, False, _MAX_UP)
    return os.path.join(root, FILE) if root is not None else None


def read_factory(toml_path: str, name: str) -> tuple[dict[str, Any], dict[str, str]] | Unknown:
    """The ``config.nemo2.*`` facts the factory ``name`` sets, or Unknown with the reason."""
    path = locate(toml_path)
    if path is None:
        return Unknown(f"the recipe {name} is a factory of cloudai's {FILE}, which is not in the "
                       "job (its precision plugin and optimizer are not known)")
    try:
        tree = ast.parse(read_text(path), filename=path)
    except (ParseError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        why = exc.message if isinstance(exc, ParseError) else type(exc).__name__
        return Unknown(f"{path}: not read ({str(why)[:160]}), so the recipe {name} is not known")
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return Unknown(f"{path} defines no function {name} (the test's recipe_name)")
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    budget = _MAX_NODES
    for node in ast.walk(fn):
        budget -= 1
        if budget < 0:
            return Unknown(f"{path}:{fn.lineno}: {name} is larger than any recipe factory "
                           f"({_MAX_NODES} nodes): not read")
        if isinstance(node, ast.Call) and _last(node.func) == "Config" and node.args:
            _config(node, path, facts, prov)
    _attributes(fn.body, path, facts, prov, None)
    return facts, prov


def _config(call: ast.Call, path: str, facts: dict[str, Any], prov: dict[str, str]) -> None:
    """``run.Config(nl.MegatronMixedPrecision, precision="bf16-mixed", ...)``."""
    cls = _last(call.args[0])
    section = _SECTIONS.get(cls or "")
    if section is None:
        return
    if section == "plugins":
        facts[f"{NEMO}.plugins"], prov[f"{NEMO}.plugins"] = cls, f"{path}:{call.lineno}"
    elif section == "strategy":
        facts[f"{NEMO}.trainer.strategy"] = cls
        prov[f"{NEMO}.trainer.strategy"] = f"{path}:{call.lineno}"
    for kw in call.keywords:
        if kw.arg is None or isinstance(kw.value, ast.Call):
            continue
        where = f"{path}:{kw.value.lineno}"
        name = f"{NEMO}.{section}.{kw.arg}"
        facts[name], prov[name] = _value(kw.value, where), where


def _attributes(body: list[ast.stmt], path: str, facts: dict[str, Any], prov: dict[str, str],
                cond: int | None) -> None:
    """``recipe.trainer.strategy.x = v`` at the factory's top level (or under a condition: Unknown)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            at = cond or stmt.lineno
            _attributes(stmt.body, path, facts, prov, at)
            _attributes(stmt.orelse, path, facts, prov, at)
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        dotted = _dotted(stmt.targets[0])
        if dotted is None or "." not in dotted:
            continue
        tail = dotted.split(".", 1)[1] + "."
        fact = next((f"{NEMO}.{new}{tail[len(old):-1]}" for old, new in _ATTRS
                     if tail.startswith(old) and len(tail) > len(old) + 1), None)
        if fact is None:
            continue
        where = f"{path}:{stmt.lineno}"
        value = _value(stmt.value, where)
        if cond is not None:
            value = Unknown(f"{dotted} is set under the condition at {FILE}:{cond} (on the "
                            "environment cloudai gives the run), so its value is not known")
        facts[fact], prov[fact] = value, where
