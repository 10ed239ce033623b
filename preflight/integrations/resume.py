"""Resume awareness shared by the framework callbacks: ``runtime.resumed`` and the one extra
inspection after the first optimizer step of a resumed run.

At train start a resumed run's Transformer Engine modules may not have run an FP8 step yet, so a
lost DelayedScaling state shows only as "no state" (FP8D-CKPT-0010); one step later it shows as
an amax history shorter than the steps taken (FP8D-CKPT-0009). The callbacks therefore inspect
at train start and once more after the first step that follows a resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def resumed_facts(global_step: Any, ckpt_path: Any = None) -> dict[str, Any]:
    """``runtime.resumed`` from what a trainer knows at train start: a checkpoint path it restored
    from, or a step count above zero. Nothing when it cannot tell (no such attributes)."""
    if ckpt_path:
        return {"runtime.resumed": True}
    if isinstance(global_step, int) and not isinstance(global_step, bool):
        return {"runtime.resumed": global_step > 0}
    return {}


@dataclass
class AfterResume:
    """Remembers the step a resumed run started at; ``due(step)`` is True once, one step later."""

    start: int | None = None

    def arm(self, facts: dict[str, Any], global_step: Any) -> None:
        resumed = facts.get("runtime.resumed") and isinstance(global_step, int)
        self.start = global_step if resumed else None

    def due(self, global_step: Any) -> bool:
        if self.start is None or not isinstance(global_step, int) or global_step <= self.start:
            return False
        self.start = None
        return True
