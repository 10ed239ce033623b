"""The callbacks' shared logic (real inspect, real torch), and the callbacks themselves where
transformers / Lightning are importable (they are not in the CI venv: those tests skip)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from types import SimpleNamespace

import pytest

from preflight.api import PreflightError
from preflight.facts import Facts
from preflight.findings import Finding, Fix, Severity
from preflight.integrations.core import GateOptions, PreflightWarning, gate
from preflight.report import Report

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
HAS_LIGHTNING = (importlib.util.find_spec("lightning") is not None
                 or importlib.util.find_spec("pytorch_lightning") is not None)


def fake_inspector(severity: Severity | None):
    """A stand-in for preflight.inspect (our own API) returning one finding of ``severity``."""
    calls: list[dict] = []

    def inspector(model, optimizer, accelerator, expect_fp8, **kwargs) -> Report:
        calls.append({"model": model, "optimizer": optimizer, "expect_fp8": expect_fp8, **kwargs})
        findings = () if severity is None else (
            Finding("FP8D-RT-0001", severity, "No FP8 module", "The model has no FP8 module.",
                    Fix("Convert the model.")),)
        return Report(facts=Facts({"runtime.inspected": True}), findings=findings,
                      fail_on=kwargs.get("fail_on", "error"))

    inspector.calls = calls  # type: ignore[attr-defined]
    return inspector


def test_gate_raises_with_the_report() -> None:
    inspector = fake_inspector(Severity.ERROR)
    with pytest.raises(PreflightError) as info:
        gate("model", "opt", options=GateOptions(), inspector=inspector)
    assert info.value.report.findings[0].rule_id == "FP8D-RT-0001"
    assert "FP8D-RT-0001" in str(info.value) and "fix: Convert the model." in str(info.value)


def test_gate_warns_and_returns_the_report() -> None:
    with pytest.warns(PreflightWarning, match="FP8D-RT-0001"):
        report = gate("model", options=GateOptions(on_failure="warn"),
                      inspector=fake_inspector(Severity.ERROR))
    assert not report.ok()


def test_gate_threshold() -> None:
    inspector = fake_inspector(Severity.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gate("m", options=GateOptions(), inspector=inspector).findings
    with pytest.raises(PreflightError):
        gate("m", options=GateOptions(fail_on="warning"), inspector=inspector)
    assert inspector.calls[-1]["fail_on"] == "warning"


def test_gate_options_are_validated() -> None:
    with pytest.raises(ValueError, match="on_failure"):
        GateOptions(on_failure="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fail_on"):
        GateOptions(fail_on="fatal")


def test_hf_core_reads_model_optimizer_and_deepspeed_config() -> None:
    from preflight.integrations.hf import deepspeed_config_of, on_train_begin

    ds = {"zero_optimization": {"stage": 2}}
    args = SimpleNamespace(hf_deepspeed_config=SimpleNamespace(config=ds), deepspeed="ds.json")
    assert deepspeed_config_of(args) is ds
    assert deepspeed_config_of(SimpleNamespace(deepspeed="ds.json")) == "ds.json"
    inspector = fake_inspector(None)
    on_train_begin(GateOptions(), args, {"model": "M", "optimizer": "O"}, inspector=inspector)
    call = inspector.calls[0]
    assert (call["model"], call["optimizer"], call["ds_config"]) == ("M", "O", ds)


def test_gate_with_real_inspect_on_a_real_model() -> None:
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(16, 16)).to(torch.bfloat16)
    with pytest.raises(PreflightError, match="FP8D-RT-0001"):
        gate(model, torch.optim.AdamW(model.parameters()), options=GateOptions(expect_fp8=True))
    report = gate(model, options=GateOptions(expect_fp8=False, fail_on="error"))
    assert report.ok()


def test_modules_import_without_the_frameworks() -> None:
    for name in ("preflight.integrations.hf", "preflight.integrations.lightning"):
        sys.modules.pop(name, None)
        module = importlib.import_module(name)
        assert callable(module.__getattr__)
    assert "transformers" not in sys.modules or HAS_TRANSFORMERS


@pytest.mark.skipif(HAS_TRANSFORMERS, reason="transformers is installed here")
def test_hf_callback_needs_transformers() -> None:
    import preflight.integrations.hf as hf

    with pytest.raises(ImportError, match="needs transformers"):
        hf.FP8DoctorCallback  # noqa: B018


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers is not installed (not in the CI "
                                                  "venv); its callback runs on the GPU machine")
def test_hf_callback_is_a_real_trainer_callback() -> None:
    from transformers import TrainerCallback

    from preflight.integrations.hf import FP8DoctorCallback

    cb = FP8DoctorCallback(on_failure="warn", expect_fp8=True)
    assert isinstance(cb, TrainerCallback)
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(16, 16)
    with pytest.warns(PreflightWarning):
        cb.on_train_begin(SimpleNamespace(), None, "control", model=model)
    assert cb.report is not None


@pytest.mark.skipif(not HAS_LIGHTNING, reason="lightning is not installed (not in the CI venv); "
                                               "its callback runs on the GPU machine")
def test_lightning_callback_is_a_real_callback() -> None:
    from preflight.integrations.lightning import FP8DoctorCallback

    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback
    assert isinstance(FP8DoctorCallback(), Callback)


def test_lightning_core_uses_strategy_engine_and_precision() -> None:
    from preflight.integrations.lightning import on_train_start

    inspector = fake_inspector(None)
    trainer = SimpleNamespace(precision="transformer-engine", optimizers=["OPT"],
                              strategy=SimpleNamespace(deepspeed_engine="ENG",
                                                       config={"zero_optimization": {}}))
    on_train_start(GateOptions(), trainer, "MODULE", inspector=inspector)
    call = inspector.calls[0]
    assert (call["model"], call["optimizer"], call["engine"]) == ("MODULE", "OPT", "ENG")
    assert call["extra_facts"]["runtime.lightning.precision"] == "transformer-engine"
    assert call["expect_fp8"] is True   # the run's own precision asks for FP8


# --- issue 12: expect_fp8 follows the run; messages in the callback's own terms ---------------

def _hf(options: GateOptions, args: object, env: dict[str, str], accelerator: object = None):
    from preflight.integrations.hf import expectation

    return expectation(options, args, accelerator, env=env)


@pytest.mark.parametrize("args, env, accelerator, fp8, source", [
    (SimpleNamespace(bf16=True), {"ACCELERATE_MIXED_PRECISION": "bf16"}, None, False,
     "TrainingArguments(bf16=True)"),
    (SimpleNamespace(bf16=False, fp16=False), {"ACCELERATE_MIXED_PRECISION": "fp8"}, None, True,
     "ACCELERATE_MIXED_PRECISION=fp8"),
    (SimpleNamespace(), {}, SimpleNamespace(mixed_precision="fp8"), True,
     "Accelerator(mixed_precision='fp8')"),
    (SimpleNamespace(), {}, None, False, "FP32"),
])
def test_hf_expectation_follows_the_runs_precision(args, env, accelerator, fp8, source) -> None:
    got = _hf(GateOptions(), args, env, accelerator)
    assert got.fp8 is fp8 and source in got.source
    assert "accelerator.prepare" not in got.inspect_point


class _Backend:
    """The shape of accelerate's FP8BackendType (1.9.0 on): a str enum with a .value."""

    def __init__(self, value: str) -> None:
        self.value = value


class _RaisingBackend:
    """An Accelerator whose fp8_backend property raises (1.9+ with ACCELERATE_FP8_BACKEND=te)."""

    mixed_precision = "fp8"
    distributed_type = _Backend("MULTI_GPU")

    @property
    def fp8_backend(self) -> str:
        raise ValueError("'te' is not a valid FP8BackendType")


_DS = _Backend("DEEPSPEED")


@pytest.mark.parametrize("args, env, accelerator, fp8, source", [
    # accelerate<1.11 under DeepSpeed: mixed_precision reads the DeepSpeed config ("bf16") though
    # fp8 was launched; the launch setting decides (FP8D-RT-0007's case, not an all-clear)
    (SimpleNamespace(bf16=False, fp16=False), {"ACCELERATE_MIXED_PRECISION": "fp8"},
     SimpleNamespace(mixed_precision="bf16", distributed_type=_DS, fp8_backend=None), True,
     "ACCELERATE_MIXED_PRECISION=fp8"),
    (SimpleNamespace(), {"ACCELERATE_MIXED_PRECISION": "fp8"},
     SimpleNamespace(mixed_precision="bf16", distributed_type=_DS, fp8_backend=_Backend("NO")),
     True, "ACCELERATE_MIXED_PRECISION=fp8"),
    (SimpleNamespace(), {"ACCELERATE_MIXED_PRECISION": "bf16"},
     SimpleNamespace(mixed_precision="bf16", distributed_type=_DS, fp8_backend=None), False,
     "ACCELERATE_MIXED_PRECISION=bf16"),
    # outside DeepSpeed the Accelerator's own precision stands
    (SimpleNamespace(), {"ACCELERATE_MIXED_PRECISION": "fp8"},
     SimpleNamespace(mixed_precision="bf16", distributed_type=_Backend("MULTI_GPU"),
                     fp8_backend=None), False, "Accelerator(mixed_precision='bf16')"),
    # prepare() converts by fp8_backend (1.9+ falls back to ACCELERATE_FP8_BACKEND), whatever
    # mixed_precision and the Trainer's bf16 say
    (SimpleNamespace(bf16=True), {"ACCELERATE_MIXED_PRECISION": "bf16"},
     SimpleNamespace(mixed_precision="bf16", distributed_type=_DS, fp8_backend=_Backend("TE")),
     True, "Accelerator.fp8_backend=TE"),
    (SimpleNamespace(), {}, SimpleNamespace(mixed_precision="bf16", fp8_backend="MSAMP"), True,
     "Accelerator.fp8_backend=MSAMP"),
    (SimpleNamespace(), {}, _RaisingBackend(), True, "Accelerator(mixed_precision='fp8')"),
])
def test_hf_expectation_does_not_trust_deepspeeds_mixed_precision(args, env, accelerator, fp8,
                                                                   source) -> None:
    got = _hf(GateOptions(), args, env, accelerator)
    assert got.fp8 is fp8 and source in got.source


@pytest.mark.parametrize("env, started", [
    ({"ACCELERATE_MIXED_PRECISION": "fp8"}, {}),
    # transformers 4.x TrainingArguments rewrote the variable; the start-up environment has it
    ({"ACCELERATE_MIXED_PRECISION": "bf16"}, {"ACCELERATE_MIXED_PRECISION": "fp8"}),
])
def test_bf16_over_the_launchers_fp8_is_expected_fp8_replaced(env, started) -> None:
    # issue 22 / newcomer review row 1: this was "FP8 not expected", an all-clear
    from preflight.integrations.hf import expectation

    accelerator = SimpleNamespace(mixed_precision="bf16", fp8_backend=None,
                                  distributed_type=_Backend("MULTI_GPU"))
    got = expectation(GateOptions(), SimpleNamespace(bf16=True), accelerator, env=env,
                      started=started)
    assert got.fp8 is True and got.replaced_by == "TrainingArguments(bf16=True)"
    assert got.facts()["runtime.fp8_replaced_by"] == "TrainingArguments(bf16=True)"
    assert "ACCELERATE_MIXED_PRECISION=fp8" in got.source


def test_the_start_up_environment_is_read_bounded(tmp_path) -> None:
    from preflight.integrations.hf import started_with

    environ = tmp_path / "environ"
    environ.write_bytes(b"A=1\0ACCELERATE_MIXED_PRECISION=fp8\0B=2\0")
    assert started_with(str(environ)) == {"ACCELERATE_MIXED_PRECISION": "fp8"}
    assert started_with(str(tmp_path / "absent")) == {}


def test_warn_mode_says_the_report_is_on_the_callback() -> None:
    from preflight.integrations.core import warning_text

    text = warning_text("fp8-doctor: 1 finding\nThe full report is on this exception: err.report")
    assert "this exception" not in text and "callback.report" in text


def test_an_explicit_expect_fp8_is_quoted_back_in_the_callbacks_terms() -> None:
    got = _hf(GateOptions(expect_fp8=True), SimpleNamespace(bf16=True), {})
    assert got.fp8 is True and got.source == "FP8DoctorCallback(expect_fp8=True)"
    assert "FP8DoctorCallback(expect_fp8=False)" in got.turn_off


@pytest.mark.parametrize("precision, fp8", [("transformer-engine", True),
                                            ("transformer-engine-float16", True),
                                            ("bf16-mixed", False), ("32-true", False)])
def test_lightning_expectation_follows_the_trainers_precision(precision: str, fp8: bool) -> None:
    from preflight.integrations.lightning import expectation

    got = expectation(GateOptions(), SimpleNamespace(precision=precision))
    assert got.fp8 is fp8 and precision in got.source
    assert "accelerator.prepare" not in got.inspect_point + got.turn_off


def test_a_bf16_run_with_the_default_callback_raises_nothing() -> None:
    torch = pytest.importorskip("torch")
    from preflight.integrations.lightning import on_train_start

    model = torch.nn.Sequential(torch.nn.Linear(16, 16)).to(torch.bfloat16)
    trainer = SimpleNamespace(precision="bf16-mixed", optimizers=[], strategy=None)
    report = on_train_start(GateOptions(), trainer, model)
    assert report.ok() and report.facts["runtime.expect_fp8"] is False


def test_lightning_messages_speak_lightning_not_accelerate_or_inspect() -> None:
    torch = pytest.importorskip("torch")
    from preflight.integrations.lightning import on_train_start

    model = torch.nn.Sequential(torch.nn.Linear(16, 16))        # FP32
    trainer = SimpleNamespace(precision="32-true", optimizers=[], strategy=None)
    with pytest.raises(PreflightError) as err:
        on_train_start(GateOptions(expect_fp8=True), trainer, model)
    finding = next(f for f in err.value.findings if f.rule_id == "FP8D-RT-0001")
    text = finding.message + finding.fix.text + finding.title
    assert "FP8DoctorCallback(expect_fp8=True)" in text
    assert "FP8DoctorCallback(expect_fp8=False)" in text
    assert "accelerator.prepare" not in text and "inspect(..., expect_fp8" not in text
    assert "BF16" not in text and "float32" in text


def test_hf_fp8_env_on_a_cpu_is_not_a_silent_all_clear() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchao")
    from preflight.integrations.core import gate as real_gate
    from preflight.integrations.hf import expectation

    model = torch.nn.Sequential(torch.nn.Linear(16, 16))
    expect = expectation(GateOptions(), SimpleNamespace(bf16=False, fp16=False), None,
                         env={"ACCELERATE_MIXED_PRECISION": "fp8"})
    report = real_gate(model, options=GateOptions(on_failure="warn", fail_on="never"),
                       expectation=expect)
    ids = {f.rule_id for f in report.findings}
    assert "FP8D-ENV-FP8-ON-CPU" in ids and report.summary()["error"] >= 1
    # The environment the report shows is this process's: torchao is installed here.
    assert isinstance(report.facts.get("pkg.torchao.version"), str)
