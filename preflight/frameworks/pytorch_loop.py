"""A plain PyTorch training loop with no FP8 API in it is a job that trains without FP8, for
:mod:`.pytorch` (holdout18: Scicom-AI-Enterprise-Organization/small-ablation @ a664148f,
fsdp2-fused-moe-lora-bf16-vs-fp8/bf16.py, the BF16 arm run by ``torchrun --nproc_per_node 8 -m
bf16``: FSDP2, experts on ``torch._grouped_mm`` in BF16, no Transformer Engine or torchao, was
FP8D-CFG-NO-JOB, "no job config was read").

What a careful engineer takes for a training script: one that runs a backward pass and an
optimizer step (``loss.backward()`` ... ``optim.step()``), both in code that runs. A
data-preparation, evaluation or export script has neither and stays "no job"; a script that
another framework's reader takes (its words, ``Framework.python_hint``: ``Accelerator``,
``TrainingArguments``, ``Trainer`` ...) stays that framework's, so an accelerate loop's
``accelerator.backward(loss)`` never makes it a PyTorch job too. A hint alone does not take it:
a file whose words match another framework's (``class Trainer`` is Lightning's word) that this
framework's reader then reads nothing from is still a loop (holdout19 fivezeroes/bdh @ 87eadd9d,
trainer.py: ``class Trainer`` with ``self.scaler.scale(loss).backward()``, was FP8D-CFG-NO-JOB).

The backward pass is read from the syntax as well as from the resolved callee: a call chain
``scaler.scale(loss).backward()`` (``torch.amp.GradScaler.scale`` returns the scaled loss,
torch v2.10.0 torch/amp/grad_scaler.py) resolves to no name, ``(loss / n).backward()`` neither.
"""

from __future__ import annotations

import ast
import re

from preflight.reading.parse import ParseError, read_text
from preflight.reading.pyscopes import Scope
from preflight.reading.pysource import Module

HINT = re.compile(r"\.backward\s*\(")
"""The words that make a script with no FP8 API worth parsing as a training loop."""


_NOT_A_LOSS = frozenset({"self", "cls", "super"})
"""Receivers of ``.backward()`` that are no tensor (``self.backward()`` is a method of the
class, Lightning's ``manual_backward`` style), so no backward pass of a loop."""


def _other_framework(module: Module, own: str) -> bool:
    """Another framework's words are in the file and its reader reads something there."""
    from preflight.frameworks import FRAMEWORKS
    try:
        text = read_text(module.path)
    except (ParseError, OSError):
        return True
    for fw in FRAMEWORKS:
        if fw.read_python is None or fw.kind == own or fw.python_hint is None or \
                not fw.python_hint.search(text):
            continue
        try:
            if fw.read_python(module).facts:
                return True
        except RecursionError:
            return True     # (it could not be told: the file stays that framework's)
    return False


def _loss_like(node: ast.expr) -> bool:
    """A receiver a backward pass is called on: a name or attribute (``loss``,
    ``out.loss``, ``self.loss``), a subscript, arithmetic on one (``(loss / n)``) or a call
    chain on one (``self.scaler.scale(loss)``, ``out.sum()``); never ``self`` / ``cls`` /
    ``super()`` themselves (a method of the class, not a tensor)."""
    head = node.func if isinstance(node, ast.Call) else node
    if isinstance(head, ast.Name) and head.id in _NOT_A_LOSS:
        return False
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp)):
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.BinOp):
            node = node.left
        elif isinstance(node, ast.UnaryOp):
            node = node.operand
        else:
            node = node.value
    return isinstance(node, ast.Name)


def _syntax_backward(scopes: list[Scope], made: set[int]) -> int | None:
    """The first ``<loss-like>.backward(...)`` written in ``scopes`` at a line where a call is
    made in code that runs (``made``: a branch the values rule out makes none)."""
    lines = [node.lineno for scope in scopes for node in scope.calls
             if isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
             and node.lineno in made and _loss_like(node.func.value)]
    return min(lines, default=None)


def training_step(module: Module, own: str) -> int | None:
    """The line of the backward pass of a training loop no other framework takes (a backward
    and an optimizer ``.step()`` both called in code that runs, under a condition or not), or
    None when ``module`` is no such loop."""
    from preflight.reading.pycallers import reached

    backward = step = None
    running: list[Scope] = []
    made: set[int] = set()
    for call, scope in module.calls():
        if not reached(module, scope):
            continue    # a function nothing calls trains nothing (redteam12: it was a job)
        made.add(call.line)
        if not any(scope is s for s in running):
            running.append(scope)
        last = call.name.rpartition(".")[2] if call.name else ""
        if last == "backward" and backward is None and \
                call.func.rpartition(".")[0] not in _NOT_A_LOSS:
            backward = call.line
        elif last == "step" and step is None:
            step = call.line
        if backward is not None and step is not None:
            break
    if backward is None:
        backward = _syntax_backward(running, made)
    if backward is None or step is None or _other_framework(module, own):
        return None
    return backward


__all__ = ["HINT", "training_step"]
