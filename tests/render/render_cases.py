"""Canonical reports for renderer tests (with planted secrets), and the golden-file helper.

Tests import this module by name (there is no conftest here, so nothing clashes with other test
folders' conftest modules). Golden files live in tests/render/golden/; to refresh them after an
intended output change:
``FP8_DOCTOR_UPDATE_GOLDEN=1 python -m pytest tests/render`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

from preflight.facts import Facts, Unknown
from preflight.findings import Evidence, Finding, Fix, Location, Reference, Severity, Undetermined
from preflight.probes.base import ProbeResult, ProbeStatus
from preflight.redact import Redactor
from preflight.report import Report

GOLDEN = Path(__file__).parent / "golden"

# Planted secrets: none of these may appear in any redacted output.
HF_TOKEN = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456"
WANDB_API_KEY = "0f4c2e6a8b1d3f5e7a9c0b2d4f6e8a1c3b5d7f90"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY1EXAMPLEKEY"
PATH_TOKEN = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GPU_UUID = "GPU-5a3c1e2b-7f4d-4e8a-9b6c-0d1e2f3a4b5c"
HOST = "gpu-node-0042.cluster.example.org"
USER = "jdoe"
HOME = f"/home/{USER}"
SECRETS = (HF_TOKEN, WANDB_API_KEY, AWS_SECRET, PATH_TOKEN, GPU_UUID, HOST, "gpu-node-0042",
           USER, HOME)


def planted_redactor() -> Redactor:
    """A redactor for a fake machine whose home, user and host name are planted in the report."""
    return Redactor(home=HOME, user=USER, hostnames=(HOST, "gpu-node-0042"))


def _facts(extra: dict | None = None, prov: dict | None = None) -> Facts:
    values = {
        "gpu.source": "nvml", "gpu.count": 8, "gpu.host_count": 8,
        "gpu.names": ["NVIDIA H100 80GB HBM3"] * 8, "gpu.min_cc": "9.0",
        "gpu.driver": "580.159.04", "gpu.cuda_driver": "13.0",
        "host.python": "3.11.7", "host.os": "Linux", "host.arch": "x86_64",
        "host.launcher": "torchrun", "host.world_size": 8,
        "pkg.torch.version": "2.13.0", "cuda.torch_build": "12.8",
        "pkg.transformer-engine.version": "2.8.0", "pkg.accelerate.version": "1.2.1",
        "pkg.deepspeed.version": "0.16.4",
        "intent.fp8": True, "intent.backend": "te", "intent.recipe": "delayed",
        "intent.distributed": "deepspeed", "intent.zero_stage": 3,
        "env.NCCL_DEBUG": "INFO",
    }
    values.update(extra or {})
    provenance = {k: "nvml" for k in values if k.startswith("gpu.")}
    provenance.update({k: "importlib.metadata" for k in values if k.startswith("pkg.")})
    provenance.update(prov or {})
    return Facts(values, provenance)


REFS = (Reference("REPORT", "https://github.com/huggingface/accelerate/issues/3360"),
        Reference("FIX", "https://github.com/huggingface/accelerate/pull/3361"))


def findings_report() -> Report:
    """Errors, a warning, an info, an undetermined rule, config inputs and a skipped smoke step."""
    acc = "/work/job/accelerate.yaml"
    facts = _facts({"smoke.ran": False, "smoke.skip_reason": "--no-smoke",
                    "config.accelerate.mixed_precision": "fp8",
                    "gpu.mig": Unknown("NVML: nvmlDeviceGetMigMode not supported")},
                   {"config.accelerate.mixed_precision": f"{acc}:4"})
    findings = (
        Finding("FP8D-ACC-0001", Severity.ERROR, "FP8 silently not applied under DeepSpeed",
                "accelerate 1.2.1 never converts the model's Linear layers to Transformer Engine "
                "under DeepSpeed, so this \"FP8\" run trains in BF16. The state reports "
                "`Mixed precision type: bf16` [sic] and no error is raised.",
                Fix("Upgrade to accelerate>=1.11.0.", ("pip install 'accelerate>=1.11.0'",)),
                REFS,
                (Evidence("pkg.accelerate.version", "1.2.1", "importlib.metadata"),
                 Evidence("config.accelerate.mixed_precision", "fp8", f"{acc}:4")),
                "verified", Location(acc, 4), ("accelerate", "deepspeed")),
        Finding("FP8D-TE-0003", Severity.WARNING, "Delayed scaling with activation checkpointing",
                "Backward amax history can drift | checkpointed layers <recompute> forward.",
                Fix("Use the current-scaling recipe."), (), (), "stated", None, ()),
        Finding("FP8D-HW-0002", Severity.INFO, "MIG state unknown",
                "Could not read MIG mode.", Fix(""), (), (), "inferred", None, ()),
    )
    undetermined = (Undetermined("FP8D-HW-0001", Severity.ERROR, "GPU in MIG mode",
                                 (Evidence("gpu.mig", Unknown("NVML: nvmlDeviceGetMigMode not "
                                                              "supported"), "nvml"),)),)
    probes = (ProbeResult("nvml", {"gpu.count": 8}, status=ProbeStatus.OK, seconds=0.1),
              ProbeResult("packages", {}, status=ProbeStatus.CRASHED,
                          reason="OSError: metadata unreadable", seconds=0.25))
    return Report(facts=facts, findings=findings, undetermined=undetermined, probes=probes,
                  smoke=None, rules_evaluated=42, fail_on="error",
                  inputs=(f"accelerate: {acc}",))


def clean_report() -> Report:
    """No findings; the smoke step ran and left details."""
    facts = _facts({"smoke.ran": True, "smoke.status": "ok",
                    "smoke.device": "NVIDIA H100 80GB HBM3",
                    "pkg.accelerate.version": "1.15.0"})
    smoke = {"scaled_mm": {"forward_sqnr_db": 31.42, "identity_exact": True},
             "torchao": {"loss_finite": True, "bf16_speedup": 1.37, "sqnr_db": 28.1}}
    return Report(facts=facts, findings=(), undetermined=(), probes=(), smoke=smoke,
                  rules_evaluated=42, fail_on="warning", inputs=())


def secrets_report() -> Report:
    """A report into which a careless probe / reader / rule let every kind of secret through."""
    cfg = f"{HOME}/runs/{PATH_TOKEN}/ds_config.json"
    facts = _facts({
        "env.HF_TOKEN": HF_TOKEN, "env.WANDB_API_KEY": WANDB_API_KEY,
        "env.AWS_SECRET_ACCESS_KEY": AWS_SECRET, "env.NCCL_SOCKET_IFNAME": "eth0",
        "env.NVTE_DEBUG_TOKEN": HF_TOKEN,
        "config.deepspeed.zero_optimization.stage": 3,
        "config.hf_trainer.hub_token": HF_TOKEN,
        "config.accelerate.deepspeed_config.wandb": {"api_key": WANDB_API_KEY},
        "config.hf_trainer.output_dir": f"{HOME}/out",
        "config.hf_trainer.push_url":
            f"https://{USER}:{AWS_SECRET}@hub.example.org/x?token={HF_TOKEN}",
        "gpu.uuids": [GPU_UUID],
        "host.hostname_hint": f"running on {HOST}",
        "smoke.ran": True, "smoke.status": "crash",
        "smoke.error": f"RuntimeError on {HOST} ({GPU_UUID}) loading {cfg}",
    }, {"config.deepspeed.zero_optimization.stage": f"{cfg}:7"})
    finding = Finding(
        "FP8D-DS-0001", Severity.ERROR, "Planted",
        f"token {HF_TOKEN} and key {WANDB_API_KEY} in {cfg} on {HOST}",
        Fix(f"export HF_TOKEN={HF_TOKEN}", (f"huggingface-cli login --token {HF_TOKEN}",)),
        (Reference("WEB", f"https://example.org/x?token={HF_TOKEN}"),),
        (Evidence("env.AWS_SECRET_ACCESS_KEY", AWS_SECRET, "runtime"),
         Evidence("config.hf_trainer.hub_token", HF_TOKEN, f"{cfg}:3")),
        "verified", Location(cfg, 7), ())
    und = (Undetermined("FP8D-HW-0001", Severity.ERROR, "GPU in MIG mode",
                        (Evidence("gpu.mig", Unknown(f"NVML failed on {HOST} for {GPU_UUID}"),
                                  "nvml"),)),)
    return Report(facts=facts, findings=(finding,), undetermined=und,
                  smoke={"error": f"{cfg} on {HOST}", "wandb_api_key": WANDB_API_KEY},
                  rules_evaluated=1, inputs=(f"deepspeed: {cfg}",))


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/render/golden/NAME; rewrite it under FP8_DOCTOR_UPDATE_GOLDEN."""
    path = GOLDEN / name
    if os.environ.get("FP8_DOCTOR_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"golden file {path} missing; run with FP8_DOCTOR_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"output differs from {path}; if intended, refresh the golden files"


def smoke_report() -> Report:
    """The smoke step ran on a GPU: numbers as measured on H200 (docs/gpu-results.md), one check
    failed (FP8 slower than BF16 at the job's shapes)."""
    facts = _facts({
        "smoke.ran": True, "smoke.status": "ok", "smoke.device": "NVIDIA H200",
        "smoke.duration_s": 21.4, "smoke.backends": ["scaled_mm", "te"],
        "smoke.scaled_mm.identity_ok": True, "smoke.scaled_mm.scale_ok": True,
        "smoke.scaled_mm.e5m2_refused": True, "smoke.scaled_mm.finite": True,
        "smoke.scaled_mm.sqnr_db": 28.52, "smoke.scaled_mm.kernel_sqnr_db": 55.61,
        "smoke.te.available": True, "smoke.te.finite": True, "smoke.te.sqnr_db": 28.6,
        "smoke.te.xgrad_sqnr_db": 24.6, "smoke.te.fwd_scales_updated": True,
        "smoke.te.ckpt_bwd_scales_updated": True, "smoke.te.ckpt_scale_drift": False,
        "smoke.te.ckpt_agree_sqnr_db": 120.0, "smoke.te.train_ok": True,
        "smoke.speed.job_speedup_min": 0.73, "smoke.speed.ref_speedup": 1.99,
    })
    smoke = {"status": "ok", "device": "NVIDIA H200",
             "backends": {"scaled_mm": {"sqnr_db": 28.52, "kernel_sqnr_db": 55.61}},
             "speed": {"job_speedup_min": 0.73, "ref_speedup": 1.99}}
    return Report(facts=facts, findings=(), undetermined=(), probes=(), smoke=smoke,
                  rules_evaluated=42, fail_on="error", inputs=())
