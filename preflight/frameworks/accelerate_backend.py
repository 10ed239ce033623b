"""accelerate's FP8 backend where the job names none: the one ``Accelerator`` picks from what is
installed (``intent.backend`` for :mod:`.accelerate`).

With ``mixed_precision="fp8"`` and no recipe handler, no ``fp8_config.backend`` and no
``ACCELERATE_FP8_BACKEND``, ``Accelerator.__init__`` creates the handler itself: torchao's when
``torchao`` >= 0.6.1 is installed, else Transformer Engine's when ``transformer-engine`` is, else
MS-AMP's, else it raises ImportError (accelerator.py l.457-474 at v1.8.0, l.480-503 at v1.11.0 and
v1.14.0; utils/imports.py ``is_torchao_available`` / ``is_transformer_engine_available`` /
``is_msamp_available`` at v1.11.0). From 1.8.0 that handler sets ``has_fp8_handler`` (PR 3611), so
``prepare()`` converts with it; 1.4-1.7 create it without setting the flag and nothing is
converted (FP8D-ACC-0021), so there the backend stays Unknown, as before 1.4.

What is installed is read from ``pkg.*`` (this machine's packages, or the plan's ``--assume``):
an absent package is not installed, an Unknown one leaves the backend Unknown. With none of the
three installed accelerate refuses to start; the backend is then Unknown with that reason (the
machine checked may not be the one the job trains on).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from preflight.base.versions import comparison_key
from preflight.facts import Unknown

_V1_8 = Version("1.8.0")
_TORCHAO_MIN = Version("0.6.1")
# accelerate's order (AO -> TE -> MSAMP) and the distribution each checks the metadata of
_ORDER = (("torchao", "torchao", _TORCHAO_MIN), ("te", "transformer-engine", None),
          ("msamp", "ms-amp", None))
_READ_AT = "accelerator.py l.480-503 at v1.11.0"


def _version(facts: Mapping[str, Any], dist: str) -> Version | Unknown | None:
    """The installed version of ``dist``; None when not installed; Unknown when not known."""
    raw = facts.get(f"pkg.{dist}.version")
    if raw is None:
        return None
    if isinstance(raw, Unknown):
        return Unknown(f"whether {dist} is installed is not known: {raw.reason}"[:300])
    key = comparison_key(str(raw))
    return key if key is not None else Unknown(f"{dist} version {str(raw)[:40]!r} does not parse")


_P = "config.accelerate."


def _undecided(facts: Mapping[str, Any]) -> Unknown | None:
    """Why the job itself may still name a backend or pass a handler the text does not show."""
    for name in (_P + "fp8_config.backend", "env.ACCELERATE_FP8_BACKEND",
                 _P + "accelerator.fp8_backend", _P + "kwargs_handlers", _P + "cli.script"):
        value = facts.get(name)
        if isinstance(value, Unknown):
            return Unknown(f"no FP8 backend named in the files read, and {value.reason}"[:300])
        if name.endswith("fp8_backend") and value is not None:
            return Unknown("a recipe handler in code names no backend it is known to select")
    handlers = facts.get(_P + "kwargs_handlers")
    if handlers is not None and handlers != []:
        return Unknown(f"recipe handlers {str(handlers)[:80]} name no backend")
    return None


def auto_backend(facts: Mapping[str, Any]) -> tuple[str | Unknown, str]:
    """``(backend, provenance)`` accelerate picks for an FP8 job (``mixed_precision`` fp8) whose
    files name no backend (the caller checks ``fp8_config.backend`` and the environment)."""
    undecided = _undecided(facts)
    if undecided is not None:
        return undecided, "intent"
    acc = _version(facts, "accelerate")
    if not isinstance(acc, Version):
        why = acc.reason if isinstance(acc, Unknown) else "accelerate is not installed here"
        return Unknown("no FP8 backend named: accelerate >= 1.8.0 picks torchao, else "
                       f"Transformer Engine, else MS-AMP, whichever is installed, and {why} "
                       "(--assume pkg.accelerate=V)"), "intent"
    if acc < _V1_8:
        return Unknown(f"no FP8 backend named: accelerate {acc} creates a recipe handler it then "
                       "does not use before 1.8.0 (FP8D-ACC-0021)"), "intent"
    for backend, dist, least in _ORDER:
        got = _version(facts, dist)
        if isinstance(got, Unknown):
            return Unknown(f"no FP8 backend named: accelerate picks the first installed of "
                           f"torchao, Transformer Engine, MS-AMP, and {got.reason}"), "intent"
        if got is not None and (least is None or got >= least):
            return backend, (f"no FP8 backend named: accelerate {acc} picks the first installed "
                             f"of torchao, Transformer Engine, MS-AMP: {dist} {got} ({_READ_AT})")
    return Unknown("no FP8 backend named and none of torchao (>= 0.6.1), transformer-engine, "
                   "ms-amp is installed here: accelerate would refuse to start (ImportError), "
                   "unless the machine the job trains on has one"), "intent"


__all__ = ["auto_backend"]
