"""A Megatron-Bridge recipe's mixed-precision preset read from the recipe's own source in the job.

``run_recipe.py --recipe nemotron_3_super_pretrain_config`` runs the recipe of the checkout it is
in. The preset table (``preflight/data/megatron_bridge_recipes.json``) is one release's
(v0.6.0), where that recipe is BF16; a checkout of 2026-05 sets
``cfg.mixed_precision = "nemotron_3_super_bf16_with_nvfp4_mixed"`` in it (holdout8: NVFP4 on
H100 missed). When the job holds Megatron-Bridge's source (``src/megatron/bridge/recipes/``
in a folder at or above the launch script, inside the read boundary), the recipe function's
body is read there (parsed with ``ast``, never imported): the preset it names wins over the
table. Bounded: :data:`MAX_UP` folders up, :data:`MAX_FILES` files, each as any job file; once
per check for a folder and recipe.
"""

from __future__ import annotations

import ast
import os
import re

from preflight.reading import textcache
from preflight.reading.boundary import above
from preflight.reading.parse import ParseError, read_text

MAX_UP = 8
MAX_FILES = 400
MAX_DIRS = 2000
RECIPES = os.path.join("src", "megatron", "bridge", "recipes")
# a preset name in the recipe's body, as tools/megatron_bridge_recipes.py finds them
PRESET = re.compile(r"(?:bf16|fp16)_with_\w+_mixed|nemotron_h_\w+_mixed|nanov2_\w+_mixed|"
                    r"nemotron_3_super_\w+_mixed|bf16_mixed|fp16_mixed")


def recipes_folder(script: str) -> str | None:
    """``src/megatron/bridge/recipes`` of the checkout the launch script is in, if the job
    holds it."""
    root = above(script, RECIPES, True, MAX_UP)
    return None if root is None else os.path.join(root, RECIPES)


def recipe_preset(script: str, recipe: str) -> tuple[str, str, int] | None:
    """(preset name, file, line) the recipe function ``recipe`` assigns in the job's own
    Megatron-Bridge source; None when the job does not hold it or the body names none (the
    recipe may start from another: the table then decides). Worked out once per check for a
    folder and recipe (:func:`.textcache.memo`): every launch file naming it asks again."""
    folder = recipes_folder(script)
    if folder is None or not recipe.isidentifier():
        return None
    return textcache.memo((__name__, folder, recipe), lambda: _search(folder, recipe))


ATTENTION = ("fp8_dot_product_attention", "fp8_multi_head_attention")


def recipe_attention(script: str, recipe: str) -> dict[str, tuple[object, str, int]]:
    """The FP8 attention fields (:data:`ATTENTION`) the recipe function ``recipe`` sets on its
    ``mixed_precision`` in the job's own Megatron-Bridge source: field -> (True / False, or an
    Unknown reason as str when set under a condition or to a value not written, file, line).
    Empty when the job does not hold the source or the body sets none (recipes/qwen/gb200/
    qwen3_moe.py l.62 @ v0.6.0: ``cfg.mixed_precision.fp8_dot_product_attention = True``)."""
    folder = recipes_folder(script)
    if folder is None or not recipe.isidentifier():
        return {}
    return textcache.memo((__name__, "attention", folder, recipe),
                          lambda: _search_attention(folder, recipe))


def _search_attention(folder: str, recipe: str) -> dict[str, tuple[object, str, int]]:
    found = _files(folder, recipe)
    if found is None or len(found) != 1:
        return {}
    path, text = found[0]
    node = _function(text, recipe)
    if node is None:
        return {}
    got: dict[str, tuple[object, str, int]] = {}
    for sub in sorted((n for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.Call))),
                      key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(sub, ast.Call):   # a helper given it (perf_recipes/deepseek/common.py
            for kw in sub.keywords:     # l.52-75: `fp8_dot_product_attention=True`)
                if kw.arg in ATTENTION:
                    got[kw.arg] = (f"the recipe {recipe} passes {kw.arg}= to a function at "
                                   f"{path}:{sub.lineno}, not followed here", path, sub.lineno)
            continue
        for target in sub.targets:
            if isinstance(target, ast.Attribute) and target.attr in ATTENTION and \
                    isinstance(target.value, ast.Attribute) and \
                    target.value.attr == "mixed_precision":
                value = sub.value.value if isinstance(sub.value, ast.Constant) else None
                if not isinstance(value, bool) or _conditional(node, sub.lineno):
                    value = (f"the recipe {recipe} sets mixed_precision.{target.attr} at "
                             f"{path}:{sub.lineno} under a condition or to a value not "
                             "written there")
                got[target.attr] = (value, path, sub.lineno)   # the last one written wins
    return got


def _files(folder: str, recipe: str) -> list[tuple[str, str]] | None:
    """(path, text) of each file in ``folder`` defining ``recipe``; None past the bounds."""
    needle = re.compile(rf"^def {re.escape(recipe)}\(", re.M)
    seen = folders = 0
    found: list[tuple[str, str]] = []
    for root, dirs, files in os.walk(folder):
        folders += 1
        if folders > MAX_DIRS:          # (redteam5: 20,000 empty folders were all walked)
            return None
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if f.endswith(".py")):
            seen += 1
            if seen > MAX_FILES:
                return None
            path = os.path.join(root, name)
            try:
                text = read_text(path)
            except (ParseError, OSError):
                continue
            if needle.search(text):
                found.append((path, text))
    return found


def _search(folder: str, recipe: str) -> tuple[str, str, int] | None:
    """:func:`recipe_preset` in ``folder``: the first file defining ``recipe``, its body read."""
    found = _files(folder, recipe)
    # two modules defining the recipe: which one run_recipe.py gets is the package's imports'
    # choice (redteam5: a decoy in a_decoy.py, first in name order, decided it)
    return _in_function(*found[0], recipe) if found and len(found) == 1 else None


def _function(text: str, recipe: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == recipe]
    # Python binds the last definition (redteam5: the first was read)
    return defs[-1] if defs else None


def _in_function(path: str, text: str, recipe: str) -> tuple[str, str, int] | None:
    node = _function(text, recipe)
    if node is None:
        return None
    found = [(sub.value, sub.lineno) for sub in ast.walk(node)
             if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and
             PRESET.fullmatch(sub.value)] + _preset_calls(node)
    names = {n for n, _ in found}
    # two presets in one body (a branch) are not decided here, nor one that is set only under
    # a condition (`if False:`, `X if c else P`, a loop, a nested function: redteam5)
    if len(names) != 1 or any(_conditional(node, line) for _, line in found):
        return None
    return found[0][0], path, found[0][1]


def _preset_calls(func: ast.FunctionDef) -> list[tuple[str, int]]:
    """``cfg.mixed_precision = bf16_with_mxfp8_mixed()``: the preset's own function called with
    no arguments (each preset is registered under its function's name,
    ``training/mixed_precision.py`` ``register`` @ v0.6.0; the GB200 functional recipes of
    2026-07 call it so). A call whose result goes elsewhere is not the recipe's precision."""
    out = []
    for sub in ast.walk(func):
        if not (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) and
                any(isinstance(t, ast.Attribute) and t.attr == "mixed_precision"
                    for t in sub.targets)):
            continue
        call = sub.value
        name = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if PRESET.fullmatch(name) and not call.args and not call.keywords:
            out.append((name, call.lineno))
    return out


def _conditional(func: ast.FunctionDef, line: int) -> bool:
    """Whether the constant at ``line`` sits under a branch, loop, handler or nested scope of
    ``func``'s body, or in a conditional expression."""
    for stmt in func.body:
        inner = [n for n in ast.walk(stmt) if getattr(n, "lineno", None) == line]
        if not inner:
            continue
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr,
                                 ast.Return)):
            return True
        return any(isinstance(n, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.comprehension))
                   for n in ast.walk(stmt))
    return True
