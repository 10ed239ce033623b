"""A Lightning ``Callback`` that runs ``preflight.inspect`` when training starts.

    from preflight.integrations.lightning import FP8DoctorCallback
    trainer = L.Trainer(..., callbacks=[FP8DoctorCallback(on_failure="warn")])

Built on first access against ``lightning.pytorch`` (else the older ``pytorch_lightning``), so
importing this module never imports Lightning. ``on_train_start`` runs after the strategy has set
up the optimizers and, under the DeepSpeed strategy, the engine.
"""

from __future__ import annotations

from typing import Any

from preflight.integrations.core import Expectation, GateOptions, Inspector, explicit, gate
from preflight.integrations.resume import AfterResume, resumed_facts

__all__ = ["FP8DoctorCallback", "on_train_start"]  # noqa: F822 - made by __getattr__ below


def lightning_facts(trainer: Any) -> dict[str, Any]:
    """Facts only Lightning knows: its precision setting (``transformer-engine``, ...)."""
    precision = getattr(trainer, "precision", None)
    return {"runtime.lightning.precision": str(precision)} if precision is not None else {}


_POINT = "the LightningModule at FP8DoctorCallback.on_train_start (after the strategy's setup)"


def expectation(options: GateOptions, trainer: Any) -> Expectation:
    """FP8 or not, as the run says: Lightning's precision ``transformer-engine`` (or
    ``transformer-engine-float16``) is its FP8 setting; anything else is not FP8."""
    if options.expect_fp8 is not None:
        return explicit(options.expect_fp8, "FP8DoctorCallback", _POINT)
    precision = getattr(trainer, "precision", None)
    fp8 = isinstance(precision, str) and precision.startswith("transformer-engine")
    return Expectation(fp8, f"Trainer(precision={precision!r})",
                       "if FP8 was meant, set Trainer(precision='transformer-engine'); otherwise "
                       "nothing to do (or pass FP8DoctorCallback(expect_fp8=False))", _POINT)


def on_train_start(options: GateOptions, trainer: Any, pl_module: Any, *,
                   inspector: Inspector | None = None) -> Any:
    """What the callback does, without Lightning: returns the Report (or raises)."""
    strategy = getattr(trainer, "strategy", None)
    engine = getattr(strategy, "deepspeed_engine", None) if strategy is not None else None
    optimizers = list(getattr(trainer, "optimizers", None) or [])
    return gate(pl_module, optimizers[0] if optimizers else None, None, options=options,
                engine=engine, ds_config=getattr(strategy, "config", None),
                extra_facts={**lightning_facts(trainer), **resumed_facts(
                    getattr(trainer, "global_step", None), getattr(trainer, "ckpt_path", None))},
                inspector=inspector, expectation=expectation(options, trainer))


def _build() -> type:
    # The base is typed Any, so mypy's answer is the same whether lightning, pytorch_lightning,
    # both or neither are installed (no ignore that is used in one case and unused in another).
    base: Any
    try:
        from lightning.pytorch import Callback
        base = Callback
    except ImportError:
        try:
            from pytorch_lightning import Callback as LegacyCallback
            base = LegacyCallback
        except ImportError as exc:  # pragma: no cover - exercised where Lightning is absent
            raise ImportError("preflight.integrations.lightning.FP8DoctorCallback needs "
                              f"lightning or pytorch_lightning ({exc})") from exc

    class FP8DoctorCallback(base):
        """Inspect the LightningModule and its optimizer at train start; fail fast or warn."""

        def __init__(self, on_failure: str = "raise", fail_on: str = "error",
                     expect_fp8: bool | None = None, **inspect_kwargs: Any) -> None:
            super().__init__()
            self.options = GateOptions(on_failure, fail_on, expect_fp8,  # type: ignore[arg-type]
                                       inspect_kwargs)
            self.report: Any = None
            self.after_resume = AfterResume()

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            step = getattr(trainer, "global_step", None)
            self.after_resume.arm(resumed_facts(step, getattr(trainer, "ckpt_path", None)), step)
            self.report = on_train_start(self.options, trainer, pl_module)

        def on_train_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            # Once, after the first optimizer step of a resumed run (FP8D-CKPT-0009).
            if self.after_resume.due(getattr(trainer, "global_step", None)):
                self.report = on_train_start(self.options, trainer, pl_module)

    return FP8DoctorCallback


def __getattr__(name: str) -> Any:
    if name == "FP8DoctorCallback":
        cls = _build()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
