"""A rollout served by inference servers started apart from the files given: an RL trainer that
reaches its vLLM / SGLang servers by URL (prime-rl's trainer launched alone, the Nous torchtitan
GRPO fork's ``[grpo] sglang_urls``), their launch lines not among the files the user named.

What the files given say of the rollout is read and the rest is the engine's defaults, as the
trainer's own FP8 is read from the config given and its framework's defaults (a launch line not
given could change either; fwrl9, session 43: holdout23's two RL controls read "FP8 rollout:
Unknown" where nothing asked for FP8). Both engines default to no quantization, in which case
they serve the checkpoint's precision -- vLLM ``EngineArgs.quantization = None`` and
``kv_cache_dtype = "auto"`` (vllm-project/vllm v0.11.0 ``vllm/engine/arg_utils.py``; the method
then comes from the checkpoint's ``quantization_config``), SGLang ``ServerArgs.quantization =
None`` and ``kv_cache_dtype = "auto"`` (sgl-project/sglang v0.5.6
``python/sglang/srt/server_args.py``) -- so the rollout is FP8 exactly when the weights it serves
are, and Unknown where those are unknown. The servers' own launch can still ask for FP8 (a
``--quantization fp8`` or ``--kv-cache-dtype fp8`` there, or prime-rl's ``infer.toml``
``[vllm] quantization``): so an FP8 rollout is stated where the weights are FP8, and a BF16 one is
not stated at all (fwrl10, session 44: a prime-rl trainer named alone beside an FP8 ``infer.toml``
the user did not name read a confident "no"); the engine's provenance says the servers' launch
was not read, so a reader of the report knows where an FP8 server flag would have to be.

The engines' defaults are shared with the readers whose engines the framework launches itself
from flags the job gives (slime, AReaL): given no quantization they serve the weights' precision
(:func:`by_weights`), and ``kv_cache_dtype`` left out is ``auto`` (:func:`kv_fp8`).
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._derived import IntentOut
from preflight.frameworks.ckptname import says_fp8

_DEFAULTS = {
    "vllm": "vllm-project/vllm@v0.11.0 vllm/engine/arg_utils.py (EngineArgs.quantization = "
            "None, kv_cache_dtype = auto)",
    "sglang": "sgl-project/sglang@v0.5.6 python/sglang/srt/server_args.py (ServerArgs."
              "quantization = None, kv_cache_dtype = auto)",
}
ENGINES = frozenset(_DEFAULTS)


def note(engine: str) -> str:
    """What a provenance adds for servers launched apart: their defaults, and what was not read."""
    # an engine not named (the Nous fork's sglang_* settings serve SGLang or vLLM): both cited
    ones = (engine,) if engine in _DEFAULTS else tuple(sorted(_DEFAULTS))
    names, cited = " / ".join(ones), "; ".join(_DEFAULTS[e] for e in ones)
    return (f" (the {names} servers are launched apart from the files given (reached by URL): "
            f"read at the engine's defaults, {cited}; a --quantization or --kv-cache-dtype of "
            "their own launch was not given)")


def served(held: Any, held_src: str, engine: str) -> tuple[Any, str]:
    """The rollout's FP8 for servers launched apart, serving weights ``held`` (FP8 or not, or
    Unknown, as :mod:`.ckptconfig` or the framework's weight transfer says): the engine's default
    quantization keeps their precision."""
    if isinstance(held, bool):
        return held, f"{held_src}{note(engine)}"
    if isinstance(held, Unknown):
        return held, held_src
    return Unknown(f"the weights the rollout serves are {str(held)[:40]!r}: neither FP8 nor "
                   "not"), held_src


def put(out: IntentOut, held: Any, held_src: str, engine: str) -> None:
    """State the rollout of servers launched apart: FP8 (or Unknown) as the weights they serve
    are, nothing where those are not FP8 (the servers' own launch, not given, decides), and no
    KV cache (an FP8 one is a flag of that launch); the engine's provenance says so."""
    fp8, src = served(held, held_src, engine)
    if fp8 is False:
        out.discard("rollout.fp8")
    else:
        out["rollout.fp8"] = (fp8, src)
    out.discard("rollout.kv_cache_fp8")
    value, esrc = out.get("rollout.engine", (None, "intent"))
    if value is not None:
        out["rollout.engine"] = (value, f"{esrc}{note(engine)}")


def kv_cache(engine: str, src: str) -> tuple[bool, str]:
    """The KV cache of servers launched apart: the engines' ``auto`` (the model's dtype)."""
    return False, f"{src}{note(engine)}"


def by_weights(held: Any, path: Any) -> bool | None:
    """What an engine given no quantization serves: the weights' precision as a reader stated it
    (``held``: :func:`.ckptconfig.weights`, its config.json inside the job), else as the
    checkpoint's name says (:func:`.ckptname.says_fp8`); None where neither says."""
    if isinstance(held, bool):
        return held
    return says_fp8(path) if isinstance(path, str) else None


def kv_fp8(kv: Any) -> Any:
    """An engine's FP8 KV cache from its ``kv_cache_dtype`` as the job gives it (None: left
    out, the engines' ``auto``); an Unknown (a runtime variable) stays Unknown."""
    if isinstance(kv, Unknown):
        return kv
    return kv is not None and str(kv).strip().lower().startswith("fp8")
