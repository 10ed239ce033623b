"""Megatron-Core's CUDA-graph and grouped-GEMM settings that Megatron-Bridge and NeMo 2 jobs set
on the model config, stated as the ``config.megatron.*`` facts the Megatron-LM reader states for
``--cuda-graph-impl`` / ``--cuda-graph-scope`` / ``--cuda-graph-modules`` /
``--enable-cuda-graph`` / ``--external-cuda-graph`` / ``--moe-grouped-gemm``, so the rules on
Megatron-Core's behaviour (FP8D-TE-0059, FP8D-MEG-0050, FP8D-MEG-0053) judge them too.

Both hand Megatron-Core the fields unchanged: Megatron-Bridge's model provider *is* Megatron-Core's
``TransformerConfig`` (``GPTModelProvider(TransformerConfig, ModelProviderMixin)``,
src/megatron/bridge/models/gpt_provider.py @ v0.6.0; ``model.cuda_graph_impl`` read at
training/initialize.py l.726 and gpt_provider.py l.233 @ v0.6.0, scopes normalised by
utils/cuda_graph.py l.26-75: a comma-separated string or a list, ``CudaGraphScope.moe`` by its
member name); its performance launcher's ``--cuda_graph_impl`` / ``--cuda_graph_scope attn,moe``
set the same fields (scripts/performance/utils/overrides.py l.119-140 @ v0.6.0), under the
``key=value`` overrides. NeMo 2's ``recipe.model.config`` is a ``TransformerConfig`` subclass
(``GPTConfig``, nemo/collections/llm/gpt/model/base.py @ 8cfedd72) whose fields reach
Megatron-Core as set.

Beside them: ``config.megatron.args_of`` (the framework; Megatron's own derive stays off) and
``validated_args`` / ``parsed_args`` false (neither runs Megatron-LM's ``parse_args`` /
``validate_args``: Megatron-Bridge validates its ``ConfigContainer`` itself,
training/config.py ``ConfigContainer.validate`` @ v0.6.0; NeMo 2 builds the config with
NeMo-Run / Fiddle), so the rules citing an argparse or validate_args check stay quiet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec

from preflight.facts import Unknown
from preflight.frameworks import megatron_validated as validated
from preflight.reading.types import ReaderOutput

MEGATRON = "config.megatron"
FIELDS = ("cuda_graph_impl", "cuda_graph_scope", "cuda_graph_modules", "enable_cuda_graph",
          "external_cuda_graph", "moe_grouped_gemm")
_LISTS = frozenset({"cuda_graph_scope", "cuda_graph_modules"})
_BOOLS = frozenset({"enable_cuda_graph", "external_cuda_graph", "moe_grouped_gemm"})
P = ParamSpec("P")
_SPLIT = re.compile(r"[,\s]+")
_MAX_ITEMS = 32     # Megatron-Core has a dozen graph scopes; more is not a scope list
_WHY = {
    "megatron_bridge": "Megatron-Bridge v0.6.0 builds Megatron-Core's configs from its "
                       "ConfigContainer (training/config.py) and never runs Megatron-LM's "
                       "parse_args / validate_args",
    "nemo2": "NeMo 2 (8cfedd72) builds Megatron-Core's TransformerConfig from the recipe "
             "(NeMo-Run / Fiddle) and never runs Megatron-LM's parse_args / validate_args",
}


def scopes(value: Any) -> Any:
    """A scope / module list as Megatron-Bridge normalises it (utils/cuda_graph.py l.26-55 @
    v0.6.0): a string split on commas, members by their name (``CudaGraphScope.moe`` -> moe)."""
    if isinstance(value, Unknown) or value is None:
        return value
    items = _SPLIT.split(value.strip()) if isinstance(value, str) else value
    if not isinstance(items, list) or len(items) > _MAX_ITEMS:
        return Unknown(f"{str(value)[:60]!r} is no list of CUDA-graph scopes")
    if any(isinstance(x, Unknown) for x in items):
        return next(x for x in items if isinstance(x, Unknown))
    return [str(x).rsplit(".", 1)[-1].strip().lower() for x in items if str(x).strip()]


def _flag(value: Any) -> Any:
    """A bool field as Megatron-Core tests it (``if config.external_cuda_graph``): the
    frameworks hand strings on unchanged (megatron_bridge.py ``file_strings='truth'``)."""
    if isinstance(value, (bool, Unknown)) or value is None:
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str):
        return bool(value)
    return Unknown(f"{str(value)[:40]!r} is no bool")


def state(facts: Mapping[str, Any], prov: Mapping[str, Any], base: str, kind: str,
          extra: Mapping[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``config.megatron.<field>`` from ``<base>.<field>`` (``config.megatron_bridge.model``,
    ``config.nemo2.model.config``); ``extra`` maps a field to another fact that gives it where
    ``<base>.<field>`` is absent (the performance launcher's flags). Empty when none is set."""
    out: dict[str, Any] = {}
    src: dict[str, Any] = {}
    for field in FIELDS:
        name = f"{base}.{field}"
        if name not in facts and extra and extra.get(field) in facts:
            name = extra[field]
        if name not in facts:
            continue
        value = facts[name]
        value = scopes(value) if field in _LISTS else _flag(value) if field in _BOOLS else value
        if value is None:
            continue
        out[f"{MEGATRON}.{field}"], src[f"{MEGATRON}.{field}"] = value, prov.get(name, kind)
    if out:
        where = next(iter(src.values()))
        out[f"{MEGATRON}.args_of"], src[f"{MEGATRON}.args_of"] = kind, where
        out[validated.NAME], src[validated.NAME] = False, f"{where} ({_WHY[kind]})"
        out[validated.PARSED], src[validated.PARSED] = False, f"{where} ({_WHY[kind]})"
    return out, src


def with_megatron(read: ReaderOutput, base: str, kind: str,
                  extra: Mapping[str, str] | None = None) -> ReaderOutput:
    """``read`` with the Megatron-Core settings of :func:`state` added (never replacing a
    ``config.megatron.*`` fact the reader stated itself)."""
    out, src = state(read.facts, read.provenance, base, kind, extra)
    if not out:
        return read
    facts = dict(read.facts)
    prov = dict(read.provenance)
    for name, value in out.items():
        if name not in facts:
            facts[name], prov[name] = value, src[name]
    return ReaderOutput(facts, prov, read.problems, read.linked)


def wrapped(reader: Callable[P, ReaderOutput], base: str, kind: str,
            extra: Mapping[str, str] | None = None) -> Callable[P, ReaderOutput]:
    """``reader`` (a YAML, launch-line or Python reader of ``kind``) with :func:`with_megatron`
    applied to what it reads."""
    def read(*args: P.args, **kwargs: P.kwargs) -> ReaderOutput:
        return with_megatron(reader(*args, **kwargs), base, kind, extra)
    read.__doc__ = reader.__doc__
    return read
