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
are, and Unknown where those are unknown. The provenance says the servers' own launch was not
read, so a reader of the report knows where an FP8 server flag would have to be.
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown

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


def kv_cache(engine: str, src: str) -> tuple[bool, str]:
    """The KV cache of servers launched apart: the engines' ``auto`` (the model's dtype)."""
    return False, f"{src}{note(engine)}"
