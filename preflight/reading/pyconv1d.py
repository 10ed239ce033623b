"""Whether the model a Python job builds is a Hugging Face model whose projections are
transformers' ``Conv1D`` rather than ``torch.nn.Linear`` (GPT-2 and its relatives), read from the
script and the job modules it calls into (session 43, pyfix8 item 5; holdout18 superposition:
``model.py``'s ``GPT2LMHeadModel(config)`` under ``Accelerator(mixed_precision="fp8")``).

Why it matters: the FP8 conversions of accelerate and torchao swap ``nn.Linear`` modules only
(accelerate v1.12.0 src/accelerate/utils/transformer_engine.py ``convert_model``:
``isinstance(module, nn.Linear)``; torchao v0.14.1 torchao/float8/float8_linear_utils.py
``swap_linear_layers``: ``isinstance(module, nn.Linear)``). GPT-2's attention and MLP projections
are ``Conv1D`` (transformers v4.57.1 src/transformers/models/gpt2/modeling_gpt2.py ``c_attn``,
``c_proj``, ``c_fc``; ``Conv1D(nn.Module)`` in src/transformers/pytorch_utils.py), so nothing in
the blocks is converted and the run is BF16 while asked to be FP8.

:func:`conv1d_model` gives the class (``GPT2LMHeadModel``) where a construction of such a class
runs in the files read -- its class named in the text, or an ``Auto*`` class loading a GPT-2 hub
id written as a literal --, Unknown where one is built only under a condition the text does not
decide and another model class may be built instead, None where none is built. The rule that
uses it is the rule base's (FP8D-TE-0061); this module only states the fact.
"""

from __future__ import annotations

from collections.abc import Iterable

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.pysource import Call, Module

FACT = "hf_model.conv1d"
"""Under ``config.<kind>.``: the Conv1D model class the job builds (a string), or Unknown."""

# transformers v4.57.1: the model classes whose linear projections are pytorch_utils.Conv1D
# (models/gpt2, models/openai, models/imagegpt, models/decision_transformer).
CONV1D_CLASSES = frozenset({
    "GPT2Model", "GPT2LMHeadModel", "GPT2DoubleHeadsModel", "GPT2ForSequenceClassification",
    "GPT2ForTokenClassification", "GPT2ForQuestionAnswering", "OpenAIGPTModel",
    "OpenAIGPTLMHeadModel", "OpenAIGPTDoubleHeadsModel", "OpenAIGPTForSequenceClassification",
    "ImageGPTModel", "ImageGPTForCausalImageModeling", "ImageGPTForImageClassification",
    "DecisionTransformerModel", "DecisionTransformerGPT2Model"})
_HUB_IDS = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2", "openai-gpt")
_HUB_OWNERS = ("openai-community/", "distilbert/", "")
_LOADERS = ("from_pretrained", "from_config")
MAX_CALLS = 20_000
"""Calls looked at across the files read."""


def _hub_gpt2(name: object) -> bool:
    if not isinstance(name, str):
        return False
    low = name.lower()
    return any(low == owner + hub for owner in _HUB_OWNERS for hub in _HUB_IDS)


def _model_class(call: Call) -> tuple[str, bool] | None:
    """(the class, whether it is a Conv1D one) for a construction or load of a transformers
    model class; None for any other call."""
    parts = call.func.split(".")
    if parts[0] != "transformers" or len(parts) < 2:
        return None
    loader = parts[-1] in _LOADERS
    cls = parts[-2] if loader else parts[-1]
    if cls in CONV1D_CLASSES:
        return cls, True
    if cls.startswith("AutoModel") and loader:
        first = call.args[0] if call.args else call.kwargs.get("pretrained_model_name_or_path")
        return cls, _hub_gpt2(first)
    if cls.endswith(("Model", "LMHead", "ForCausalLM", "ForMaskedLM", "ForSequenceClassification")):
        return cls, False
    return None


def conv1d_model(modules: Iterable[Module]) -> tuple[object, Source] | None:
    """The Conv1D model class the files build (see the module's docstring) with where, Unknown
    with the reason, or None."""
    sure: tuple[str, Source] | None = None
    maybe: tuple[str, Source, str] | None = None
    other: str | None = None
    seen = 0
    for module in modules:
        for call, _ in module.calls():
            seen += 1
            if seen > MAX_CALLS:
                break
            got = _model_class(call)
            if got is None:
                continue
            cls, conv1d = got
            where = Source(call.path or module.path, call.line)
            if not conv1d:
                other = other or cls
            elif call.when is None:
                sure = sure or (cls, where)
            else:
                maybe = maybe or (cls, where, call.when.reason)
    if sure is not None and other is None:
        return sure
    if sure is not None:        # redteam17: a GPT-2 teacher or reward model beside a Llama
        return Unknown(f"the files build {sure[0]} (Conv1D projections) and {str(other)[:60]}: "
                       "which one the FP8 conversion gets is not read here"), sure[1]
    if maybe is None:
        return None
    if other is None:
        return maybe[0], maybe[1]       # every model class the files build is a Conv1D one
    return Unknown(f"{maybe[0]} (Conv1D projections) is built only when {maybe[2][:160]}; "
                   "another model class may be built instead"), maybe[1]
