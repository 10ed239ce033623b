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
``accelerator.backward(loss)`` never makes it a PyTorch job too.
"""

from __future__ import annotations

import re

from preflight.reading.parse import ParseError, read_text
from preflight.reading.pysource import Module

HINT = re.compile(r"\.backward\s*\(")
"""The words that make a script with no FP8 API worth parsing as a training loop."""


def _other_framework(module: Module, own: str) -> bool:
    from preflight.frameworks import FRAMEWORKS
    try:
        text = read_text(module.path)
    except (ParseError, OSError):
        return True
    return any(f.python_hint is not None and f.kind != own and f.python_hint.search(text)
               for f in FRAMEWORKS if f.read_python is not None)


def training_step(module: Module, own: str) -> int | None:
    """The line of the backward pass of a training loop no other framework takes (a backward
    and an optimizer ``.step()`` both called in code that runs, under a condition or not), or
    None when ``module`` is no such loop."""
    from preflight.reading.pycallers import reached

    backward = step = None
    for call, scope in module.calls():
        if not reached(module, scope):
            continue    # a function nothing calls trains nothing (redteam12: it was a job)
        last = call.name.rpartition(".")[2] if call.name else ""
        if last == "backward" and backward is None:
            backward = call.line
        elif last == "step" and step is None:
            step = call.line
        if backward is not None and step is not None:
            break
    if backward is None or step is None or _other_framework(module, own):
        return None
    return backward


__all__ = ["HINT", "training_step"]
