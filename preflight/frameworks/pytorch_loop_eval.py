"""Evaluation code of a plain PyTorch script, for :mod:`.pytorch`: an FP8 autocast opened only
there says nothing of the training step's FP8 (session 43, pyfix8 item 3).

A training script often opens the same autocast in its training step and again in its
evaluation, validation or sampling code (holdout19 gpt2scratch, csabakecskemeti/gpt2-from-scratch
@ c392292c, train_fp8.py l.401-407 in the step, l.504-508 in ``evaluate_validation`` under
``with torch.no_grad()``, l.546 and l.587 likewise). Evaluation runs under conditions of its own
(``if step % eval_freq == 0``), so merging it with the step made the job's FP8 "depends on the
control flow". Evaluation trains nothing and runs nothing in FP8 that the step does not (it runs
the model the step trains, under the same switch), so the step decides:

- code inside ``with torch.no_grad():`` / ``torch.inference_mode()`` (torch v2.10.0
  torch/autograd/grad_mode.py: no gradients are recorded there, so nothing in it trains), or in a
  function decorated with either;
- code in a function named for evaluation (``evaluate*``, ``eval_*``, ``validat*``, ``test_*``,
  ``generate*``, ``sample*``, ``predict*``, ``infer*``; also ``run_eval``, ``do_eval``).

Only where the file opens the autocast outside such code too are those dropped; a script whose
only FP8 autocast is in evaluation keeps it (then what it asks is read as before).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TypeVar

from preflight.reading.pysource import Module
from preflight.reading.pyvalues import dotted

_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
_EVAL_WORDS = frozenset({"eval", "evaluate", "evaluation", "valid", "validate", "validation",
                         "val", "test", "generate", "generation", "sample", "sampling",
                         "predict", "prediction", "infer", "inference"})
_VERBS = frozenset({"run", "do", "compute"})
MAX_NODES = 200_000
"""Nodes of the tree looked at (a training script has a few tens of thousands)."""

T = TypeVar("T")


def _qualified(module: Module, node: ast.expr) -> str:
    """``node`` (a callee or a decorator) qualified through the file's imports."""
    target = node.func if isinstance(node, ast.Call) else node
    name = dotted(target) or ""
    head, _, rest = name.partition(".")
    full = module.imports.get(head, head)
    return f"{full}.{rest}" if rest else full


def _eval_name(name: str) -> bool:
    words = [w for w in name.lower().split("_") if w]
    return bool(words) and (words[0] in _EVAL_WORDS or words[0].startswith(("evaluat", "validat"))
                            or (len(words) > 1 and words[0] in _VERBS and
                                words[1] in _EVAL_WORDS))


def eval_spans(module: Module) -> list[tuple[int, int]]:
    """The (first, last) lines of the file's evaluation code: ``no_grad`` / ``inference_mode``
    blocks and functions, and functions named for evaluation."""
    spans: list[tuple[int, int]] = []
    budget = [MAX_NODES]        # nodes :func:`_trains` may look at, all calls together
    for count, node in enumerate(ast.walk(module.tree)):
        if count >= MAX_NODES:
            break
        end = getattr(node, "end_lineno", None)
        if end is None:
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call) and
                _qualified(module, item.context_expr) in _NO_GRAD for item in node.items) \
                and not _trains(module, node, budget):
            spans.append((node.body[0].lineno, end))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                _eval_name(node.name) or
                any(_qualified(module, d) in _NO_GRAD for d in node.decorator_list)) \
                and not _trains(module, node, budget):
            spans.append((node.lineno, end))
    return spans


_REGRAD = frozenset({"torch.enable_grad", "torch.set_grad_enabled", "torch.autograd.enable_grad",
                     "torch.autograd.set_grad_enabled", "torch.autograd.backward"})


def _trains(module: Module, node: ast.AST, budget: list[int]) -> bool:
    """Whether code named or marked as evaluation trains after all (redteam17: ``def
    sample_and_train``, ``with torch.no_grad(): with torch.enable_grad(): ... loss.backward()``
    were dropped, the step's FP8 with them): a ``.backward()`` call, or gradients turned on
    again inside (torch v2.10.0 torch/autograd/grad_mode.py ``enable_grad`` /
    ``set_grad_enabled``)."""
    for inner in ast.walk(node):
        budget[0] -= 1
        if budget[0] < 0:
            return True                  # not looked at whole: not known to train nothing
        if isinstance(inner, ast.Call) and (
                isinstance(inner.func, ast.Attribute) and inner.func.attr == "backward" or
                _qualified(module, inner) in _REGRAD):
            return True
    return False


def training_side(module: Module, made: Sequence[T], line_of: dict[int, int | None]) -> list[T]:
    """``made`` (calls, each with its line in ``line_of`` by ``id``; None: written in another
    file) without those in evaluation code, where some are outside it; else all of them."""
    spans = eval_spans(module) if made else []
    if not spans:
        return list(made)

    def in_eval(item: T) -> bool:
        line = line_of.get(id(item))
        return line is not None and any(a <= line <= b for a, b in spans)
    kept = [item for item in made if not in_eval(item)]
    return kept if kept and len(kept) < len(made) else list(made)
