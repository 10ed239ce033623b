"""A command line a Python launcher builds as a string, read word by word with the line each
word is written at (issue 22: miles' and slime's ``scripts/run_*.py`` / ``tests/test_*.py``).

miles (radixark/miles, scripts/run_deepseek_v4.py at e719999e) and slime (THUDM/slime v0.3.1,
tests/test_moonlight_16B_A3B.py) build ``train.py``'s arguments in Python before handing them to
``U.execute_train(train_args=...)``::

    misc_args = "--attention-dropout 0.0 " f"--actor-num-nodes {args.actor_num_nodes} "
    if args.fp8_training:
        misc_args += "--fp8-format e4m3 " "--fp8-recipe blockwise "
    train_args = f"{ckpt_args} {rollout_args} {misc_args} {args.extra_args} "

:func:`pieces` follows such a string as :mod:`.pysource` follows any value -- literals,
f-strings, ``+``, names bound and re-bound (``+=``) in order with the conditions they run under
(:mod:`.pyguards`), the file's functions inlined, ``x if c else y`` --, but keeps what is known
of a string whose other parts are not: each piece is text (with its line, and the condition it
is added under when the text does not decide it) or a hole (a part computed when the script
runs, with why). :func:`command` lays the pieces out one flag to a line, for the flag readers
(:mod:`preflight.frameworks.megatron_args`), with the source line of each. :func:`mapping` does
the same for a dict built in steps (``extra_env_vars |= {...}``, ``env["X"] = "1"``).
Bounded: :data:`MAX_PIECES` pieces, :data:`MAX_CHARS` characters, :data:`.pyvalues.MAX_DEPTH`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.reading import pywrites
from preflight.reading.pyguards import truth
from preflight.reading.pyvalues import MAX_DEPTH, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Bind, Scope
    from preflight.reading.pysource import Module

MAX_PIECES = 4096
MAX_CHARS = 256 * 1024


@dataclass(frozen=True)
class Piece:
    """Text of the string (``text``), or a hole (``text`` None, ``why``); ``when``: the
    condition it is added under, which the text does not decide (None: it is added)."""

    text: str | None
    line: int
    why: str = ""
    when: str | None = None
    benign: bool = False
    """A hole known to hold no flag that matters here (the wandb flags of miles'
    ``get_default_wandb_args``)."""


BENIGN = ("get_default_wandb_args",)
"""Helpers of miles/slime's command_utils whose string holds only ``--use-wandb`` /
``--wandb-*`` flags or nothing (miles/utils/external_utils/command_utils.py at e719999e,
``get_default_wandb_args``; slime v0.3.1 the same)."""


_DEEP = "a string built too deeply to follow"


class _Budget:
    def __init__(self) -> None:
        self.pieces = 0


def pieces(module: Module, node: ast.expr, scope: Scope, depth: int = 0,
           budget: _Budget | None = None) -> list[Piece]:
    """The pieces of the string ``node`` evaluates to in ``scope`` (module docstring)."""
    budget = budget or _Budget()
    line = getattr(node, "lineno", 0)
    if depth > MAX_DEPTH or budget.pieces > MAX_PIECES:
        return [Piece(None, line, _DEEP)]
    budget.pieces += 1
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [Piece(node.value, line)]
    if isinstance(node, ast.JoinedStr):
        out: list[Piece] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and part.format_spec is None and \
                    part.conversion in (-1, 115):
                out.extend(pieces(module, part.value, scope, depth + 1, budget))
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(Piece(part.value, line))
            else:
                out.append(Piece(None, line, "a formatted value"))
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*pieces(module, node.left, scope, depth + 1, budget),
                *pieces(module, node.right, scope, depth + 1, budget)]
    if isinstance(node, ast.IfExp):
        test = truth(module.evaluate(node.test, scope, depth + 1))
        if test is not None:
            return pieces(module, node.body if test else node.orelse, scope, depth + 1, budget)
        why = f"x if ... else y at line {line}, chosen when the script runs"
        return [_when(p, why) for p in (*pieces(module, node.body, scope, depth + 1, budget),
                                        *pieces(module, node.orelse, scope, depth + 1, budget))]
    if isinstance(node, ast.Name):
        got = _history(module, node.id, scope, line, depth, budget)
        if got is not None:
            return got
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and \
            (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in BENIGN:
        return [Piece(None, line, "wandb flags (get_default_wandb_args)", benign=True)]
    if _pseudo_call(module, node):
        assert isinstance(node, ast.Call)
        return [pseudo_file(pieces(module, node.args[0], scope, depth + 1, budget), line)]
    wrote = pywrites.returned(module, node, line)      # a config the file writes, by its name
    if wrote is not None:
        return [wrote]
    value = module.evaluate(node, scope, depth + 1)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [Piece(str(value), line)]
    why = value.reason if isinstance(value, Unresolved) else "computed when the script runs"
    return [Piece(None, line, why)]


PSEUDO_FILE = "encode_pseudo_file"
"""miles' ``U.encode_pseudo_file(text)``: ``"base64:" + base64.b64encode(text.encode()).decode()``
(miles/utils/external_utils/command_utils.py l.363-364 @ 31f1ca96), an inline file its
``--custom-config-path`` reads (frameworks/slime_custom.py). A pure function of a known text:
computed here as miles computes it, nothing of the job run."""


def _pseudo_call(module: Module, node: ast.expr) -> bool:
    """``X.encode_pseudo_file(text)`` / ``encode_pseudo_file(text)`` of miles, not a function of
    that name the script defines itself."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""
    return name == PSEUDO_FILE and not (isinstance(func, ast.Name) and any(
        isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == PSEUDO_FILE
        for d in module.tree.body))


def pseudo_file(found: list[Piece], line: int) -> Piece:
    """The ``base64:`` string of a text whose every piece is known and added; a hole else."""
    import base64

    gap = next((p for p in found if p.text is None or p.when is not None), None)
    if gap is not None:
        return Piece(None, line, f"encode_pseudo_file of a text not known here "
                                 f"({(gap.when or gap.why)[:160]})")
    text = "".join(p.text or "" for p in found)
    if len(text) > MAX_CHARS:
        return Piece(None, line, "encode_pseudo_file of a text larger than any config")
    return Piece("base64:" + base64.b64encode(text.encode()).decode(), line)


def _when(piece: Piece, why: str) -> Piece:
    return piece if piece.when is not None else Piece(piece.text, piece.line, piece.why, why,
                                                      piece.benign)


def _history(module: Module, name: str, scope: Scope, line: int, depth: int,
             budget: _Budget) -> list[Piece] | None:
    """``name`` as the statements that bind it and add to it (``+=``) in order leave it at
    ``line``: None where it is no name bound in the file (a parameter: evaluated instead)."""
    where: Scope | None = scope
    while where is not None and name not in where.binds:
        where = where.parent
    if where is None:
        where = module.module if name in module.module.binds else None
    if where is None or (where is not scope and name in scope.params):
        return None
    binds: list[Bind] = [b for b in where.binds[name] if where is not scope or b.line < line]
    out: list[Piece] = []
    for bind in binds:
        state = module.runs(bind.guards, where, depth=depth) if bind.guards else True
        if state is False:
            continue
        when = state.reason if isinstance(state, Unresolved) else None
        if bind.aug is not None:
            added = pieces(module, bind.aug, where, depth + 1, budget)
        elif bind.value is not None:
            added = pieces(module, bind.value, where, depth + 1, budget)
            if when is None:
                out = []
        else:
            added, out = [Piece(None, bind.line, bind.why or f"{name} is set at run time")], []
        out.extend(_when(p, f"{name} is {when}") if when else p for p in added)
    return out


Layout = tuple[str, list[tuple[int, str | None]], list[tuple[Piece, str | None]]]


def command(found: list[Piece]) -> Layout:
    """``(text, lines, holes)``: the pieces as one flag (with its values) to a line, holes as
    ``${__hole_N}``; ``lines[i]``: (the source line, the condition) of text line ``i + 1``;
    ``holes``: the holes that are words of their own (not part of a word, such as
    ``--load {x}/ckpt``, nor benign), each with the flag before it (it may be that flag's value)
    or None."""
    text: list[str] = []
    lines: list[tuple[int, str | None]] = []
    holes: list[tuple[Piece, str | None]] = []
    quote = ""
    size = 0
    for n, piece in enumerate(found):
        chunk = (piece.text if piece.text is not None else "${__hole_%d}" % n).replace("\n", " ")
        if size + len(chunk) > MAX_CHARS:
            holes.append((Piece(None, piece.line, f"a command line over {MAX_CHARS} characters"),
                          None))
            break
        size += len(chunk)
        for i, ch in enumerate(chunk):
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "-" and chunk[i:i + 2] == "--" and (not text or text[-1] in " \t\n"):
                # a flag starts a line of its own, at the line its word is written
                text.append("\n")
                lines.append((piece.line, piece.when))
            text.append(ch)
            if not lines:
                lines.append((piece.line, piece.when))
    body = "".join(text)
    # a hole that begins a word may be flags (`${a}${b}`: redteam7, 5,000 `+=` past the piece
    # bound glued the holes into one word and dropped the FP8 flag after them without a word)
    for m in re.finditer(r"(?<!\S)\$\{__hole_(\d+)\}", body):
        piece = found[int(m.group(1))]
        before = body[:m.start()].split()
        if not piece.benign:
            holes.append((piece, before[-1] if before and before[-1].startswith("--") and
                          "=" not in before[-1] else None))
    cut = next((p for p in found if p.text is None and p.why == _DEEP), None)
    if cut is not None:
        holes.append((cut, None))       # past the bound: whatever followed is not known
    return (body[1:] if body.startswith("\n") else body), lines, holes


def mapping(module: Module, node: ast.expr, scope: Scope, depth: int = 0,
            ) -> dict[str, tuple[Any, int]]:
    """A dict built in steps (``d = {...}``, ``d |= {...}``, ``d["k"] = v``, ``{**d}``), its
    values with their lines; one added under a condition the text does not decide is
    Unresolved with it. A dict the text does not give is ``{}`` plus ``"*"``: Unresolved."""
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Dict):
        out: dict[str, tuple[Any, int]] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.update(mapping(module, value, scope, depth + 1))
                continue
            k = module.evaluate(key, scope, depth + 1)
            out[k if isinstance(k, str) else "*"] = (
                module.evaluate(value, scope, depth + 1) if isinstance(k, str) else
                Unresolved("a key computed when the script runs", line), value.lineno)
        return out
    if not isinstance(node, ast.Name) or depth > MAX_DEPTH:
        value = module.evaluate(node, scope, depth + 1)
        if isinstance(value, dict):
            return {k: (v, line) for k, v in value.items()}
        return {"*": (Unresolved("a mapping computed when the script runs"), line)}
    where = scope if node.id in scope.binds else module.module
    steps: list[tuple[int, Any]] = [(b.line, b) for b in where.binds.get(node.id, ())
                                    if where is not scope or b.line < line]
    steps += [(item[2], item) for item in where.items.get(node.id, ())
              if where is not scope or item[2] < line]
    got: dict[str, tuple[Any, int]] = {}
    for at, step in sorted(steps, key=lambda s: s[0])[:MAX_PIECES]:
        guards = step.guards if not isinstance(step, tuple) else step[3]
        state = module.runs(guards, where, depth=depth) if guards else True
        if state is False:
            continue
        if isinstance(step, tuple):         # d["k"] = v
            key = module.evaluate(step[0], where, depth + 1)
            new = {key if isinstance(key, str) else "*":
                   (module.evaluate(step[1], where, depth + 1), at)}
        elif step.aug is not None or step.value is not None:
            new = mapping(module, step.aug or step.value, where, depth + 1)
            if step.aug is None and state is True:
                got = {}
        else:
            new = {"*": (Unresolved(step.why), at)}
        if isinstance(state, Unresolved):
            new = {k: (Unresolved(f"set at line {at} only {state.reason}"), at) for k in new}
        got.update(new)
    return got
