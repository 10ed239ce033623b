"""Which Megatron a launch line's training script runs, from its imports (issue 23: Megatron rules
that must neither misfire nor hide failures).

``torchrun pretrain_gpt.py --fp8-format hybrid ...`` hands its flags to Megatron-LM's parser:
``pretrain_gpt.py`` imports ``megatron.training`` and calls ``parse_and_validate_args``
(pretrain_gpt.py:53-62, 512 @ core_v0.19.0; megatron/training/arguments.py:87-107), older
releases ``initialize_megatron``, which calls ``parse_args`` then ``validate_args``
(megatron/training/initialize.py @ core_v0.12.0). A job's own ``train.py`` that imports only
``megatron.core`` builds its ``TransformerConfig`` itself from its own argparse: neither Megatron-LM's
parser nor ``validate_args`` ever sees those flags, so the rules citing them must stay quiet.

This module reads the script's imports -- parsed with :func:`ast.parse`, never imported or run --
and those of the job's own modules it imports (next to it, in the current directory, inside the
read boundary; at most :data:`MAX_DEPTH` levels and :data:`MAX_MODULES` files):

- an import of ``megatron.training`` (``from megatron.training import pretrain``, ``import
  megatron.training``, ``from megatron import training``; the 23.x layout's
  ``megatron.initialize`` / ``megatron.arguments`` too) runs Megatron-LM's parser: true;
  a call passing ``ignore_unknown_args=True`` makes it ``parse_known_args`` (unknown flags are
  dropped, not refused: arguments.py:128-131 @ core_v0.19.0);
- only ``megatron.core`` (or Megatron-Bridge / Energon, which take no Megatron-LM arguments):
  false, naming the import;
- a script or module that cannot be read (outside the job, set at launch, too large, not
  Python), another ``megatron`` name (``from megatron import get_args``), or no Megatron import at
  all (the flags reach Megatron through a package not read here): Unknown, saying why.

A script not in the job whose name is one of Megatron-LM's own entry points (``pretrain_gpt.py``,
``$MEGATRON/pretrain_mamba.py``: every ``pretrain_*.py`` at the top of Megatron-LM imports
``megatron.training``, read at core_v0.12.0 and core_v0.19.0) is taken as that entry point.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_walk
from preflight.reading.boundary import refuse
from preflight.reading.launch import not_training, python_scripts
from preflight.reading.parse import ParseError, read_text
from preflight.reading.pysource import parse
from preflight.reading.refs import locate, under_roots

MAX_DEPTH = 3
"""The job's modules followed one inside another (script -> helper -> its helper)."""
MAX_MODULES = 8
"""Files read for one script (the script included)."""
MAX_NODES = 200_000
"""Syntax-tree nodes looked at per file (a 256 KB script has fewer)."""
MAX_LAUNCHES = 16
"""Training launches of one script compared for a flag (:func:`carried`)."""

_TRAINING = ("megatron.training", "megatron.initialize", "megatron.arguments")
"""Megatron-LM's training package (and the 23.x layout's modules that parse arguments)."""
_NO_PARSER = ("megatron.core", "megatron.bridge", "megatron.energon")
"""Megatron packages that never parse Megatron-LM's arguments."""
_LM_ENTRY = re.compile(r"(?:^|[/\\])pretrain_[A-Za-z0-9_]+\.py$")


@dataclass(frozen=True)
class Entry:
    """What the training script a launch line runs does with Megatron-LM's flags."""

    parsed: Any         # True / False / Unknown: Megatron-LM's parse_args reads them
    ignores_unknown: Any  # True: parse_known_args (an unknown flag is dropped); else False
    source: str         # the file:line (or the reason) the verdict rests on


@dataclass
class _Seen:
    """What the imports of the files read so far show."""

    training: Source | None = None
    core: Source | None = None
    known_args: Source | None = None
    drops: Source | None = None
    """A call whose ``ignore_unknown_args`` the text does not give."""
    unknown: str | None = None
    files: int = 0


def entry(path: str, text: str, variables: dict[str, str]) -> Entry | None:
    """The Megatron entry of the training scripts ``text`` (the launch file at ``path``) runs;
    None when it runs no Python script (an argument file, a file of variables: what runs
    them is the launch line's business)."""
    scripts = [(s, Source(path, text.count("\n", 0, at) + 1))
               for s, _, at in python_scripts(text, variables) if not not_training(s)]
    if not scripts:
        return None
    verdicts = [_script(s, path, where) for s, where in scripts]
    values = {repr(v.parsed) for v in verdicts}
    if len(values) == 1:
        return verdicts[0]
    unknown = next((v for v in verdicts if isinstance(v.parsed, Unknown)), None)
    if unknown is not None:
        return unknown
    return Entry(Unknown(f"the launch line runs {len(scripts)} training scripts, some of which "
                         "hand their flags to Megatron-LM's parser and some not: which one "
                         "the Megatron flags belong to is not known"), False, scripts[0][1])


def _script(script: str, path: str, where: Source) -> Entry:
    """The verdict for one script as the launch file ``path`` names it (at ``where``)."""
    name = script.strip("\"'")
    lm = bool(_LM_ENTRY.search(name))
    if "$" in name or not name:
        return _lm(name, where) if lm else Entry(Unknown(
            f"the training script {name[:80]!r} is set at launch: whether it imports "
            "megatron.training (Megatron-LM's parser) is not known"), False, where)
    found = locate(name, path) or under_roots(name)
    if found is None:
        if lm:
            return _lm(name, where)
        return Entry(Unknown(f"the training script {name[:80]!r} is not in the job: whether it "
                             "imports megatron.training (Megatron-LM's parser) or only "
                             "megatron.core is not known"), False, where)
    seen = _Seen()
    _read(found, seen, 0, set())
    if seen.training is not None:
        if seen.known_args is None and seen.drops is not None:
            return Entry(True, Unknown(f"{seen.drops}: ignore_unknown_args is given a value the "
                                       "text does not show (parse_known_args drops unknown "
                                       "flags)"), seen.drops)
        return Entry(True, seen.known_args is not None, seen.known_args or seen.training)
    if seen.unknown is not None:
        return Entry(Unknown(seen.unknown), False, Source(found))
    if seen.core is not None:
        return Entry(False, False, seen.core)
    return Entry(Unknown(f"{os.path.basename(found)} and the job modules it imports import no "
                         "megatron module: the Megatron flags reach Megatron through a package "
                         "not read here"), False, Source(found))


def _lm(name: str, where: Source) -> Entry:
    """A ``pretrain_*.py`` not in the job: Megatron-LM's own entry point (Megatron-LM
    pretrain_gpt.py:53-62, 512 @ core_v0.19.0: megatron.training's parse_and_validate_args)."""
    return Entry(True, False, where)


def _read(path: str, seen: _Seen, depth: int, done: set[str]) -> None:
    """Add what ``path``'s imports show to ``seen``, then its own modules' (bounded)."""
    real = os.path.realpath(path)
    if real in done:
        return
    done.add(real)
    seen.files += 1
    base = os.path.basename(path)
    try:
        tree = parse(path, read_text(path))
    except ParseError as exc:
        seen.unknown = seen.unknown or (f"{base}{f':{exc.line}' if exc.line else ''} could not "
                                        f"be read ({exc.message[:120]}): whether it imports "
                                        "megatron.training is not known")
        return
    local: list[tuple[str, int]] = []
    for count, node in enumerate(_live(tree)):
        if count > MAX_NODES:
            seen.unknown = seen.unknown or f"{base} is too large to look through its imports"
            return
        if isinstance(node, ast.Call):
            _call(node, path, seen)
        for name, line in _imported(node):
            where = Source(path, line)
            if name.startswith("."):
                local.append((name, line))
            elif _under(name, _TRAINING) or _LM_ENTRY.search(name.replace(".", "/") + ".py"):
                # `import pretrain_gpt` off a sys.path entry: Megatron-LM's own entry point
                seen.training = seen.training or where
            elif _under(name, _NO_PARSER):
                seen.core = seen.core or where
            elif _under(name, ("megatron",)):
                seen.unknown = seen.unknown or (
                    f"{where}: imports {name[:80]}, which is neither megatron.training nor "
                    "megatron.core: whether Megatron-LM's parser runs is not known")
            else:
                local.append((name, line))
    for name, line in local:
        found, why = _module(name, path)
        if why is not None:
            seen.unknown = seen.unknown or f"{base}:{line}: imports {name[:80]}, {why}"
        if found is None:
            continue                        # an installed package: not the job's
        if depth + 1 > MAX_DEPTH or seen.files >= MAX_MODULES:
            seen.unknown = seen.unknown or (
                f"{base}:{line}: imports {name[:80]}, past the {MAX_DEPTH} levels / "
                f"{MAX_MODULES} files of the job's modules read: whether it imports "
                "megatron.training is not known")
            return
        _read(found, seen, depth + 1, done)


def _live(tree: ast.AST) -> list[ast.AST]:
    """The nodes of ``tree`` outside ``if TYPE_CHECKING:`` / ``if False:`` bodies, which never
    run (redteam7: a typing-only import of megatron.training in a core-only script made
    Megatron-LM's parser run; bounded by :data:`MAX_NODES`)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo and len(out) <= MAX_NODES:
        node = todo.pop()
        out.append(node)
        dead = isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Constant) and not node.test.value) or
            (isinstance(node.test, (ast.Name, ast.Attribute)) and
             (node.test.id if isinstance(node.test, ast.Name) else node.test.attr) ==
             "TYPE_CHECKING"))
        children: list[ast.AST] = []
        for field, value in ast.iter_fields(node):
            if dead and field == "body":
                continue
            children.extend(v for v in (value if isinstance(value, list) else [value])
                            if isinstance(v, ast.AST))
        todo.extend(reversed(children))     # the text's order: the first import is cited
    return out


_DYNAMIC = ("import_module", "__import__", "exec", "run_path", "run_module")
_PARSERS = ("initialize_megatron", "parse_args", "parse_and_validate_args", "pretrain")


def _call(node: ast.Call, path: str, seen: _Seen) -> None:
    """What a call says: ``ignore_unknown_args`` (True: parse_known_args; a value the text does
    not give, or ``**kwargs`` to Megatron's parser: not known), and an import the text does not
    name (``importlib.import_module``, ``__import__``, ``exec``, ``runpy``: redteam7)."""
    func = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else ""
    where = Source(path, node.lineno)
    for k in node.keywords:
        if k.arg == "ignore_unknown_args":
            if isinstance(k.value, ast.Constant):
                if k.value.value is True:
                    seen.known_args = seen.known_args or where
            else:
                seen.drops = seen.drops or where
        elif k.arg is None and func in _PARSERS:
            seen.drops = seen.drops or where
    if func in _DYNAMIC:
        named = node.args[0] if node.args else None
        text = named.value if isinstance(named, ast.Constant) and \
            isinstance(named.value, str) else None
        if func != "exec" and text is not None and not text.startswith("megatron") and \
                not _LM_ENTRY.search(text):
            return          # `importlib.import_module("yaml")`: not Megatron
        if text is not None and func in ("import_module", "__import__") and \
                _under(text, _TRAINING):
            seen.training = seen.training or where
            return
        seen.unknown = seen.unknown or (
            f"{where}: {func}(...) loads code the text does not name: whether it runs "
            "Megatron-LM's parser is not known")


def _imported(node: ast.AST) -> list[tuple[str, int]]:
    """The modules an import statement loads (``from megatron import training`` loads
    megatron.training; a relative import keeps its dots)."""
    if isinstance(node, ast.Import):
        return [(a.name, node.lineno) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
        if module == "megatron":
            return [(f"megatron.{a.name}", node.lineno) for a in node.names]
        if node.level and not node.module:
            return [(f"{module}{a.name}", node.lineno) for a in node.names]
        return [(module, node.lineno)]
    return []


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _module(name: str, importer: str) -> tuple[str | None, str | None]:
    """The job file an import of ``name`` loads (None: an installed package) and why it is
    not read when it names a file of the job that cannot be (a link out, a FIFO)."""
    level = len(name) - len(name.lstrip("."))
    parts = name[level:].split(".")
    if not all(p.isidentifier() for p in parts):
        return None, None
    folder = os.path.dirname(importer)
    for _ in range(max(level - 1, 0)):
        folder = os.path.dirname(folder)
    for depth in range(len(parts), 0, -1):   # `import pkg.mod`: pkg/mod.py, else pkg/__init__
        rel = os.path.join(*parts[:depth])
        for target in (rel + ".py", os.path.join(rel, "__init__.py")):
            cand = os.path.join(folder, target)
            found = ((cand if os.path.isfile(cand) and refuse(cand) is None else None)
                     if level else locate(target, importer) or under_roots(target))
            if found is not None:
                return found, None
            if os.path.lexists(cand) and (why := refuse(cand) or (
                    None if os.path.isfile(cand) else "not a regular file")) is not None:
                return None, f"a file of the job that is not read ({why[:80]})"
    if level:
        return None, "a module of the job that is not here"
    return None, None


def carried(text: str, outer: dict[str, str] | None, flag: str) -> Any:
    """Whether the training launches of ``text`` that may run carry ``--flag`` (as the shell
    expands them: ``$ARGS`` arrays and strings, ``bash -c``; an ``if false`` branch or a function
    never called does not run; ``echo "--flag"`` runs nothing): True / False, Unknown when some
    do and some do not, None when the script cannot be walked here or runs no Python training
    script (an argument file: every ``--flag`` of it is on the command line). redteam6: an
    echoed ``--yaml-cfg`` made validate_args "not run" and FP8D-MEG-0001 quiet."""
    found = megatron_walk.commands(text, outer, _is_training_script, MAX_LAUNCHES)
    if not found:
        return None
    has = [any(a.text == f"--{flag}" or a.text.startswith(f"--{flag}=") for a in lr.args)
           for lr in found]
    if all(has):
        return True
    if not any(has):
        return False
    lines = ", ".join(str(text.count("\n", 0, lr.offset) + 1) for lr in found)
    return Unknown(f"the training launches at lines {lines} differ in --{flag}: which one runs "
                   "is not known here")


def _is_training_script(word: str) -> bool:
    return word.endswith(".py") and not not_training(word)
