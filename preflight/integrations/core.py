"""The logic every training-framework callback shares: inspect, then fail fast or warn.

Kept free of transformers / Lightning so it is tested for real without them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from preflight.report import Report

OnFailure = Literal["raise", "warn"]


class PreflightWarning(UserWarning):
    """Emitted instead of raising when a callback runs with ``on_failure="warn"``."""


@dataclass(frozen=True)
class GateOptions:
    """What a callback does with the inspection report."""

    on_failure: OnFailure = "raise"
    """``raise``: raise PreflightError before the first step; ``warn``: warn and train on."""
    fail_on: str = "error"
    """Lowest severity that counts as a failure (error | warning | info | never)."""
    expect_fp8: bool | None = None
    """The run is meant to train in FP8 (False: only precision / optimizer / ZeRO checks).
    None (the default): follow the run's own precision setting (issue 12: a callback added to a
    BF16 run raised "no FP8 module")."""
    inspect_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Extra keyword arguments for ``preflight.inspect`` (``backend``, ``rules_paths``, ...)."""

    def __post_init__(self) -> None:
        from preflight.findings import FailOn

        if self.on_failure not in ("raise", "warn"):
            raise ValueError(f"on_failure must be 'raise' or 'warn', not {self.on_failure!r}")
        FailOn.parse(self.fail_on)   # a UserInputError (a ValueError) naming the choices
        if self.expect_fp8 not in (True, False, None):
            raise ValueError(f"expect_fp8 must be True, False or None, not {self.expect_fp8!r}")


@dataclass(frozen=True)
class Expectation:
    """Whether the run is meant to be FP8, and the words the report uses for it (the callback's
    own terms: issue 12 told Lightning users about accelerator.prepare())."""

    fp8: bool
    source: str          # what said so: "Trainer(precision='bf16-mixed')", ...
    turn_off: str        # how the user tells the check otherwise
    inspect_point: str   # what was inspected
    replaced_by: str | None = None
    """A setting of the run that replaces the FP8 asked for, in the callback's terms
    (``TrainingArguments(bf16=True)`` over the launcher's fp8: issue 22, FP8D-RT-0020)."""

    def facts(self) -> dict[str, Any]:
        out = {"runtime.expect_fp8_from": self.source, "runtime.expect_fp8_off": self.turn_off,
               "runtime.inspect_point": self.inspect_point}
        if self.replaced_by is not None:
            out["runtime.fp8_replaced_by"] = self.replaced_by
        return out


def explicit(expect_fp8: bool, callback: str, inspect_point: str) -> Expectation:
    """The user passed ``expect_fp8`` to the callback: quote that argument back."""
    return Expectation(expect_fp8, f"{callback}(expect_fp8={expect_fp8})",
                       f"pass {callback}(expect_fp8=False), or leave expect_fp8 out to follow "
                       "the run's precision setting", inspect_point)


Inspector = Callable[..., Report]


def gate(model: Any, optimizer: Any = None, accelerator: Any = None, *,
         options: GateOptions = GateOptions(), engine: Any = None, ds_config: Any = None,
         extra_facts: Mapping[str, Any] | None = None,
         inspector: Inspector | None = None, expectation: Expectation | None = None) -> Report:
    """Inspect the live objects; raise :class:`~preflight.PreflightError` or warn on failure.

    ``extra_facts`` are ``runtime.*`` facts only a framework knows (e.g. Lightning's precision
    plugin); ``inspector`` replaces ``preflight.inspect`` (tests pass a fake of our own API).
    """
    from preflight.api import PreflightError

    if inspector is None:
        from preflight.live import inspect as live_inspect

        inspector = live_inspect
    expect = expectation.fp8 if expectation is not None else bool(options.expect_fp8)
    facts = {**(expectation.facts() if expectation is not None else {}), **(extra_facts or {})}
    report = inspector(model, optimizer, accelerator, expect, engine=engine,
                       ds_config=ds_config, fail_on=options.fail_on,
                       extra_facts=facts, **dict(options.inspect_kwargs))
    if report.ok(options.fail_on):
        return report
    error = PreflightError(report, options.fail_on)
    if options.on_failure == "raise":
        raise error
    warnings.warn(warning_text(str(error)), PreflightWarning, stacklevel=3)
    return report


def warning_text(error_text: str) -> str:
    """The exception's text for a warning: nothing was raised, so the report is on the
    callback (``callback.report``), not on "this exception" (issue 24 item 7)."""
    lines = error_text.splitlines()
    if lines and lines[-1].startswith("The full report is on this exception"):
        lines[-1] = ("Nothing was raised (on_failure='warn'); the full report is on the "
                     "callback: callback.report.render('text') (or 'json' / 'markdown').")
    return "\n".join(lines)
