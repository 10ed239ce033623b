"""Run ``preflight.inspect`` against real Accelerate / torchao / DeepSpeed / HF / Lightning objects.

On the GPU machine this builds tiny models and, one child process per case (DeepSpeed and
Accelerate keep process-global state), checks that inspect reads what the frameworks really did:

- torchao FP8 directly, and through ``Accelerator(mixed_precision="fp8", AORecipeKwargs())``;
- an Accelerator in bf16 while FP8 was expected (FP8D-RT-0001 / -0007 must fire);
- DeepSpeed ZeRO 0, 1 (also via the BF16 optimizer), 2, 3 on one GPU with ``torch.distributed``
  at world size 1:
  the effective stage read from the engine must equal the configured one; a config that says 3
  while the engine runs 1 must fire FP8D-RT-0004;
- the HF ``TrainerCallback`` (warn) and the Lightning ``Callback`` (raise) at train start.

Writes ``gpu_inspect.json`` (one entry per case: status, expectations met, runtime facts, rule
ids, versions) to ``--out`` (default ``$OUT``). A case whose framework is not installed is
``skipped`` with the reason; the exit code is 1 when any case that ran missed its expectation.

    python3 benchmarks/gpu_inspect.py --out "$OUT"                      # all cases, GPU
    python3 benchmarks/gpu_inspect.py --device cpu   # logic check on CPU (installed cases only)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NEEDS: dict[str, tuple[str, ...]] = {
    "torchao_direct": ("torch", "torchao"),
    "accelerate_ao_fp8": ("torch", "torchao", "accelerate"),
    "accelerate_bf16_expect_fp8": ("torch", "accelerate"),
    "deepspeed_zero0_bf16": ("torch", "deepspeed"),
    "deepspeed_zero1_bf16_fp32_accum": ("torch", "deepspeed"),
    "deepspeed_zero1": ("torch", "deepspeed"),
    "deepspeed_zero2": ("torch", "deepspeed"),
    "deepspeed_zero3": ("torch", "deepspeed"),
    "deepspeed_config_says_3_engine_runs_1": ("torch", "deepspeed"),
    "hf_trainer_callback": ("torch", "transformers", "accelerate"),
    "lightning_callback": ("torch", "lightning"),
}
# The DeepSpeed (gloo + DS_ACCELERATOR=cpu, which JIT-builds DeepSpeed's shm op) and Accelerate
# cases also run on CPU; the trainer callbacks are written for a GPU.
GPU_ONLY = {"hf_trainer_callback", "lightning_callback"}


# --- tiny models ----------------------------------------------------------------------------

def tiny(torch: Any, dims: tuple[int, ...] = (64, 128, 128, 64)) -> Any:
    layers: list[Any] = []
    for i, o in zip(dims, dims[1:]):
        layers += [torch.nn.Linear(i, o), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def train_steps(torch: Any, model: Any, opt: Any, device: str, steps: int = 2,
                backward: Callable[[Any], None] | None = None, dtype: Any = None) -> None:
    for _ in range(steps):
        x = torch.randn(16, 64, device=device, dtype=dtype)
        loss = model(x).float().pow(2).mean()
        (backward or (lambda value: value.backward()))(loss)
        opt.step()
        opt.zero_grad()


def summary(report: Any) -> dict[str, Any]:
    facts = {k: (v if not hasattr(v, "reason") else {"$unknown": v.reason})
             for k, v in report.facts.items()}
    return {"facts": facts, "findings": sorted(f.rule_id for f in report.findings),
            "undetermined": sorted(u.rule_id for u in report.undetermined)}


# --- cases ----------------------------------------------------------------------------------

def case_torchao_direct(device: str) -> dict[str, Any]:
    import torch
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    import preflight

    model = tiny(torch).to(device)
    convert_to_float8_training(model, config=Float8LinearConfig(emulate=device == "cpu"))
    opt = torch.optim.AdamW(model.parameters())
    train_steps(torch, model, opt, device)
    out = summary(preflight.inspect(model, opt))
    f = out["facts"]
    out["expect"] = {"converted == 3": f["runtime.fp8.converted"] == 3,
                     "master fp32": f["runtime.optimizer.master_fp32"] is True,
                     "no error finding": "FP8D-RT-0001" not in out["findings"]}
    return out


def case_accelerate_ao_fp8(device: str) -> dict[str, Any]:
    import torch
    from accelerate import Accelerator
    from accelerate.utils import AORecipeKwargs

    import preflight

    acc = Accelerator(mixed_precision="fp8", kwargs_handlers=[AORecipeKwargs()])
    model = tiny(torch, (64, 128, 128, 128, 64))
    opt = torch.optim.AdamW(model.parameters())
    model, opt = acc.prepare(model, opt)
    train_steps(torch, model, opt, acc.device, backward=acc.backward)
    out = summary(preflight.inspect(model, opt, acc))
    f = out["facts"]
    out["expect"] = {
        "mixed_precision fp8": f.get("runtime.accelerate.mixed_precision") == "fp8",
        "backend torchao": f.get("runtime.accelerate.fp8_backend") == "torchao",
        "Float8Linear found": f["runtime.fp8.converted"] >= 1,
        "first/last kept high precision": "first_or_last_linear"
        in f["runtime.fp8.unconverted_reasons"],
        "FP8D-RT-0001 quiet": "FP8D-RT-0001" not in out["findings"]}
    return out


def case_accelerate_bf16_expect_fp8(device: str) -> dict[str, Any]:
    import torch
    from accelerate import Accelerator

    import preflight

    acc = Accelerator(mixed_precision="bf16")
    model = tiny(torch)
    opt = torch.optim.AdamW(model.parameters())
    model, opt = acc.prepare(model, opt)
    train_steps(torch, model, opt, acc.device, backward=acc.backward)
    out = summary(preflight.inspect(model, opt, acc, expect_fp8=True))
    out["expect"] = {"FP8D-RT-0001 fires": "FP8D-RT-0001" in out["findings"],
                     "FP8D-RT-0007 fires": "FP8D-RT-0007" in out["findings"]}
    return out


def _deepspeed(stage: int, device: str, *, report_stage: int | None = None,
               fp32_accum: bool = False) -> dict[str, Any]:
    import deepspeed
    import torch

    import preflight

    cfg: dict[str, Any] = {"train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1,
                           "bf16": {"enabled": True}, "zero_optimization": {"stage": stage},
                           "steps_per_print": 1000000, "wall_clock_breakdown": False}
    if fp32_accum:
        cfg["data_types"] = {"grad_accum_dtype": "fp32"}
    # gloo on CPU (DS_ACCELERATOR=cpu): lets the DeepSpeed cases be checked without a GPU.
    deepspeed.init_distributed(dist_backend="nccl" if device == "cuda" else "gloo")
    model = tiny(torch)
    # torch AdamW is on DeepSpeed's ZeRO-supported list and needs no JIT-built op.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    engine, ds_opt, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=cfg)
    for _ in range(2):
        x = torch.randn(16, 64, device=engine.device, dtype=torch.bfloat16)
        loss = engine(x).float().pow(2).mean()
        engine.backward(loss)
        engine.step()
    told = dict(cfg, zero_optimization={"stage": report_stage}) if report_stage is not None else cfg
    out = summary(preflight.inspect(engine, expect_fp8=False, ds_config=told))
    out["ds_config"] = told
    return out


def _stage_expect(out: dict[str, Any], effective: int, configured: int) -> dict[str, Any]:
    f = out["facts"]
    return {f"effective stage {effective}": f.get("runtime.deepspeed.zero_stage") == effective,
            f"configured stage {configured}":
                f.get("runtime.deepspeed.zero_stage_configured") == configured,
            "master fp32": f.get("runtime.optimizer.master_fp32") is True}


def case_deepspeed_zero0_bf16(device: str) -> dict[str, Any]:
    # Stage 0 + bf16 (no pipeline) runs DeepSpeed's FP16 optimizer wrappers in bf16: no ZeRO.
    out = _deepspeed(0, device)
    out["expect"] = {**_stage_expect(out, 0, 0), "quiet": "FP8D-RT-0004" not in out["findings"]}
    return out


def case_deepspeed_zero1_bf16_fp32_accum(device: str) -> dict[str, Any]:
    # Stage 1 + bf16 + fp32 gradient accumulation runs BF16_Optimizer (engine.py
    # _do_optimizer_sanity_check), which partitions like ZeRO-1.
    out = _deepspeed(1, device, fp32_accum=True)
    out["expect"] = {**_stage_expect(out, 1, 1),
                     "BF16_Optimizer": out["facts"].get("runtime.deepspeed.optimizer_class", "")
                     .endswith("BF16_Optimizer"),
                     "quiet": "FP8D-RT-0004" not in out["findings"]}
    return out


def case_deepspeed_zero1(device: str) -> dict[str, Any]:
    out = _deepspeed(1, device)
    out["expect"] = {**_stage_expect(out, 1, 1), "quiet": "FP8D-RT-0004" not in out["findings"]}
    return out


def case_deepspeed_zero2(device: str) -> dict[str, Any]:
    out = _deepspeed(2, device)
    out["expect"] = {**_stage_expect(out, 2, 2), "quiet": "FP8D-RT-0004" not in out["findings"]}
    return out


def case_deepspeed_zero3(device: str) -> dict[str, Any]:
    out = _deepspeed(3, device)
    out["expect"] = {**_stage_expect(out, 3, 3), "quiet": "FP8D-RT-0004" not in out["findings"]}
    return out


def case_deepspeed_config_says_3_engine_runs_1(device: str) -> dict[str, Any]:
    out = _deepspeed(1, device, report_stage=3)
    out["expect"] = {**_stage_expect(out, 1, 3),
                     "FP8D-RT-0004 fires": "FP8D-RT-0004" in out["findings"]}
    return out


def case_hf_trainer_callback(device: str) -> dict[str, Any]:
    import warnings

    import torch
    from transformers import Trainer, TrainingArguments

    from preflight.integrations.core import PreflightWarning
    from preflight.integrations.hf import FP8DoctorCallback

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = tiny(torch)

        def forward(self, x: Any = None, labels: Any = None) -> dict[str, Any]:
            return {"loss": (self.net(x) - labels).float().pow(2).mean()}

    data = [{"x": torch.randn(64), "labels": torch.randn(64)} for _ in range(32)]
    cb = FP8DoctorCallback(on_failure="warn")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        args = TrainingArguments(output_dir=tmp, max_steps=2, per_device_train_batch_size=8,
                                 bf16=True, report_to=[], save_strategy="no",
                                 logging_strategy="no", remove_unused_columns=False)
        Trainer(model=Tiny(), args=args, train_dataset=data, callbacks=[cb]).train()
    out = summary(cb.report)
    warned = [str(w.message) for w in seen if issubclass(w.category, PreflightWarning)]
    out["warnings"] = warned
    out["expect"] = {"callback ran": cb.report is not None,
                     "warned FP8D-RT-0001": any("FP8D-RT-0001" in w for w in warned),
                     "training continued": True}
    return out


def case_lightning_callback(device: str) -> dict[str, Any]:
    import lightning.pytorch as L
    import torch

    from preflight.api import PreflightError
    from preflight.integrations.lightning import FP8DoctorCallback

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = tiny(torch)
            self.steps = 0

        def training_step(self, batch: Any, _: int) -> Any:
            self.steps += 1
            return self.net(batch[0]).float().pow(2).mean()

        def configure_optimizers(self) -> Any:
            return torch.optim.AdamW(self.parameters())

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 64)),
                                       batch_size=8)
    cb = FP8DoctorCallback(on_failure="raise")
    module = Module()
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=2, precision="bf16-mixed",
                        callbacks=[cb], logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    raised = None
    try:
        trainer.fit(module, data)
    except PreflightError as exc:
        raised = exc
    out = summary(raised.report) if raised else {"facts": {}, "findings": [], "undetermined": []}
    out["error_message"] = str(raised) if raised else None
    out["expect"] = {"PreflightError raised": raised is not None,
                     "before the first step": module.steps == 0,
                     "precision recorded": out["facts"].get("runtime.lightning.precision")
                     == "bf16-mixed"}
    return out


CASES: dict[str, Callable[[str], dict[str, Any]]] = {
    name: globals()[f"case_{name}"] for name in NEEDS}


# --- driver ---------------------------------------------------------------------------------

def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for dist in ("torch", "torchao", "accelerate", "deepspeed", "transformers", "lightning",
                 "pydantic"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def missing(name: str) -> list[str]:
    return [m for m in NEEDS[name] if importlib.util.find_spec(m) is None]


def run_one(name: str, device: str) -> dict[str, Any]:
    """Run one case in this process; never raises."""
    start = time.perf_counter()
    try:
        out = CASES[name](device)
        out["status"] = "ok" if all(out["expect"].values()) else "failed"
    except Exception as exc:  # noqa: BLE001 - a crashed case is a result
        out = {"status": "crashed", "error": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc()[-4000:]}
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def run_child(name: str, device: str, port: int, timeout: float) -> dict[str, Any]:
    """Run one case in a child process with a timeout and a world-size-1 rendezvous."""
    gaps = missing(name)
    if gaps:
        return {"status": "skipped", "reason": f"not installed: {', '.join(gaps)}"}
    if device == "cpu" and name in GPU_ONLY:
        return {"status": "skipped", "reason": "needs a CUDA GPU"}
    env = dict(os.environ, RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), DS_ACCELERATOR="cuda",
               PYTHONUNBUFFERED="1")
    if device == "cpu":
        env["DS_ACCELERATOR"] = "cpu"
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "case.json"
        cmd = [sys.executable, __file__, "--case", name, "--device", device, "--child",
               str(result)]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "reason": f"no result after {timeout:.0f} s"}
        if result.exists():
            out = json.loads(result.read_text())
        else:
            out = {"status": "crashed", "error": f"child exited {proc.returncode}"}
        out["stderr_tail"] = proc.stderr[-2000:]
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for the JSON")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="run only these")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per case")
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name = args.case[0]
        Path(args.child).write_text(json.dumps(run_one(name, args.device), default=str))
        return 0
    results: dict[str, Any] = {}
    for i, name in enumerate(args.case or list(CASES)):
        print(f"[gpu_inspect] {name} ...", file=sys.stderr, flush=True)
        results[name] = run_child(name, args.device, 29500 + 17 * i, args.timeout)
        res = results[name]
        print(f"[gpu_inspect] {name}: {res['status']} {res.get('expect', res.get('reason', ''))}"
              f" {res.get('error', '')}", file=sys.stderr, flush=True)
    doc = {"device": args.device, "versions": versions(), "cases": results}
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "gpu_inspect.json").write_text(json.dumps(doc, indent=2, default=str))
    bad = [n for n, r in results.items() if r["status"] in ("failed", "crashed", "timeout")]
    print(f"[gpu_inspect] wrote {out_dir / 'gpu_inspect.json'}; "
          f"{len(bad)} case(s) missed: {', '.join(bad) or 'none'}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
