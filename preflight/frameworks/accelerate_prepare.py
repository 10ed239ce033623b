"""Which objects each ``accelerator.prepare(...)`` call of a script takes, as far as the text
shows: ``config.accelerate.accelerator.prepare_apart`` (FP8D-ACC-0095).

accelerate's Transformer Engine path (``Accelerator._prepare_te``, accelerator.py l.2022-2055 at
v1.10.0, l.2086-2119 at v1.14.0; since v0.34.0, PR 2983) swaps the model's layers for TE ones and
re-points the optimizer's parameter groups at them, so each ``prepare()`` call that takes a model
or an optimizer must take exactly one of each: a model alone (or an optimizer alone) raises
"You must pass a model and an optimizer together to `accelerate.prepare()` when using
TransformerEngine", two models "You can't use multiple models". MS-AMP's ``_prepare_msamp``
has the same check. The fact is:

- ``"model"`` / ``"optimizer"``: a call takes a model without an optimizer (or the reverse), at
  that call's line; ``"several"``: a call takes two models or two optimizers;
- ``false``: every ``prepare()`` call of the file takes a model and an optimizer together or
  neither (dataloaders, schedulers);
- Unknown: a call takes an argument the text does not show to be a model, an optimizer, a
  dataloader or a scheduler where that decides it, or runs under a condition the text does not
  decide; absent when the file makes no ``prepare()`` call.

What an argument is comes from the call that built it (``torch.optim.AdamW(...)``,
``DataLoader(...)``, ``AutoModelForCausalLM.from_pretrained(...)``, a class of the file that
derives from ``torch.nn.Module``), else from its name as written (``optimizer``,
``train_dataloader``, ``lr_scheduler``, ``model`` / ``unet`` / ``transformer``); anything else is
"not known". The receiver is an ``accelerate.Accelerator`` built in the file, or a name
``accelerator`` (a parameter: sd-scripts' ``prepare_unet_with_accelerator(self, args,
accelerator, unet)``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved

FACT = "config.accelerate.accelerator.prepare_apart"

_OPTIM = re.compile(r"(?:^|\.)(?:optim|optimizers?|optimization)\.|(?:Adam\w*|SGD|Adafactor|Lion"
                    r"\w*|RMSprop|Adagrad|Adadelta|Prodigy\w*|Muon|LAMB|Lamb|\w*Optimizer\w*)$")
_LOADER = re.compile(r"DataLoader$|dataloader$")
_SCHED = re.compile(r"(?:^|\.)lr_scheduler\.|Scheduler$|(?:get_\w*schedule\w*|get_scheduler)$")
_MODEL = re.compile(r"\.(?:from_pretrained|from_config|_from_config)$|(?:Model|For[A-Z]\w+|"
                    r"Sequential|Linear|ModuleList|Transformer\w*|UNet\w*)$")

_NAME_OPTIM = re.compile(r"(?i)(?:^|_)(?:opt|optim|optimizer|optimiser)s?(?:_|$|\d)")
_NAME_LOADER = re.compile(r"(?i)(?:loader|(?:^|_)dl(?:_|$))")
_NAME_SCHED = re.compile(r"(?i)sched")
_NAME_MODEL = re.compile(r"(?i)(?:model|net$|network|unet|transformer|flux|dit$|mmdit|encoder|"
                         r"decoder|vae|controlnet|backbone|policy|critic|actor|(?:^|_)lm$)")


def _role(node: ast.expr, value: Any, module: Module) -> str:
    """``model`` / ``optimizer`` / ``dataloader`` / ``scheduler`` / ``?`` for one argument."""
    if isinstance(node, ast.Starred):
        return "?"
    if isinstance(value, Call):
        names = module.lineage(value.func)
        for name in names:      # schedulers first: torch.optim.lr_scheduler.* is no optimizer
            if _SCHED.search(name):
                return "scheduler"
            if _LOADER.search(name):
                return "dataloader"
            if _OPTIM.search(name):
                return "optimizer"
            if name.startswith("torch.nn.") or _MODEL.search(name):
                return "model"
    text = node.attr if isinstance(node, ast.Attribute) else node.id \
        if isinstance(node, ast.Name) else ""
    for role, pattern in (("optimizer", _NAME_OPTIM), ("dataloader", _NAME_LOADER),
                          ("scheduler", _NAME_SCHED), ("model", _NAME_MODEL)):
        if text and pattern.search(text):
            return role
    return "?"


def _is_accelerator(node: ast.Call | ast.Attribute, scope: Any, module: Module) -> bool:
    """Whether ``node`` (a call, or the ``x.prepare`` it calls) is an Accelerator's prepare."""
    func = node.func if isinstance(node, ast.Call) else node
    if not isinstance(func, ast.Attribute) or func.attr != "prepare":
        return False
    receiver = module.evaluate(func.value, scope)
    if isinstance(receiver, Call):
        return any(n.split(".")[0] == "accelerate" and n.endswith(".Accelerator")
                   for n in module.lineage(receiver.func))
    if isinstance(receiver, Ref):
        return False                     # a module's function (`torch.prepare`), not a method
    last = func.value.attr if isinstance(func.value, ast.Attribute) else \
        func.value.id if isinstance(func.value, ast.Name) else ""
    return last == "accelerator"


def _verdict(roles: list[str]) -> str | bool | None:
    """What ``_prepare_te`` does with one call's objects: the fact's value, or None when the
    objects it cannot tell decide it."""
    models, optims, unknown = roles.count("model"), roles.count("optimizer"), roles.count("?")
    if models > 1 or optims > 1:
        return "several"
    if unknown:
        return None
    if models and not optims:
        return "model"
    if optims and not models:
        return "optimizer"
    return False


def prepare_calls(out: PyOut, module: Module) -> None:
    """``config.accelerate.accelerator.prepare_apart`` from the file's ``prepare()`` calls."""
    nodes: dict[int, list[tuple[ast.Call, Any]]] = {}
    for scope in module.scopes:
        for node in scope.calls:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "prepare":
                nodes.setdefault(node.lineno, []).append((node, scope))
    unsure: tuple[int, str] | None = None
    first: int | None = None
    judged: set[int] = set()
    shadow = _shadow(module)
    for call, _ in module.calls() if nodes else ():
        for node, scope in nodes.get(call.line, ()):
            if not call.func.endswith("prepare") or not _is_accelerator(node, scope, module):
                continue
            judged.add(id(node.func))
            first = call.line if first is None else min(first, call.line)
            roles = [_role(a, v, module) for a, v in zip(node.args, call.args)]
            roles += ["?"] * (len(node.args) - len(call.args))   # past the reader's bound
            verdict = _verdict(roles)
            more = f", ... {len(roles) - 8} more" if len(roles) > 8 else ""
            shown = f"prepare({', '.join(roles[:8])}{more}) at line {call.line}"
            if isinstance(verdict, str) and call.when is None and shadow is None:
                out.put(FACT, verdict, call.line)
                return
            if isinstance(verdict, str) and call.when is not None and unsure is None:
                unsure = (call.line, f"{shown} runs under a condition the text does not "
                                     f"decide ({call.when.reason})")
            elif verdict is None and unsure is None:
                unsure = (call.line, f"{shown}: the objects marked ? are not shown to be a "
                                     "model, an optimizer, a dataloader or a scheduler")
    other = _unfollowed(module, judged)
    if unsure is None and other is not None:
        unsure = other
    if unsure is None and shadow is not None and first is not None:
        unsure = shadow
    if unsure is not None:
        out.put(FACT, Unresolved(unsure[1], unsure[0]), unsure[0])
    elif first is not None:
        out.put(FACT, False, first)


def _shadow(module: Module) -> tuple[int, str] | None:
    """A class or function of the script named ``Accelerator`` beside accelerate's import: the
    text does not follow which of the two a call builds (redteam4: the script's own class was
    taken for accelerate's, FP8D-ACC-0095 fired on it; hiding the real one would be worse)."""
    node = module.classes.get("Accelerator") or (module.functions.get("Accelerator") or
                                                 (None,))[0]
    if node is None or not module.imports.get("Accelerator", "").startswith("accelerate"):
        return None
    return node.lineno, (f"the script defines its own Accelerator (line {node.lineno}) beside "
                         "accelerate's: which one each prepare() call belongs to is not followed")


def _unfollowed(module: Module, judged: set[int]) -> tuple[int, str] | None:
    """The first use of an Accelerator's ``prepare`` that the calls read above do not cover (an
    alias ``prep = accelerator.prepare``, ``map`` / ``partial``, ``getattr(accelerator,
    "prepare")``, a call in a lambda or past the scope's call bound): its objects are not read,
    so the file is no proof that every call pairs a model with its optimizer (redteam4: each of
    these left the fact false or absent, FP8D-ACC-0095 quiet)."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Attribute) and node.attr == "prepare" and \
                id(node) not in judged and _is_accelerator(node, module.module, module):
            return node.lineno, (f"accelerator.prepare at line {node.lineno} is used in a way "
                                 "the text does not follow (an alias, a lambda, map or "
                                 "partial, or past the reader's bound)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "getattr" and len(node.args) > 1 and \
                isinstance(node.args[1], ast.Constant) and node.args[1].value == "prepare":
            return node.lineno, (f"getattr(..., 'prepare') at line {node.lineno}: the objects "
                                 "it prepares are not read")
    return None


# Public trainers an `accelerate launch` line runs from their own checkout, whose prepare()
# calls were read at a commit: the script's file name, a flag only its parser has (so a job's own
# train_network.py is not taken for it), the flags that change which calls run, and what
# `_prepare_te` meets. kohya-ss/sd-scripts f25c2658 (2025-08-13, the day before issue 2176) and
# 48d368fa (2026-02-16): NetworkTrainer.train prepares the U-Net / DiT alone
# (train_network.py l.353-356 `return accelerator.prepare(unet)`, called at l.859 unless
# --network_train_text_encoder_only; flux_train_network.py l.516, sd3_train_network.py l.474,
# lumina_train_network.py l.357 override it, still alone), then the LoRA network with the
# optimizer (l.875); only --deepspeed prepares one wrapped model with the optimizer (l.844-856).
# `--network_module` is the NetworkTrainer parser's own option (train_network.py l.1759).
KNOWN_TRAINERS: tuple[tuple[frozenset[str], str, frozenset[str], str], ...] = (
    (frozenset({"train_network.py", "sdxl_train_network.py", "flux_train_network.py",
                "sd3_train_network.py", "lumina_train_network.py"}), "network_module",
     frozenset({"deepspeed", "network_train_text_encoder_only"}),
     "kohya-ss/sd-scripts f25c2658 train_network.py l.353-356, l.859: the model is prepared "
     "alone"),
)


def known_trainer(script: str, flags: set[str]) -> tuple[str | Unresolved, str] | None:
    """What ``prepare_apart`` is for a public trainer ``script`` the job does not hold, given the
    flags its launch line passes (with the source read), or None when it is none of them."""
    base = script.rsplit("/", 1)[-1]
    for names, marker, changes, source in KNOWN_TRAINERS:
        if base in names and marker in flags:
            hit = sorted(flags & changes)
            if hit:
                return Unresolved(f"{base} with --{hit[0]} prepares the model differently "
                                  f"({source} otherwise)"), source
            return "model", source
    return None
