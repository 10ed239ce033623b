"""Whether one launch's reading asks for FP8, for :func:`.launchpick.merged` (the lead's
multi-launch policy, session 43: a script that runs BF16 launches and an FP8 one asks FP8).

The readers' kit knows no framework, so which ``config.*`` facts mean "FP8" is the frameworks'
word: the intent is derived from the one launch's facts as from the whole job's
(:func:`preflight.intent.derive_intent`).
"""

from __future__ import annotations

from preflight.reading.types import ReaderOutput


def asks(out: ReaderOutput) -> bool | None:
    """``intent.fp8`` of ``out``'s facts alone: True / False, or None where not known."""
    from preflight.intent import derive_intent

    kinds = list(dict.fromkeys(n.split(".")[1] for n in out.facts
                               if n.startswith("config.") and n.count(".") >= 2))
    if not kinds:
        return None
    values, _ = derive_intent({**out.facts, "config.kinds": kinds})
    got = values.get("intent.fp8")
    return got if isinstance(got, bool) else None
