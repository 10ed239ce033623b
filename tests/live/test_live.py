"""preflight.inspect on CPU with real torch and real torchao (emulated FP8) models.

Covered for real here: FP8 module detection (torchao Float8Linear), unconverted Linear layers and
their reasons, parameter and optimizer-state dtypes, FSDP2 on a one-process gloo group, DeepSpeed
config parsing, the runtime rules through the engine, PreflightError's message. DeepSpeed engines
and Accelerate run on the GPU machine (benchmarks/gpu_inspect.py); Transformer Engine cannot be
installed on CPU, so its detection is checked with a class that carries TE's module path.
"""

from __future__ import annotations

import json
import sys

import pytest

torch = pytest.importorskip("torch")
float8 = pytest.importorskip("torchao.float8")

from preflight.facts import Unknown  # noqa: E402
from preflight.live import (  # noqa: E402
    DIMS,
    FILTERED,
    FIRST_LAST,
    SIBLING,
    model_facts,
    optimizer_facts,
    runtime_facts,
)
from preflight.live.deepspeed import _effective_stage, _stage_of  # noqa: E402

nn = torch.nn


class Block(nn.Module):
    """A tiny MoE-ish block: an input projection, an 8-way router (not a multiple of 16),
    two experts and an output head."""

    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.inp = nn.Linear(32, 64)
        self.router = nn.Linear(64, 8)
        self.e1 = nn.Linear(64, 64)
        self.e2 = nn.Linear(64, 64)
        self.head = nn.Linear(64, 32)
        self.to(dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        gate = self.router(h).softmax(-1)[..., :1]
        return self.head(gate * self.e1(h) + (1 - gate) * self.e2(h))


def accelerate_like_filter(module: nn.Module, fqn: str) -> bool:
    """What accelerate's AORecipeKwargs default does: skip first/last and unaligned Linear."""
    return (module.in_features % 16 == 0 and module.out_features % 16 == 0
            and fqn not in ("inp", "head"))


def emulate() -> object:
    return float8.Float8LinearConfig(emulate=True)


def test_plain_model_has_no_fp8_modules() -> None:
    facts = model_facts(Block())
    assert facts["runtime.fp8.converted"] == 0
    assert facts["runtime.fp8.module_types"] == []
    assert facts["runtime.fp8.unconverted_count"] == 5
    assert facts["runtime.params.dtypes"] == ["float32"]
    assert facts["runtime.params.low_precision"] is False
    # Nothing was converted: no guess about first/last or filters; the unaligned router is still
    # named (it would stay in high precision once conversion works).
    reasons = {u["name"]: u["reason"] for u in facts["runtime.fp8.unconverted"]}
    assert reasons == {"inp": "model_not_converted", "router": DIMS, "e1": "model_not_converted",
                       "e2": "model_not_converted", "head": "model_not_converted"}


@pytest.mark.parametrize("thing", [None, "model.pt", object()])
def test_inspect_of_something_that_is_not_a_model_is_a_clear_type_error(thing: object) -> None:
    from preflight import inspect

    with pytest.raises(TypeError, match="needs a torch.nn.Module"):
        inspect(thing)


def test_fully_converted_model() -> None:
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 32))
    float8.convert_to_float8_training(model, config=emulate())
    facts = model_facts(model)
    assert facts["runtime.fp8.converted"] == 2
    assert facts["runtime.fp8.module_types"] == ["torchao.float8.float8_linear.Float8Linear"]
    assert facts["runtime.fp8.backends"] == ["torchao"]
    assert facts["runtime.fp8.unconverted"] == []
    # the converted model really runs (emulated FP8 on CPU): inspection looked at a live model
    model(torch.randn(4, 32)).sum().backward()


def test_partly_converted_model_gives_each_reason() -> None:
    model = Block()
    float8.convert_to_float8_training(model, config=emulate(),
                                      module_filter_fn=accelerate_like_filter)
    facts = model_facts(model)
    assert facts["runtime.fp8.converted"] == 2
    by_name = {u["name"]: u for u in facts["runtime.fp8.unconverted"]}
    assert by_name == {
        "inp": {"name": "inp", "in": 32, "out": 64, "reason": FIRST_LAST},
        "router": {"name": "router", "in": 64, "out": 8, "reason": DIMS},
        "head": {"name": "head", "in": 64, "out": 32, "reason": FIRST_LAST},
    }
    assert facts["runtime.fp8.unconverted_reasons"] == [DIMS, FIRST_LAST]


def test_filtered_layer_in_the_middle() -> None:
    model = Block()
    float8.convert_to_float8_training(model, config=emulate(),
                                      module_filter_fn=lambda m, fqn: fqn == "e1")
    reasons = {u["name"]: u["reason"] for u in model_facts(model)["runtime.fp8.unconverted"]}
    assert reasons["e2"] == FILTERED


def test_te_conversion_stops_after_an_unaligned_sibling() -> None:
    """accelerate's TE convert_model returns at the router: later experts stay nn.Linear."""

    class Linear(nn.Module):  # stands in for transformer_engine.pytorch.Linear (no TE on CPU)
        __module__ = "transformer_engine.pytorch.module.linear"

        def __init__(self, i: int, o: int) -> None:
            super().__init__()
            self.in_features, self.out_features = i, o

    model = Block()
    model.inp = Linear(32, 64)
    facts = model_facts(model)
    assert facts["runtime.fp8.backends"] == ["te"]
    reasons = {u["name"]: u["reason"] for u in facts["runtime.fp8.unconverted"]}
    assert reasons == {"router": DIMS, "e1": SIBLING, "e2": SIBLING, "head": SIBLING}


def test_unconverted_list_is_capped_but_counted() -> None:
    model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(10)])
    facts = model_facts(model, max_listed=3)
    assert len(facts["runtime.fp8.unconverted"]) == 3
    assert facts["runtime.fp8.unconverted_count"] == 10


def test_optimizer_state_unknown_before_first_step_then_fp32() -> None:
    model = Block()
    opt = torch.optim.AdamW(model.parameters())
    before = optimizer_facts(opt)
    assert isinstance(before["runtime.optimizer.state_dtypes"], Unknown)
    assert before["runtime.optimizer.master_fp32"] is True
    model(torch.randn(4, 32)).sum().backward()
    opt.step()
    after = optimizer_facts(opt)
    assert after["runtime.optimizer.state_dtypes"] == ["float32"]
    assert after["runtime.optimizer.state_fp32"] is True
    assert after["runtime.optimizer.class"] == "torch.optim.adamw.AdamW"


def test_bf16_params_without_master_copy() -> None:
    model = Block(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 32, dtype=torch.bfloat16)).sum().backward()
    opt.step()
    facts = runtime_facts(model, opt)
    assert facts["runtime.params.low_precision"] is True
    assert facts["runtime.optimizer.master_fp32"] is False
    assert facts["runtime.optimizer.state_dtypes"] == ["bfloat16"]
    assert all(facts.source(n) == "inspect" for n in facts)


def test_every_runtime_fact_is_registered() -> None:
    from preflight.registry import registry

    model = Block(torch.bfloat16)
    facts = runtime_facts(model, torch.optim.SGD(model.parameters(), lr=0.1))
    unregistered = [n for n in facts if registry().lookup(n) is None]
    assert not unregistered


def test_fsdp2_policy_and_low_precision_state(tmp_path) -> None:
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this torch build")
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    # A file store, not a TCP port: several test runs may share this machine.
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0,
                            world_size=1)
    try:
        model = nn.Sequential(nn.Linear(16, 32), nn.Linear(32, 16)).to(torch.bfloat16)
        fully_shard(model, mesh=init_device_mesh("cpu", (1,)),
                    mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                   reduce_dtype=torch.float32))
        opt = torch.optim.AdamW(model.parameters())
        model(torch.randn(4, 16, dtype=torch.bfloat16)).sum().backward()
        opt.step()
        facts = runtime_facts(model, opt, expect_fp8=False)
    finally:
        dist.destroy_process_group()
    assert facts["runtime.fsdp.version"] == 2
    assert facts["runtime.fsdp.param_dtype"] == "bfloat16"
    assert facts["runtime.fsdp.reduce_dtype"] == "float32"
    assert facts["runtime.optimizer.state_fp32"] is False


@pytest.mark.parametrize("cfg,stage", [({"zero_optimization": {"stage": 3}}, 3),
                                       ({"zero_optimization": {}}, 0), ({"bf16": {}}, 0),
                                       ({"zero_optimization": {"stage": "auto"}}, None),
                                       (None, None)])
def test_configured_zero_stage_from_dict(cfg, stage) -> None:
    assert _stage_of(cfg) == stage


def test_configured_zero_stage_from_json_file(tmp_path) -> None:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"zero_optimization": {"stage": 2}}))
    assert _stage_of(str(path)) == 2
    assert _stage_of(str(tmp_path / "missing.json")) is None


def test_effective_stage_of_a_plain_torch_optimizer() -> None:
    """A bare torch optimizer means stage 0 (DeepSpeed's wrappers: GPU machine and report)."""
    model = Block()
    assert _effective_stage(model, torch.optim.SGD(model.parameters(), lr=0.1)) == 0
    assert isinstance(_effective_stage(model, object()), Unknown)


def test_inspect_does_not_import_torch_at_module_import() -> None:
    import subprocess

    code = "import preflight.live, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- end to end through the rule engine ------------------------------------------------------

def test_inspect_flags_a_bf16_run_that_expected_fp8() -> None:
    import preflight

    model = Block(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())
    report = preflight.inspect(model, opt)
    ids = {f.rule_id for f in report.findings}
    assert "FP8D-RT-0001" in ids and "FP8D-RT-0006" in ids
    assert not report.ok()
    assert report.facts["runtime.inspected"] is True


def test_inspect_partly_converted_fp32_model() -> None:
    import preflight

    model = Block()
    float8.convert_to_float8_training(model, config=emulate(),
                                      module_filter_fn=accelerate_like_filter)
    opt = torch.optim.AdamW(model.parameters())
    report = preflight.inspect(model, opt)
    ids = {f.rule_id for f in report.findings}
    # On this CPU the emulated FP8 model also gets the "FP8 on the CPU" warning (issue 12).
    assert ids == {"FP8D-RT-0002", "FP8D-RT-0003", "FP8D-ENV-FP8-ON-CPU"}
    assert report.ok()  # warnings and info only
    assert not report.ok("warning")
    text = report.render("text")
    assert "FP8D-RT-0002" in text and "dims_not_multiple_of_16" in text


def test_inspect_expect_bf16_is_quiet() -> None:
    import preflight

    report = preflight.inspect(Block(), torch.optim.AdamW(Block().parameters()),
                               expect_fp8=False)
    assert report.findings == ()


def test_assert_ready_error_message_lists_findings() -> None:
    import preflight
    from preflight.api import PreflightError

    report = preflight.inspect(Block(torch.bfloat16))
    err = PreflightError(report)
    text = str(err)
    assert "FP8D-RT-0001" in text and "fix:" in text
    assert err.report is report
    assert text.splitlines()[0] == "fp8-doctor: 1 finding at or above 'error':"
    assert "[error] FP8D-RT-0001: FP8 was expected but the model has no FP8 module" in text
    assert text.splitlines()[-1].startswith("The full report is on this exception")


def test_gpu_inspect_script_runs_its_cpu_case(tmp_path) -> None:
    """benchmarks/gpu_inspect.py (run by the lead on the GPU machine) works end to end on CPU:
    the torchao case runs for real; cases whose frameworks are absent are skipped with reasons."""
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_inspect.py"
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu", "--out", str(tmp_path),
                           "--case", "torchao_direct", "--case", "deepspeed_zero3"],
                          capture_output=True, text=True, timeout=280)
    doc = json.loads((tmp_path / "gpu_inspect.json").read_text())
    case = doc["cases"]["torchao_direct"]
    assert case["status"] == "ok", case
    assert case["facts"]["runtime.fp8.converted"] == 3
    # Skipped (with its reason) where DeepSpeed is absent, as in CI; run for real where it is
    # installed (the GPU machine carries a DeepSpeed wheel): either way never an error.
    import importlib.util

    zero3 = doc["cases"]["deepspeed_zero3"]
    expected = "ok" if importlib.util.find_spec("deepspeed") else "skipped"
    assert zero3["status"] == expected, zero3
    assert proc.returncode == 0


def test_accelerate_optimizer_wrappers_are_unwrapped() -> None:
    from preflight.live import _unwrap_optimizer

    class AcceleratedOptimizer:  # the shape of accelerate's wrapper: .optimizer is the real one
        __module__ = "accelerate.optimizer"

        def __init__(self, inner: object) -> None:
            self.optimizer = inner

    opt = torch.optim.SGD(Block().parameters(), lr=0.1)
    assert _unwrap_optimizer(AcceleratedOptimizer(AcceleratedOptimizer(opt))) is opt
    assert _unwrap_optimizer(opt) is opt
