"""The job's own Python modules a script imports, read with what the script passes them (issue 22:
values carried between the Python files of one job).

``run_finetune_ep.py --improvement 3`` (TransformerEngine docs/examples/te_mixtral at 937c4de0)
sets ``hp.mixed_precision = "mxfp8"`` and calls ``run_te_mixtral_finetune(hp)`` from its
``utils.py``, which builds the recipe and hands it to ``te_mixtral_mxfp8.py``'s model class:
the FP8 settings are in the helpers, the values that choose them in the script. For each module
a file imports (``from utils import f``, ``import utils``, ``from .x import y``, also inside a
function) that is a file of the job -- found next to the importing file (the script's folder
is the first place Python looks) or in the current directory, inside the read boundary -- the
calls the file makes to its functions and classes, with their arguments as the file gives them,
become that module's :attr:`.pysource.Module.bindings`, and the module is read by every
framework's ``read_python`` with them; so are the modules it imports in turn. Never imported or
run; at most :data:`MAX_DEPTH` levels and :data:`MAX_MODULES` modules per script, each file
bounded as any Python job file is (:func:`.pysource.parse`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from preflight.facts import Unknown
from preflight.reading.boundary import refuse
from preflight.reading.parse import ParseError, read_text
from preflight.reading.pyforeign import attr_uses, self_calls
from preflight.reading.pymodfile import SYS_PATH, module_file
from preflight.reading.pymodfile import targets as _targets
from preflight.reading.pyownfp8 import OnCuda, on_cuda
from preflight.reading.pyscopes import Scope
from preflight.reading.pyshared import at_calls
from preflight.reading.pysource import Call, Module, parse
from preflight.reading.pyvalues import Unresolved
from preflight.reading.types import ConfigProblem, ReaderOutput

MAX_DEPTH = 3
"""Imports followed one inside another (script -> utils -> model file)."""
MAX_MODULES = 8
"""The job's own modules read for one script."""
MAX_SCAN = 256 * 1024
"""Characters of a script looked through for imports (a Python job file is parsed up to this)."""


@dataclass(frozen=True)
class Helper:
    path: str
    line: int               # the line of the importing file that calls into it first
    importer: str
    out: ReaderOutput
    kind: str | None
    broken: bool = False    # not read: ``out`` holds the problem, at the importing line
    when: Unresolved | None = None   # every call into it (or into its importer) is made under
    # this condition the text does not decide: what it sets is Unknown (:func:`conditional`)





def unread_module(name: str, importer: str) -> tuple[str, str] | None:
    """(the file, why) where an import of ``name`` names a file beside ``importer`` that is not
    read: a link out of the job, a FIFO, a device, a folder (redteam3: skipped without a word,
    so the settings the script passes it were lost silently)."""
    for target in _targets(name, importer):
        cand = target if os.path.isabs(target) else \
            os.path.join(os.path.dirname(importer), target)
        if not os.path.lexists(cand):
            continue
        why = refuse(cand)
        if why is None and not os.path.isfile(cand):
            why = "not a regular file (a FIFO, device or folder): not read"
        if why is not None:
            return cand, why
    return None


STAR = "<import *>"
"""The binding a module imported with ``*`` is read with: its top-level code runs on import, its
functions only where called (a name no function has, :func:`.pycallers.reached`)."""


_METHOD_CALLS = frozenset({"apply", "from_float", "forward"})
"""A class's methods that call into it (``Fn.apply(...)`` runs ``Fn.forward``)."""


def calls_into(module: Module, unread: dict[str, tuple[int, str]] | None = None,
               ) -> dict[str, tuple[int, dict[str, list[Call]]]]:
    """For each job file ``module`` imports and calls into (or imports with ``*``): the first
    line that does, and the calls by the name they call there (``utils.run(hp)`` ->
    ``{"run": [Call]}``); ``unread`` gets the files it calls into that are not read
    (:func:`unread_module`), with the line."""
    out: dict[str, tuple[int, dict[str, list[Call]]]] = {}
    cache: dict[str, str | None] = {}
    for base, line in module.stars[:MAX_MODULES]:
        path = module_file(base, module.path)
        if path is not None and os.path.realpath(path) != os.path.realpath(module.path):
            out.setdefault(path, (line, {STAR: []}))
    for call, scope in module.calls():
        owner, _, attr = call.func.rpartition(".")
        if not owner or not attr or call.func.startswith("__main__.") or \
                never_run(module, scope):
            continue
        if attr in _METHOD_CALLS and owner.count(".") >= 1:
            # `mod.Fn.apply(...)` (an autograd Function, modded-nanogpt train_gpt.py:1687 @
            # f411b3d3), `mod.Cls.from_float(...)`: a call into Fn of the module mod
            outer, _, cls = owner.rpartition(".")
            if cache.setdefault(outer, module_file(outer, module.path)) is not None:
                owner, attr = outer, cls
        if owner not in cache and owner.count(".") >= 1 and \
                module_file(owner, module.path) is None:
            # `mod.Cls.from_pretrained_local(...)`: a class method of a class of the module mod
            # (holdout18 llmfp8 train_fp8.py:113 @ de71c731, `TELlamaForCausalLM` of te_llama.py)
            outer, _, cls = owner.rpartition(".")
            if cache.setdefault(outer, module_file(outer, module.path)) is not None:
                owner, attr = outer, cls
        if owner not in cache:
            cache[owner] = module_file(owner, module.path)
            bad = unread_module(owner, module.path) if cache[owner] is None and \
                unread is not None and len(unread) < 16 else None
            if bad is not None:
                unread.setdefault(bad[0], (call.line, bad[1]))  # type: ignore[union-attr]
        path = cache[owner]
        if path is None or os.path.realpath(path) == os.path.realpath(module.path):
            continue
        line, by_name = out.setdefault(path, (call.line, {}))
        # (a call made only on CUDA says so: FP8 of the job's own code runs only there)
        call = replace(call, when=on_cuda(module.tree, call.line, call.when))
        by_name.setdefault(attr, []).append(located(call, module.path))
    return out


def never_run(module: Module, scope: Scope) -> bool:
    """A method each of whose ``self.m()`` calls sits in a branch the text shows does not run
    (``if self.config.use_te: model = self._create_te_model(...)`` without ``--use_te``): the
    module it imports and calls into is not the job's (holdout18 llmfp8 train_fp8.py:93-113)."""
    owner = module.owners.get(id(scope))
    if owner is None or owner[0] is None or owner[1].startswith("__"):
        return False
    memo = module.__dict__.setdefault("_never_run", {})
    if id(scope) not in memo:
        sites = list(self_calls(module, owner[0], owner[1]))
        memo[id(scope)] = bool(sites) and attr_uses(module).get(owner[1], 0) == len(sites) \
            and all(module.runs(guards, caller, calls=True) is False
                    for _, caller, guards in sites if guards) and \
            all(guards for _, _, guards in sites)
    return memo[id(scope)]  # type: ignore[no-any-return]


def located(value: Any, path: str, depth: int = 0) -> Any:
    """``value`` with each call in it that does not say its file marked as written in ``path``
    (so a fact the imported module takes from it names the right file and line)."""
    if depth > 16:
        return value
    if isinstance(value, Call):
        return replace(value, path=value.path or path,
                       args=tuple(located(a, path, depth + 1) for a in value.args),
                       kwargs={k: located(v, path, depth + 1) for k, v in value.kwargs.items()})
    if isinstance(value, list):
        return [located(v, path, depth + 1) for v in value]
    return value


_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+))",
                     re.MULTILINE)


def imports_job_module(text: str, path: str) -> bool:
    """Whether ``text`` imports a module that is a file of the job (a cheap look before the
    file is parsed: most scripts import only installed packages)."""
    names = {m.group(1) or m.group(2) for m in _IMPORT.finditer(text[:MAX_SCAN])}
    return any(module_file(n, path) is not None or unread_module(n, path) is not None or
               _namespace(n, path) for n in list(names)[:64] if n)


def _namespace(name: str, importer: str) -> bool:
    """Whether ``name`` is a folder of the job without ``__init__.py`` (a namespace package:
    ``from pkg import conv`` loads ``pkg/conv.py``) beside ``importer`` or under the ``-m``
    root (:data:`SYS_PATH`)."""
    if name.startswith(".") or not all(p.isidentifier() for p in name.split(".")):
        return False
    rel = os.path.join(*name.split("."))
    root = SYS_PATH.get()
    folders = [os.path.dirname(importer), *([root] if root is not None else [])]
    return any(os.path.isdir(os.path.join(f, rel)) and refuse(os.path.join(f, rel)) is None
               for f in folders)


def read_helpers(module: Module,
                 read: Callable[[Module, str], tuple[str | None, ReaderOutput]],
                 ) -> list[Helper]:
    """The job's own modules ``module`` imports and calls, each read by ``read`` with the calls
    it receives, then the ones they import (breadth first, bounded)."""
    seen = {os.path.realpath(module.path)}
    todo: list[tuple[Module, int, Unresolved | None]] = [(module, 1, None)]
    helpers: list[Helper] = []
    while todo and len(helpers) < MAX_MODULES:
        importer, depth, above = todo.pop(0)
        unread: dict[str, tuple[int, str]] = {}
        for path, (line, bindings) in calls_into(importer, unread).items():
            real = os.path.realpath(path)
            if real in seen or len(helpers) >= MAX_MODULES:
                continue
            seen.add(real)
            try:
                text = read_text(path)
                from preflight.jobs.pynames import imported_tree, link  # (it imports this one)

                helper = Module(path, imported_tree(parse(path, text)), None, None, bindings,
                                module.environ)     # one process: the script's environment
                link(helper)
                helper.shared = at_calls(importer, path)    # the objects the importer changed
                kind, out = read(helper, text)
            except (ParseError, RecursionError, OSError) as exc:
                why = exc.message if isinstance(exc, ParseError) else type(exc).__name__
                unread[path] = (line, f"could not be read ({why[:120]})")
                continue
            when = above or _condition(bindings)
            helpers.append(Helper(path, line, importer.path, out, kind, when=when))
            if depth < MAX_DEPTH:
                todo.append((helper, depth + 1, when))
        for path, (line, why) in unread.items():
            # the values the script passes it were lost: said at the importing line
            helpers.append(Helper(path, line, importer.path, ReaderOutput(problems=(
                ConfigProblem(importer.path, line, (
                    f"calls into {os.path.basename(path)[:80]!r}, {why}: the settings it "
                    "would take from this file were not read"), level="warning",
                    code="reference"),)), None, broken=True))
    return helpers


def _condition(bindings: dict[str, list[Call]]) -> Unresolved | None:
    """The condition the importer calls into a module under, when every call is made under one
    the text does not decide (the first's); None when one call is not (or it is imported with
    ``*``: its top level runs on import). A call made only on CUDA counts as made: FP8 runs only
    there (:class:`.pyownfp8.OnCuda`)."""
    calls = [call for name, made in bindings.items() if name != STAR for call in made]
    if STAR in bindings or not calls or any(
            call.when is None or isinstance(call.when, OnCuda) for call in calls):
        return None
    return calls[0].when


def conditional(helper: Helper, value: Any) -> Any:
    """``value`` of a fact ``helper`` sets, as the importer's condition leaves it: Unknown
    saying why when the importer calls into the helper only under an undecided condition (a
    library conversion inside the job's ``enable_fp8(model)`` called under ``if cfg.fp8:`` that
    the text does not decide was FP8 "yes")."""
    if helper.when is None or isinstance(value, Unknown):
        return value
    return Unknown(f"set in {os.path.basename(helper.path)[:80]}, which "
                   f"{os.path.basename(helper.importer)[:80]} calls into only under a condition "
                   f"the text does not decide ({helper.when.reason[:240]})")
