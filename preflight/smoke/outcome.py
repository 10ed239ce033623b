"""Turn the children's result documents into ``smoke.*`` facts and the JSON ``smoke`` section.

Facts are flat and typed (registered in preflight/registry/smoke.py) so rules can test them; the
details keep the full numbers for humans. Every SNR key contains ``sqnr`` (dB) and every speed
ratio ``speedup`` (DESIGN.md contract).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from preflight.smoke.runner import ChildRun

# Fields copied from each backend's result into smoke.<backend>.<field>, when present.
BACKEND_FIELDS: dict[str, tuple[str, ...]] = {
    "scaled_mm": ("api", "identity_ok", "scale_ok", "e5m2_refused", "sqnr_db", "kernel_sqnr_db",
                  "engaged", "accurate", "finite", "error"),
    "torchao": ("api", "emulate", "converted", "unconverted", "gemm_flops_share", "sqnr_db",
                "xgrad_sqnr_db",
                "wgrad_sqnr_db", "engaged", "accurate", "finite", "train_ok", "loss_decreased",
                "train_grad_sqnr_db", "resume_status", "resume_error", "resume_fix",
                "resume_rowwise_status", "resume_rowwise_error",
                "resume_tensorwise_fsdp_all_gather_status",
                "resume_tensorwise_fsdp_all_gather_error", "resume_tensorwise_fsdp_all_gather_fix",
                "resume_dcp_status", "resume_dcp_error", "error"),
    "te": ("version", "available", "reason", "api", "recipe", "sqnr_db", "xgrad_sqnr_db",
           "engaged", "accurate", "finite", "fwd_scales_updated", "ckpt_bwd_scales_updated",
           "ckpt_scale_drift", "ckpt_agree_sqnr_db", "ckpt_xgrad_sqnr_db", "train_ok",
           "loss_decreased", "train_grad_sqnr_db", "converted", "unconverted", "gemm_flops_share",
           "resume_status", "resume_error", "resume_fix", "resume_max_abs_diff",
           "resume_unsafe_env_status", "resume_unsafe_env_error", "resume_unsafe_env_max_abs_diff",
           "resume_dropped_status", "resume_dropped_max_abs_diff", "resume_dcp_status",
           "resume_dcp_error", "resume_dcp_max_abs_diff", "resume_stateless_recipes", "error"),
}
# A check that came out false makes the run "failed" (the child itself was fine).
MUST_BE_TRUE = ("identity_ok", "scale_ok", "e5m2_refused", "engaged", "accurate", "finite",
                "train_ok", "fwd_scales_updated", "ckpt_bwd_scales_updated", "available")
MUST_BE_FALSE = ("ckpt_scale_drift",)
_DROP = {"traceback", "x_grad"}


def job_shapes(facts: Mapping[str, Any], extra: Sequence[Sequence[int]] = ()) -> list[list[int]]:
    """[M, K, N] GEMMs of the job: intent.shapes.gemms, else derived from hidden/ffn/tokens."""
    out: list[list[int]] = [list(s) for s in extra]
    gemms = facts.get("intent.shapes.gemms")
    if isinstance(gemms, list):
        out += [[int(v) for v in g] for g in gemms
                if isinstance(g, (list, tuple)) and len(g) == 3
                and all(isinstance(v, int) and v > 0 for v in g)]
    else:
        h, f, t = (facts.get(f"intent.shapes.{k}") for k in ("hidden", "ffn", "tokens"))
        if isinstance(h, int) and isinstance(t, int) and h > 0 and t > 0:
            out.append([t, h, h])           # attention projections
            if isinstance(f, int) and f > 0:
                out += [[t, h, f], [t, f, h]]  # MLP up / down
    return out


def _status(main: ChildRun, gpu_runs: Sequence[ChildRun], requested: Sequence[str]) -> str:
    if main.status != "ok":
        return main.status
    for name in BACKEND_FIELDS:
        res = main.doc.get(name)
        if not isinstance(res, dict):
            continue
        if any(res.get(k) is False for k in MUST_BE_TRUE) or any(res.get(k) is True for k in MUST_BE_FALSE):
            return "failed"
        # A backend that cannot be imported is only a failure when it was asked for by name:
        # "auto" checks what is installed, so an absent TE is not a problem there.
        if res.get("error") and (res.get("importable", True) or name in requested):
            return "failed"
    speed = main.doc.get("speed")
    if isinstance(speed, dict) and speed.get("error"):
        # An OOM or an exception at the job's own shapes: the "worth it" answer is missing, and
        # "ok" would say it was measured (FP8D-SMOKE-0016 reports it as a warning).
        return "failed"
    if any(r.status != "ok" or _gpu_problem(r) for r in gpu_runs):
        return "failed"
    return "ok"


def _gpu_problem(run: ChildRun) -> str | None:
    if run.status != "ok":
        return run.error or run.status
    res = run.doc.get("scaled_mm") or {}
    if res.get("error"):
        return str(res["error"])[:300]
    bad = [k for k in MUST_BE_TRUE if res.get(k) is False]
    return f"failed: {', '.join(bad)}" if bad else None


def to_facts(main: ChildRun, gpu_runs: Sequence[ChildRun] = (), job: Sequence[Sequence[int]] = (),
             *, all_gpus: bool = False, requested: Sequence[str] = ("auto",)) -> dict[str, Any]:
    """Flat smoke.* facts from the main child and the per-GPU children (--all-gpus).

    ``requested`` are the backends asked for (``SmokeOptions.backends``): one named there that
    cannot be imported makes the run "failed"; under "auto" an absent backend is simply skipped.
    """
    doc = main.doc
    f: dict[str, Any] = {"smoke.ran": True, "smoke.status": _status(main, gpu_runs, requested),
                         "smoke.duration_s": main.seconds}
    if main.error:
        f["smoke.error"] = main.error
        f["smoke.stage"] = doc.get("stage", "start")
    for key, name in (("device_name", "device"), ("torch_version", "torch_version"), ("cc", "cc")):
        if doc.get(key) is not None:
            f[f"smoke.{name}"] = doc[key]
    if "smoke.device" not in f and (doc.get("device") or main.device):
        f["smoke.device"] = doc.get("device") or main.device   # the device asked for
    if doc.get("device"):
        f["smoke.device_type"] = "cpu" if doc["device"] == "cpu" else "cuda"
    ran = []
    for backend, fields in BACKEND_FIELDS.items():
        res = doc.get(backend)
        if not isinstance(res, dict):
            continue
        if res.get("importable") is False:
            f[f"smoke.{backend}.error"] = (
                f"requested backend {backend} is not installed or cannot be imported "
                f"({res['error']})" if backend in requested else res["error"])
            continue
        ran.append(backend)
        for k in fields:
            if res.get(k) is not None and res.get(k) != "":
                f[f"smoke.{backend}.{k}"] = res[k]
        if "train_finite" in res and res.get("finite") is not None:
            f[f"smoke.{backend}.finite"] = bool(res["finite"] and res["train_finite"])
        for k in ("converted", "unconverted"):
            if isinstance(res.get(k), list):
                f[f"smoke.{backend}.{k}_count"] = len(res[k])
    f["smoke.backends"] = ran
    sp = doc.get("speed")
    if isinstance(sp, dict):
        if sp.get("error"):
            f["smoke.speed.error"] = sp["error"]
        if sp.get("job_speedup_min") is not None:
            f["smoke.speed.job_speedup_min"] = sp["job_speedup_min"]
            f["smoke.speed.job_shapes"] = [r["shape"] for r in sp.get("job", [])]
        if sp.get("ref_speedup") is not None:
            f["smoke.speed.ref_speedup"] = sp["ref_speedup"]
    elif job:
        f["smoke.speed.skipped"] = "speed is measured on CUDA only"
    if all_gpus or gpu_runs:
        runs = [main, *gpu_runs]
        bad = [f"{r.device} ({r.doc.get('device_name', '?')}): {p}"
               for r in runs if (p := _gpu_problem(r))]
        f["smoke.gpus.checked"] = len(runs)
        f["smoke.gpus.bad"] = bad
        f["smoke.gpus.bad_count"] = len(bad)
    return f


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in _DROP}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def to_details(main: ChildRun, gpu_runs: Sequence[ChildRun], facts: Mapping[str, Any]
               ) -> dict[str, Any]:
    """The JSON ``smoke`` section: status, device, per-backend numbers, speed, per-GPU results."""
    doc = main.doc
    out: dict[str, Any] = {
        "status": facts.get("smoke.status"), "error": main.error,
        "device": doc.get("device_name") or doc.get("device") or main.device, "cc": doc.get("cc"),
        "torch_version": doc.get("torch_version"), "duration_s": main.seconds,
        "torch_import_s": doc.get("torch_import_s"),
        **{k: doc[k] for k in ("torchao_import_s", "te_import_s") if doc.get(k) is not None},
        "backends": {b: _clean(doc[b]) for b in BACKEND_FIELDS if isinstance(doc.get(b), dict)},
    }
    if isinstance(doc.get("speed"), dict):
        out["speed"] = _clean(doc["speed"])
    if main.status != "ok":
        out["stage"] = doc.get("stage")
        out["stderr_tail"] = main.stderr_tail[-2000:]
    if gpu_runs or "smoke.gpus.checked" in facts:
        out["gpus"] = [{"device": r.device, "name": r.doc.get("device_name"), "status": r.status,
                        "error": r.error, "scaled_mm": _clean(r.doc.get("scaled_mm"))}
                       for r in [main, *gpu_runs]]
    return out
