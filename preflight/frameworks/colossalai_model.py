"""ColossalAI ``use_fp8``: which layers of the model its FP8 hook turns into FP8 GEMMs, where the
script says so. Only HF GPT-2 / OpenAI GPT models are told apart (holdout15, ColossalAI issue
6390); any other model gives no fact, so the rules that need an FP8 GEMM decide as before.

``FP8Hook`` rewrites ``F.linear`` alone (colossalai/quantization/fp8_hook.py at v0.5.0):
``linear_fp8`` falls back to ``F.linear`` only on the *input* shape (fp8.py L842-L846 at v0.5.0:
last dim and rows multiples of 16), so a Linear whose ``out_features`` is not a multiple of 16
reaches ``torch._scaled_mm`` and fails its "dimensions of mat2 divisible by 16" check (issue
6390: ``torch.Size([768, 2])``). GPT-2's and OpenAI GPT's blocks are transformers ``Conv1D``
(``torch.addmm``: src/transformers/pytorch_utils.py ``Conv1D.forward``; models/gpt2/
modeling_gpt2.py, models/openai/modeling_openai.py at v4.46.0), which the hook never sees: their
only ``F.linear`` is a head. For ``*ForSequenceClassification`` / ``*ForTokenClassification``
that head is ``nn.Linear(hidden, num_labels)``; ``num_labels`` is read from the model call or the
config call passed to it as ``config=`` (AutoConfig / GPT2Config with ``num_labels=N``).

Facts (``config.colossalai.model.*``): ``linear_layers`` "conv1d" (the blocks are Conv1D) and
``head_out_features`` / ``head_out_multiple_of_16`` (Unknown where the script does not say
``num_labels``); nothing when the script builds another model, several, or an ``nn.Linear``.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.reading.pyfacts import PyOut
from preflight.reading.pyvalues import Call

PREFIX = "config.colossalai.model"
_CLASS = re.compile(r"^transformers\.(\w+)(?:\.(from_pretrained|from_config|_from_config))?$")
_MODEL = re.compile(r"(?:Model|LMHeadModel|For\w+)$")
_CONV1D = re.compile(r"^(?:GPT2|OpenAIGPT)(?:Model|LMHeadModel|DoubleHeadsModel|For\w+)$")
# hub ids of GPT-2 / OpenAI GPT checkpoints (the Auto classes build a GPT-2 class for them)
_CONV1D_IDS = re.compile(r"^(?:(?:openai-community|distilbert)/)?(?:gpt2(?:-medium|-large|-xl)?|"
                         r"distilgpt2|openai-gpt)$")
_LABEL_HEADS = ("ForSequenceClassification", "ForTokenClassification")
_LINEAR = frozenset({"torch.nn.Linear", "torch.nn.modules.linear.Linear", "torch.nn.LazyLinear"})


def _conv1d(call: Call, cls: str) -> bool | None:
    """True: a GPT-2-family model; False: another model; None: not a model-building call."""
    if not _MODEL.search(cls) or cls.endswith(("Config", "Tokenizer")):
        return None
    if cls.startswith("AutoModel"):
        name = call.args[0] if call.args else call.kwargs.get("pretrained_model_name_or_path")
        return isinstance(name, str) and bool(_CONV1D_IDS.match(name.strip()))
    return bool(_CONV1D.match(cls))


def _labels(call: Call) -> tuple[Any, int]:
    """``num_labels`` of the model call, else of the config call given to it as ``config=``,
    with the line that says it."""
    if "num_labels" in call.kwargs:
        return call.kwargs["num_labels"], call.lines.get("num_labels", call.line)
    config = call.kwargs.get("config")
    if isinstance(config, Call) and "num_labels" in config.kwargs:
        return config.kwargs["num_labels"], config.lines.get("num_labels", config.line)
    return Unknown("the script does not say num_labels (its head's out_features)"), call.line


def read_model(out: PyOut) -> None:
    """``config.colossalai.model.*`` from the model the script builds (module docstring)."""
    models: list[tuple[Call, str, bool]] = []
    for call, _ in out.calls():
        if call.func in _LINEAR:
            return                      # the script's own nn.Linear: an F.linear of any shape
        found = _CLASS.match(call.func)
        kind = _conv1d(call, found.group(1)) if found else None
        if kind is not None:
            models.append((call, found.group(1) if found else "", kind))
    if not models or not all(kind for _, _, kind in models):
        return
    line = models[0][0].line
    with out.made(models[0][0]):
        out.put(f"{PREFIX}.linear_layers", "conv1d", line)
    heads = {_head(call, cls) for call, cls, _ in models}
    head, line = heads.pop() if len(heads) == 1 else (
        Unknown(f"{len(heads)} models built (lines {sorted(n for _, n in heads)[:4]})"), line)
    if head is None:
        return                          # no Linear head: the hook has no F.linear to rewrite
    with out.made(models[0][0]):
        out.put(f"{PREFIX}.head_out_features", head, line)
        out.put(f"{PREFIX}.head_out_multiple_of_16",
                head if isinstance(head, Unknown) else head % 16 == 0, line)


def _head(call: Call, cls: str) -> tuple[Any, int]:
    """The out_features of the model's Linear head and its line; None for a bare ``*Model``
    (no head)."""
    if cls.endswith("Model") and not cls.endswith(("LMHeadModel", "DoubleHeadsModel")):
        return None, call.line
    if cls.endswith(_LABEL_HEADS):
        labels, line = _labels(call)
        if isinstance(labels, bool) or not isinstance(labels, (int, Unknown)) \
                or (isinstance(labels, int) and not 0 < labels < 1 << 31):
            return Unknown(f"num_labels={str(labels)[:40]!r}: not a number the text decides"), line
        return labels, line
    return Unknown(f"{cls}: its head's out_features are not read"), call.line
