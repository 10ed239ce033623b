"""The mixed precision a Megatron-Bridge recipe function sets, read from the job's own copy of
Megatron-Bridge (never imported or run).

A job launched from a Megatron-Bridge checkout (``uv run python scripts/training/run_recipe.py
--recipe nemotron_3_super_pretrain_config``) runs the recipes of that checkout, whatever release
the recipe table describes: holdout8's checkout of 2026-05-18 sets
``cfg.mixed_precision = "nemotron_3_super_bf16_with_nvfp4_mixed"``
(src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py:101 at NVIDIA-NeMo/Megatron-Bridge
0dae7282), which v0.6.0 changed to BF16. :func:`recipe_in_job` finds ``def <recipe>(`` under
``src/megatron/bridge/recipes`` (or ``perf_recipes``) of a job root and reads, by its syntax
tree, the last ``<x>.mixed_precision = "<preset>"`` / ``= <preset>()`` in the function's own
body. A function that sets none there (it starts from a helper) is left to the recipe table; an
assignment under a condition or loop, or of an expression, is Unknown.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.reading.boundary import checkout_holding, current
from preflight.reading.parse import ParseError, read_text

_TREES = ("src/megatron/bridge/recipes", "src/megatron/bridge/perf_recipes")
MAX_FILES = 2000
"""Python files looked at under one recipes folder (Megatron-Bridge v0.6.0 has 291)."""


def _roots(naming_file: str) -> list[str]:
    boundary = current()
    if boundary is not None:
        return list(boundary.roots)
    top = checkout_holding(naming_file)
    return [top] if top else [os.path.dirname(os.path.abspath(naming_file))]


def _candidates(name: str, naming_file: str) -> list[str]:
    needle = f"def {name}("
    found: list[str] = []
    for root in _roots(naming_file):
        for tree in _TREES:
            folder = Path(root, tree)
            if not folder.is_dir() or folder.is_symlink():
                continue
            for count, path in enumerate(sorted(folder.rglob("*.py"))):
                if count >= MAX_FILES:
                    break
                try:
                    if not path.is_symlink() and needle in read_text(str(path)):
                        found.append(str(path))
                except ParseError:
                    continue
    return found


def _preset_of(value: ast.expr) -> str | None:
    """The preset a ``mixed_precision`` assignment names: ``"x"``, ``x()`` (a preset
    function), ``get_mixed_precision_config("x")``; None for anything else."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Call):
        func = value.func
        callee = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        if callee == "get_mixed_precision_config" and value.args and \
                isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str):
            return value.args[0].value
        if presets.preset(callee) is not None and not value.args and not value.keywords:
            return callee
    return None


def _sets(stmt: ast.stmt) -> list[ast.Assign | ast.AnnAssign]:
    """The ``<x>.mixed_precision = ...`` assignments in ``stmt`` (nested ones too)."""
    out: list[ast.Assign | ast.AnnAssign] = []
    for node in ast.walk(stmt):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Attribute) and t.attr == "mixed_precision" for t in targets):
            out.append(node)    # type: ignore[arg-type]
    return out


def recipe_in_job(name: str, naming_file: str) -> tuple[str | Unknown, Source] | None:
    """The preset name (or Unknown, why) recipe ``name`` of the job's Megatron-Bridge copy sets,
    at its file and line; None when the job holds no such function or it sets none itself."""
    for path in _candidates(name, naming_file):
        try:
            tree = ast.parse(read_text(path))
        except (ParseError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name),
                    None)
        if func is None:
            continue
        got: tuple[str | Unknown, Source] | None = None
        for stmt in func.body:
            for node in _sets(stmt):
                where = Source(path, node.lineno)
                if node is not stmt:
                    return Unknown(f"{os.path.basename(path)}:{node.lineno}: recipe {name} sets "
                                   "mixed_precision under a condition or loop, not decided "
                                   "here"), where
                value = node.value
                preset = _preset_of(value) if value is not None else None
                got = (preset, where) if preset is not None else (Unknown(
                    f"{os.path.basename(path)}:{node.lineno}: recipe {name} sets mixed_precision "
                    "to an expression not read here"), where)
        return got
    return None
