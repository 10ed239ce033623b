"""A transformers ``TrainerCallback`` that runs ``preflight.inspect`` at train start.

    from preflight.integrations.hf import FP8DoctorCallback
    trainer = Trainer(...)
    FP8DoctorCallback.attach(trainer)   # = trainer.add_callback(FP8DoctorCallback(
                                        #       accelerator=trainer.accelerator))

The Trainer does not hand callbacks its Accelerator, which tells the FP8 backend prepare()
converts by; ``attach`` (or ``accelerator=trainer.accelerator``) gives it. Without it the
callback goes by TrainingArguments and the launcher's environment.

The class is created on first access (module ``__getattr__``), so importing this module without
transformers installed works; touching ``FP8DoctorCallback`` then raises a clear ImportError.

The Trainer hands callbacks the model and its optimizer, not the DeepSpeed engine; under
DeepSpeed the optimizer is DeepSpeed's ZeRO wrapper, which tells the effective stage, and the
configured stage comes from ``args.hf_deepspeed_config`` / ``args.deepspeed``.
"""

from __future__ import annotations

import os
from typing import Any

from preflight.integrations.core import Expectation, GateOptions, Inspector, explicit, gate
from preflight.integrations.resume import AfterResume, resumed_facts

__all__ = ["FP8DoctorCallback", "on_train_begin"]  # noqa: F822 - made by __getattr__ below


def deepspeed_config_of(args: Any) -> Any:
    """The DeepSpeed config a TrainingArguments carries: the parsed dict, else the path / dict."""
    hf_cfg = getattr(args, "hf_deepspeed_config", None)
    config = getattr(hf_cfg, "config", None)
    return config if config is not None else getattr(args, "deepspeed", None)


_POINT = "the model the Trainer handed FP8DoctorCallback.on_train_begin"


def _fp8_backend(accelerator: Any) -> str | None:
    """The FP8 backend accelerate's prepare() converts by (TE / AO / MSAMP), or None.
    The property raises on some versions (a lower-case ACCELERATE_FP8_BACKEND from 1.9.0)."""
    try:
        backend = getattr(accelerator, "fp8_backend", None)
    except Exception:  # noqa: BLE001 - a broken setting is the rules' business, not ours
        return None
    raw = str(getattr(backend, "value", backend))
    return raw if raw in ("TE", "AO", "MSAMP") else None


def _is_deepspeed(accelerator: Any) -> bool:
    dist = getattr(accelerator, "distributed_type", None)
    return str(getattr(dist, "value", dist)) == "DEEPSPEED"


_ENV = "ACCELERATE_MIXED_PRECISION"
_MAX_ENVIRON = 1 << 20


def started_with(path: str = "/proc/self/environ") -> dict[str, str]:
    """The environment this process was started with (Linux), whatever was changed in
    ``os.environ`` since: transformers 4.x TrainingArguments overwrote ACCELERATE_MIXED_PRECISION
    with its own bf16 / fp16, so at train start only the start-up environment still shows the
    launcher's fp8. Empty where it cannot be read."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_ENVIRON)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, eq, value = item.partition(b"=")
        if eq and key == _ENV.encode():
            out[_ENV] = value.decode("utf-8", "replace")
    return out


def expectation(options: GateOptions, args: Any, accelerator: Any = None,
                env: Any = None, started: Any = None) -> Expectation:
    """FP8 or not, as the run itself says: an FP8 backend the Accelerator converts by; else the
    launcher's fp8 that ``TrainingArguments(bf16=True)`` / ``fp16=True`` replaces (FP8 was asked
    for and is lost: issue 22, FP8D-RT-0020); else the Accelerator's mixed_precision when one is
    given, else the Trainer's own rule (bf16 / fp16 in TrainingArguments win; otherwise
    accelerate reads ACCELERATE_MIXED_PRECISION). ``started``: the environment the process
    started with (:func:`started_with` when ``env`` is not given).

    prepare() converts by Accelerator.fp8_backend, not by mixed_precision (accelerate 1.4.0 on),
    and under DeepSpeed mixed_precision reads the DeepSpeed config: "bf16" even when fp8 was asked
    for, before 1.11.0 (PR 3688, https://github.com/huggingface/accelerate/pull/3688). Trusting
    it there would expect no FP8 in exactly the runs that silently lose it (FP8D-RT-0007)."""
    if options.expect_fp8 is not None:
        return explicit(options.expect_fp8, "FP8DoctorCallback", _POINT)
    if started is None:
        started = started_with() if env is None else {}
    env = os.environ if env is None else env
    off = ("if FP8 was meant, fix that setting; otherwise nothing to do (or pass "
           "FP8DoctorCallback(expect_fp8=False))")
    backend = _fp8_backend(accelerator)
    if backend is not None:
        return Expectation(True, f"Accelerator.fp8_backend={backend}", off, _POINT)
    # TrainingArguments checks fp16 first, then bf16 (training_args.py mixed precision)
    flag = next((f for f in ("fp16", "bf16") if getattr(args, f, False) is True), None)
    if flag is not None and "fp8" in (env.get(_ENV), started.get(_ENV)):
        return Expectation(
            True, f"{_ENV}=fp8 (what `accelerate launch --mixed_precision fp8` or an fp8 "
                  "accelerate config sets)",
            f"if {flag.upper()} was meant, launch without fp8 (or pass "
            "FP8DoctorCallback(expect_fp8=False))", _POINT,
            replaced_by=f"TrainingArguments({flag}=True)")
    mixed = getattr(accelerator, "mixed_precision", None)
    if isinstance(mixed, str) and (mixed == "fp8" or not _is_deepspeed(accelerator)):
        return Expectation(mixed == "fp8", f"Accelerator(mixed_precision={mixed!r})", off,
                           _POINT)
    for flag in ("bf16", "fp16"):
        if getattr(args, flag, False) is True:
            return Expectation(False, f"TrainingArguments({flag}=True)", off, _POINT)
    value = env.get("ACCELERATE_MIXED_PRECISION")
    if value:
        return Expectation(value == "fp8", f"ACCELERATE_MIXED_PRECISION={value}", off, _POINT)
    return Expectation(False, "TrainingArguments without bf16, fp16 or an FP8 accelerate "
                       "setting (FP32)", off, _POINT)


def on_train_begin(options: GateOptions, args: Any, kwargs: dict[str, Any],
                   accelerator: Any = None, *, inspector: Inspector | None = None,
                   state: Any = None) -> Any:
    """What the callback does, without transformers: returns the Report (or raises).
    ``state`` (the TrainerState) tells whether the run resumed: its global_step is restored from
    the checkpoint before on_train_begin."""
    return gate(kwargs.get("model"), kwargs.get("optimizer"), accelerator, options=options,
                ds_config=deepspeed_config_of(args), inspector=inspector,
                expectation=expectation(options, args, accelerator),
                extra_facts=resumed_facts(getattr(state, "global_step", None)))


def _build() -> type:
    # The base is typed Any, so mypy's answer is the same with and without transformers
    # installed (no ignore that is used in one case and unused in the other).
    base: Any
    try:
        from transformers import TrainerCallback
        base = TrainerCallback
    except ImportError as exc:  # pragma: no cover - exercised where transformers is absent
        raise ImportError("preflight.integrations.hf.FP8DoctorCallback needs transformers "
                          f"({exc})") from exc

    class FP8DoctorCallback(base):
        """Inspect the model and optimizer when training begins; fail fast or warn."""

        def __init__(self, on_failure: str = "raise", fail_on: str = "error",
                     expect_fp8: bool | None = None, accelerator: Any = None,
                     **inspect_kwargs: Any) -> None:
            self.options = GateOptions(on_failure, fail_on, expect_fp8,  # type: ignore[arg-type]
                                       inspect_kwargs)
            self.accelerator = accelerator
            self.report: Any = None
            self.after_resume = AfterResume()

        @classmethod
        def attach(cls, trainer: Any, **kwargs: Any) -> Any:
            """Add a callback that knows ``trainer.accelerator`` to ``trainer``; returns it."""
            callback = cls(accelerator=getattr(trainer, "accelerator", None), **kwargs)
            trainer.add_callback(callback)
            return callback

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            step = getattr(state, "global_step", None)
            self.after_resume.arm(resumed_facts(step), step)
            self.report = on_train_begin(self.options, args, kwargs, self.accelerator, state=state)
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            # Once, after the first step of a resumed run: a lost FP8 state shows now (CKPT-0009).
            if self.after_resume.due(getattr(state, "global_step", None)):
                self.report = on_train_begin(self.options, args, kwargs, self.accelerator,
                                             state=state)
            return control

    return FP8DoctorCallback


def __getattr__(name: str) -> Any:
    if name == "FP8DoctorCallback":
        cls = _build()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
