"""The model's shapes, from what the job gives: an HF ``config.json`` (named, or next to the
model a config names), a known model name, or the framework's own size flags (each framework record's
``shape_keys`` and ``shape_table``) as the config readers already turned them into facts.

Every value says where it came from; what is not given is either a stated default (and said so)
or makes the whole shape Unknown with the reason: a prediction on guessed shapes is no
prediction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from preflight.facts import Unknown
from preflight.speedup import ModelShape

MAX_CONFIG_BYTES = 1 << 20   # an HF config.json is a few KB

# (hidden, ffn, heads, kv_heads, layers, vocab), from each model's config.json on the Hugging
# Face Hub (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads,
# num_hidden_layers, vocab_size). Matched on the lower-cased name's last path part.
KNOWN: dict[str, tuple[int, int, int, int, int, int]] = {
    "llama-2-7b": (4096, 11008, 32, 32, 32, 32000),
    "llama-2-13b": (5120, 13824, 40, 40, 40, 32000),
    "llama-2-70b": (8192, 28672, 64, 8, 80, 32000),
    "meta-llama-3-8b": (4096, 14336, 32, 8, 32, 128256),
    "llama-3.1-8b": (4096, 14336, 32, 8, 32, 128256),
    "meta-llama-3.1-8b": (4096, 14336, 32, 8, 32, 128256),
    "meta-llama-3-70b": (8192, 28672, 64, 8, 80, 128256),
    "llama-3.1-70b": (8192, 28672, 64, 8, 80, 128256),
    "llama-3.3-70b": (8192, 28672, 64, 8, 80, 128256),
    "llama-3.2-1b": (2048, 8192, 32, 8, 16, 128256),
    "llama-3.2-3b": (3072, 8192, 24, 8, 28, 128256),
    "mistral-7b": (4096, 14336, 32, 8, 32, 32000),
    "qwen2.5-0.5b": (896, 4864, 14, 2, 24, 151936),
    "qwen2.5-1.5b": (1536, 8960, 12, 2, 28, 151936),
    "qwen2.5-7b": (3584, 18944, 28, 4, 28, 152064),
    "qwen2.5-14b": (5120, 13824, 40, 8, 48, 152064),
    "qwen2.5-72b": (8192, 29568, 64, 8, 80, 152064),
}
# The HF model_type of each known model's family, and the ones whose LM head is tied to the
# embedding (tie_word_embeddings in their config.json), for the trial's model.
KNOWN_TYPE = (("llama", "llama"), ("meta-llama", "llama"), ("mistral", "mistral"),
              ("qwen2.5", "qwen2"))
TIED = ("llama-3.2-1b", "llama-3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b")


def _keys(what: str) -> tuple[str, ...]:
    """Fact names that carry ``what`` (heads, seq, model, ...): each framework record's
    ``shape_keys``, in the registry's order."""
    from preflight.frameworks import FRAMEWORKS

    return tuple(f"config.{f.kind}.{key}" for f in FRAMEWORKS for name, keys in f.shape_keys
                 if name == what for key in keys)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**40 else None


def _first(facts: Mapping[str, Any], what: str) -> tuple[Any, str] | None:
    for name in _keys(what):
        if name in facts and not isinstance(facts[name], Unknown):
            return facts[name], name
    return None


def read_hf_config(path: str) -> dict[str, Any]:
    """An HF ``config.json`` (bounded read); raises ValueError with the reason."""
    from preflight.base import bounded

    try:
        # non-blocking, re-checked on the descriptor (issue 21 item 4: a FIFO swapped in hung)
        raw = bounded.read_bytes(path, MAX_CONFIG_BYTES)
    except bounded.NotRegularFile:
        raise ValueError(f"{path}: not a regular file") from None
    except bounded.TooLarge:
        raise ValueError(f"{path}: over {MAX_CONFIG_BYTES} bytes, not a model config.json") \
            from None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object")
    text_config = doc.get("text_config")
    cfg: dict[str, Any] = text_config if isinstance(text_config, dict) else doc
    need = ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers")
    missing = [k for k in need if _int(cfg.get(k)) is None]
    if missing:
        raise ValueError(f"{path}: no usable {', '.join(missing)} (is it a decoder LM config?)")
    return cfg


def _from_hf(cfg: Mapping[str, Any], where: str) -> dict[str, tuple[Any, str]]:
    heads = cfg["num_attention_heads"]
    return {"hidden": (cfg["hidden_size"], where), "ffn": (cfg["intermediate_size"], where),
            "heads": (heads, where), "layers": (cfg["num_hidden_layers"], where),
            "kv_heads": (_int(cfg.get("num_key_value_heads")) or heads, where),
            "vocab": (_int(cfg.get("vocab_size")), where),
            "gated": (str(cfg.get("hidden_act", "silu")) in ("silu", "swiglu", "gelu_pytorch_tanh",
                                                               "geglu"), where),
            "tied": (cfg.get("tie_word_embeddings") is True, where),
            "hf": (dict(cfg), where)}


Got = dict[str, tuple[Any, str]]


def _known(name: str) -> Got | None:
    key = name.rstrip("/").rsplit("/", 1)[-1].lower()
    for stem in sorted(KNOWN, key=len, reverse=True):
        if key.startswith(stem) or key == stem:
            h, f, a, kv, n, v = KNOWN[stem]
            where = f"known model {stem} (its config.json on the Hugging Face Hub)"
            got: Got = {k: (val, where) for k, val in zip(
                ("hidden", "ffn", "heads", "kv_heads", "layers", "vocab"), (h, f, a, kv, n, v))}
            got["tied"] = (stem in TIED, where)
            kind = next((t for prefix, t in KNOWN_TYPE if stem.startswith(prefix)), None)
            if kind:
                got["hf"] = ({"model_type": kind, "hidden_size": h, "intermediate_size": f,
                              "num_attention_heads": a, "num_key_value_heads": kv,
                              "num_hidden_layers": n, "vocab_size": v, "hidden_act": "silu",
                              "tie_word_embeddings": stem in TIED}, where)
            return got
    return None



def _from_model(facts: Mapping[str, Any], model_config: str | None,
                job_paths: Sequence[str] = ()) -> Got | Unknown:
    """What an HF config.json (named, or next to the model a config names) or a known model
    name gives.

    The model folder a config names is read only inside the job (the read boundary of
    :mod:`preflight.reading.boundary`, roots from ``job_paths``): red team (issue 21 item 2),
    ``model_name_or_path: /home/u/.docker`` made ``speedup`` open ``~/.docker/config.json``,
    and any folder's ``config.json`` gave its sizes to the report."""
    if model_config:
        try:
            return _from_hf(read_hf_config(model_config), model_config)
        except ValueError as exc:
            return Unknown(str(exc))
    model = _first(facts, "model")
    if not model or not isinstance(model[0], str):
        return {}
    local = os.path.join(model[0], "config.json")
    if os.path.isfile(local):
        from preflight.reading.boundary import boundary_for

        if not boundary_for(job_paths).allows(local):
            return Unknown(f"the model folder {model[0]} ({model[1]}) lies outside the job: "
                           "its config.json was not read; pass --model-config "
                           f"{local} to use it")
        try:
            return _from_hf(read_hf_config(local), local)
        except ValueError as exc:
            return Unknown(str(exc))
    return _known(model[0]) or {}


def _from_facts(facts: Mapping[str, Any], got: Got) -> None:
    """Fill what the model did not give from the framework facts (torchtitan flavors, the
    config readers' intent.shapes.* and raw size flags)."""
    from preflight.frameworks import FRAMEWORKS

    for fw in FRAMEWORKS:          # a shape a framework knows by name (torchtitan's flavors)
        if fw.shape_table is not None:
            got.update(fw.shape_table(facts))
    for what, fact in (("hidden", "intent.shapes.hidden"), ("ffn", "intent.shapes.ffn")):
        if what not in got and _int(facts.get(fact)):
            got[what] = (facts[fact], fact)
    for what in ("heads", "kv_heads", "layers", "vocab", "seq", "micro_batch", "tp"):
        if what not in got and (hit := _first(facts, what)) and _int(hit[0]):
            got[what] = hit
    gated = next((name for name in _keys("gated") if isinstance(facts.get(name), bool)), None)
    if "gated" not in got and gated is not None:
        got["gated"] = (facts[gated], gated)


def _batch(facts: Mapping[str, Any], got: Got) -> str | None:
    """Sequence length and micro-batch, from intent.shapes.tokens when not given; the reason
    when neither can be had."""
    if "seq" in got and "micro_batch" in got:
        return None
    tokens = _int(facts.get("intent.shapes.tokens"))
    if not tokens and "seq" not in got:
        return ("the configs read do not give the sequence length and micro-batch: pass "
                "--seq N --micro-batch N")
    if "seq" not in got:
        got["seq"] = (tokens, "intent.shapes.tokens (micro-batch of 1 assumed)")
    if "micro_batch" not in got:
        got["micro_batch"] = (max(1, (tokens or got["seq"][0]) // got["seq"][0]),
                              "intent.shapes.tokens / seq" if tokens else "default 1")
    return None


def model_shape(facts: Mapping[str, Any], *, model_config: str | None = None,
                seq: int | None = None, micro_batch: int | None = None,
                job_paths: Sequence[str] = ()) -> ModelShape | Unknown:
    """The shape for ``facts`` (config facts and intent.shapes.*), or Unknown with the reason;
    ``job_paths``: the paths named, whose job may hold the model folder a config names."""
    got = _from_model(facts, model_config, job_paths)
    if isinstance(got, Unknown):
        return got
    _from_facts(facts, got)
    if seq:
        got["seq"] = (seq, "--seq")
    if micro_batch:
        got["micro_batch"] = (micro_batch, "--micro-batch")
    missing = [k for k in ("hidden", "ffn", "heads") if k not in got]
    if missing:
        return Unknown(f"the configs read do not give the model's {', '.join(missing)}: pass "
                       "--model-config path/to/config.json (an HF model config)")
    if (why := _batch(facts, got)) is not None:
        return Unknown(why)
    for key, default in (("kv_heads", got["heads"][0]), ("tp", 1), ("gated", True)):
        if key not in got:
            got[key] = (default, f"default {default}")
    notes = () if "layers" in got else (
        "layers unknown: per-layer prediction, the LM head and optimizer left out",)
    hf = got.pop("hf", (None, ""))[0]
    tied = bool(got.pop("tied", (False, ""))[0])
    return ModelShape(
        hidden=got["hidden"][0], ffn=got["ffn"][0], heads=got["heads"][0],
        kv_heads=got["kv_heads"][0], layers=got.get("layers", (None,))[0],
        vocab=got.get("vocab", (None,))[0], seq=got["seq"][0],
        micro_batch=got["micro_batch"][0], gated=bool(got["gated"][0]), tp=got["tp"][0],
        source=tuple(f"{k}={v[0]} from {v[1]}" for k, v in got.items()) + notes,
        model_type=hf.get("model_type") if isinstance(hf, dict) and isinstance(
            hf.get("model_type"), str) else None, tied=tied, hf_config=hf)
