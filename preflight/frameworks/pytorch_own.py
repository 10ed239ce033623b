"""FP8 a plain PyTorch job implements itself on ``torch._scaled_mm`` (issue 22), for
:mod:`.pytorch`: karpathy/nanochat @ 92d63d4e calls its own ``nanochat/fp8.py``
``convert_to_float8_training`` (an ``nn.Linear`` -> ``Float8Linear`` swap whose matmuls are
``torch._scaled_mm``) under ``if args.fp8:`` in scripts/base_train.py l.168-190.

The roots are the calls that run the job's code: in a job module read with the calls the script
makes into it (:mod:`preflight.jobs.pyimports`: its ``bindings``, each with the condition the
script makes it under), those calls; in a script, the calls its top level makes of its own
functions and classes (a call inside a function carries no condition of that function's call,
and a method is called by whoever uses its class: neither is a root, what they reach is
followed by :func:`.pyownfp8.reaches`). A root that reaches ``_scaled_mm`` is
``config.pytorch.own_fp8.convert`` at the call's line (Unknown with its condition when the text
does not decide it; a condition that only says "on CUDA" holds on the GPU checked:
:class:`.pyownfp8.OnCuda`), ``own_fp8.how`` what it reaches, and ``own_fp8.recipe`` the
``config=Float8LinearConfig.from_recipe_name(NAME)`` it is given in torchao's API (nanochat's is
"written for exact API compatibility"), else Unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from preflight.facts import Unknown
from preflight.reading.pyfacts import PyOut
from preflight.reading.pyownfp8 import OnCuda, called, definitions, on_cuda, reaches
from preflight.reading.pysource import Call
from preflight.reading.pyvalues import Unresolved

MAX_OWN = 64
"""Calls into the job's own code looked at for FP8 in one file."""


def own_fp8(out: PyOut, prefix: str) -> None:
    """The ``own_fp8.*`` facts of ``out``'s module (see the module's docstring). A call that
    surely reaches FP8 settles it: calls under conditions the text does not decide are then
    left out (modded-nanogpt @ f411b3d3 runs its lm_head FP8 in every training step, its MLP
    FP8 under a test of a parameter); when none is sure, each says its condition."""
    module = out.module
    found: list[tuple[int, str | None, Unresolved | None, Any, str]] = []
    for name, line, path, when, config in _roots(out)[:MAX_OWN]:
        own = reaches(module, name)
        if own is None:
            continue                # not FP8, or only through calls in branches that do not run
        how = own.what(module.path)
        if (when is None or isinstance(when, OnCuda)) and own.when is not None:
            when = own.when         # the call runs; the FP8 matmul it reaches, only if ...
        if isinstance(when, OnCuda):
            # FP8 runs only on CUDA in training: on the NVIDIA GPU checked, the condition holds
            how += f"; made only {when.holds} ({when.reason[:160]})"
            when = None
        found.append((line, path, when, config, how))
    if any(when is None for _, _, when, _, _ in found):
        found = [f for f in found if f[2] is None]
    for line, path, when, config, how in found:
        with out.made(Call("", line, when=when)):
            out.put(f"{prefix}.own_fp8.convert", True, line, path)
            out.put(f"{prefix}.own_fp8.how", how, line, path)
            recipe: Any = Unknown("the job's own FP8 code: its scaling is not stated")
            if isinstance(config, Call) and config.name == "from_recipe_name" and config.args:
                recipe = config.args[0]      # a torchao-compatible config, as the job names it
            elif isinstance(config, Unresolved):
                recipe = config
            out.put(f"{prefix}.own_fp8.recipe", recipe, line, path)


Root = tuple[str, int, "str | None", "Unresolved | None", Any]


def _roots(out: PyOut) -> list[Root]:
    """(name called, line, file, condition, its ``config=``) of each call into the job's code."""
    module = out.module
    if module.bindings:
        return [(name, call.line, call.path, call.when, call.value("config"))
                for name, calls in module.bindings.items() for call in calls]
    top = next((sc for sc in module.scopes if sc.name == "<module>"), None)
    defs = definitions(module.tree)
    roots: list[Root] = []
    stop = _exits(module.tree)
    for node in top.calls if top is not None else ():
        name = called(node, module.tree)
        if name is None or name not in defs or len(roots) >= MAX_OWN or node.lineno > stop:
            continue                # (after `sys.exit(0)` at the top level nothing runs)
        guards = top.call_guards.get(id(node)) if top is not None else None
        runs = module.runs(guards, top, calls=True) if guards and top is not None else True
        if runs is False:
            continue                    # in a branch the text shows does not run
        when = on_cuda(module.tree, node.lineno, runs if isinstance(runs, Unresolved) else None)
        config = next((kw.value for kw in node.keywords if kw.arg == "config"), None)
        roots.append((name, node.lineno, None, when, None if config is None or top is None
                      else module.evaluate(config, top, 1)))
    return roots



_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort"})


def _exits(tree: ast.Module) -> int:
    """The line of the first top-level statement that ends the script whatever happens
    (``sys.exit(0)``, ``raise ...``); past the end when there is none."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Raise) or isinstance(stmt, ast.Expr) and \
                isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in _EXITS:
            return stmt.lineno
    return 1 << 30
