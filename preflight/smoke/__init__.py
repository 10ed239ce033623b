"""The FP8 smoke step: confirm on the real device what the rules can only predict.

``should_run`` decides (without importing torch) whether the step applies; ``run`` starts the
checks in a child process (``python -m preflight.smoke.child``) with a timeout and turns whatever
happens - results, a crash, a CUDA error, a hang - into ``smoke.*`` facts for the rules plus a
``details`` dict for the JSON ``smoke`` section. It never raises and never hangs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.base.cc import parse_cc

Progress = Callable[[str], None]

BACKENDS = ("auto", "scaled_mm", "torchao", "te")
FP8_MIN_CC = (8, 9)  # Ada / Hopper and newer have FP8 tensor cores (torch._scaled_mm device gate)


@dataclass(frozen=True)
class SmokeOptions:
    """What the smoke step runs. Defaults are the safe, complete run on the first CUDA GPU."""

    timeout: float = 120.0
    backends: tuple[str, ...] = ("auto",)
    device: str = "cuda"
    shapes: tuple[tuple[int, int, int], ...] = ()   # extra [M, K, N] beyond intent.shapes.*
    all_gpus: bool = False
    speed: bool = True
    # Seams for tests and odd installs: the child's argv prefix and extra environment. A
    # command of its own runs one child with every stage (no parts side by side).
    command: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # The children's bytecode cache (smoke/cache.py): off with --no-cache; its folder.
    cache: bool = True
    cache_dir: str | None = None
    parallel: bool = True     # one child per backend, side by side (smoke/parallel.py)


@dataclass(frozen=True)
class SmokeOutcome:
    """``facts``: flat smoke.* facts; ``details``: the JSON ``smoke`` section."""

    facts: dict[str, Any]
    details: dict[str, Any]


def should_run(facts: Mapping[str, Any], requested: bool | None, device: str = "cuda"
               ) -> tuple[bool, str]:
    """(run it?, why / why not). ``requested`` None = auto: an FP8-capable GPU and torch present.

    Even when requested, a CUDA smoke step is skipped (with the reason) where this machine's
    facts say it cannot run: torch is a CPU-only build, or the probes found no GPU. Running it
    would only report "crashed" (torch.cuda.is_available() is False), a false alarm on top of
    the finding that already names the cause. ``device="cpu"`` runs anywhere.
    """
    if requested is False:
        return False, "skipped: --no-smoke"
    if device.startswith("cuda"):
        blocker = _no_cuda_here(facts)
        if blocker:
            return False, f"skipped: {blocker}; {CPU_HINT}"
    if requested is True:
        return True, "requested"
    gpu_from = _source(facts, "gpu.min_cc")
    if gpu_from in _ELSEWHERE:
        # The GPU described is not this machine's (a replayed snapshot or a planned one).
        return False, f"skipped: the GPU facts come from {gpu_from}, not from this machine"
    torch_version = facts.get("pkg.torch.version")
    if not isinstance(torch_version, str):
        return False, "skipped: torch is not installed"
    cc = parse_cc(facts.get("gpu.min_cc"))
    if cc is None:
        return False, "skipped: no GPU with a known compute capability is visible"
    if cc < FP8_MIN_CC:
        return False, f"skipped: GPU compute capability {cc[0]}.{cc[1]} has no FP8 (needs >= 8.9)"
    return True, f"auto: FP8-capable GPU (cc {cc[0]}.{cc[1]}) and torch {torch_version}"


CPU_HINT = "`fp8-doctor smoke --device cpu` runs the same checks emulated on the CPU"
_ELSEWHERE = ("snapshot", "assume")


def _source(facts: Mapping[str, Any], name: str) -> str | None:
    source = getattr(facts, "source", None)
    return source(name) if callable(source) else None


def _no_cuda_here(facts: Mapping[str, Any]) -> str | None:
    """Why this machine cannot run a CUDA smoke step, from facts probed here; None if it may."""
    if sys.platform == "darwin":
        # CUDA 10.2 was the last CUDA release for macOS (its release notes); torch's macOS
        # wheels have none. Said plainly rather than as a missing-GPU or CPU-build guess.
        return "macOS has no CUDA (the last CUDA release for macOS was 10.2)"
    variant = facts.get("cuda.torch_variant")
    if variant == "cpu" and _source(facts, "cuda.torch_variant") not in _ELSEWHERE:
        version = facts.get("pkg.torch.version")
        torch = f"torch {version}" if isinstance(version, str) else "torch"
        return f"{torch} is a CPU-only build (no CUDA)"
    if _gpu_count(facts) == 0 and _source(facts, "gpu.count") not in _ELSEWHERE:
        return "no GPU is visible to this process"
    return None


def _gpu_count(facts: Mapping[str, Any]) -> int | None:
    """``gpu.count`` when it is a count (not Unknown, not a bool), else None."""
    count = facts.get("gpu.count")
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _gemm_checks(devices: range) -> list[dict[str, Any]]:
    """Child requests for the raw-GEMM check on each further GPU of ``--all-gpus``."""
    return [{"device": f"cuda:{i}", "backends": ["scaled_mm"], "gemm_only": True}
            for i in devices]


def job_backends(facts: Mapping[str, Any], backends: tuple[str, ...]) -> tuple[str, ...] | None:
    """Which FP8 backends ``auto`` checks besides the raw ``_scaled_mm``: the job's own, when its
    configs name one; None (every installed backend) when they do not or when backends are named.

    A Transformer Engine job learns nothing from a torchao training step, and on a slow node the
    torchao stage alone takes 4-10 s (docs/gpu-results.md), so it is left out.
    """
    if tuple(backends) != ("auto",):
        return None
    backend = facts.get("intent.backend")
    if backend in ("te", "torchao"):
        return (backend,)
    if backend in ("msamp", "none"):
        return ()   # MS-AMP has no smoke path here; "none": the job is not FP8
    return None


def prestart(options: SmokeOptions | None, requested: bool | None) -> Any:
    """Start the smoke children now, before the static check, when the step will likely run
    (asked for, or auto with torch installed and an NVIDIA driver library that can load): they
    import while the probes run (smoke/parallel.py). None when not; ``.cancel()`` otherwise, once
    the facts say the step does not run. Never raises."""
    opts = options or SmokeOptions()
    if requested is False or not opts.parallel or opts.command is not None \
            or not opts.device.startswith("cuda"):
        return None
    try:
        if requested is None:   # cheapest first: a driverless machine pays one cache lookup
            from preflight.probes.nvml import library_absent

            if library_absent() is not None:
                return None
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            return None
        from preflight.smoke import parallel

        return parallel.prestart(opts, parallel.parts_for(opts.backends, None, opts.device,
                                                          opts.speed))
    except Exception:  # noqa: BLE001 - an early start is an optimisation, never a failure
        return None


def run(facts: Mapping[str, Any], options: SmokeOptions | None = None,
        progress: Progress = lambda _: None, early: Any = None) -> SmokeOutcome:
    """Run the smoke child(ren) and return facts + details; never raises. ``early``: children
    :func:`prestart` started (unused ones are ended)."""
    from preflight.smoke import outcome, parallel, runner

    opts = options or SmokeOptions()
    extra_details: dict[str, Any] = {}
    try:
        shapes = outcome.job_shapes(facts, opts.shapes)
        base = {"device": opts.device, "backends": list(opts.backends), "shapes": shapes,
                "speed": opts.speed}
        only = job_backends(facts, opts.backends)
        if only is not None:
            base["only"] = list(only)
        others_req = []
        if opts.all_gpus and opts.device.startswith("cuda"):
            others_req = _gemm_checks(range(1, _gpu_count(facts) or 1))
            base["device"] = "cuda:0"
        parts = parallel.parts_for(opts.backends, only, opts.device, opts.speed)
        if opts.parallel and opts.command is None and parallel.supported() and parts:
            gemm = [runner.spawn(r, opts.timeout, env=opts.env) for r in others_req]
            main, extra_details = parallel.run_parts(base, parts, opts, progress, early)
            others = runner.collect_all(gemm, opts.timeout, progress)
        else:
            requests = [base, *others_req]
            progress(f"smoke: {len(requests)} child process(es), timeout {opts.timeout:g} s")
            runs = runner.run_children(requests, opts.timeout, command=opts.command,
                                       env=opts.env, progress=progress)
            main, others = runs[0], runs[1:]
        fatal = main.doc.get("fatal") or {}
        if fatal.get("kind") == "no_device" and (_gpu_count(facts) or 0) <= 0:
            # torch sees no CUDA device and the probes found no GPU either (or could not tell,
            # e.g. no driver at all): nothing to smoke-test here, which is not a crash. With
            # GPUs on record, the same answer stays a crash: a GPU torch cannot use is a problem.
            reason = (f"skipped: no CUDA device here (the smoke child says: {fatal.get('text')}); "
                      f"{CPU_HINT}")
            return SmokeOutcome({"smoke.ran": False, "smoke.skip_reason": reason},
                                {"status": "skipped", "reason": reason})
        if opts.all_gpus and not others and main.doc.get("device_count", 1) > 1:
            # gpu.count was unknown: the first child counted the GPUs; check the rest now.
            n = int(main.doc["device_count"])
            others = runner.run_children(_gemm_checks(range(1, n)), opts.timeout,
                                         command=opts.command, env=opts.env, progress=progress)
        facts_out = outcome.to_facts(main, others, shapes, all_gpus=opts.all_gpus,
                                     requested=opts.backends)
        details = outcome.to_details(main, others, facts_out)
        details.update(extra_details)
        if only is not None:
            details["backends_note"] = (
                "the job's FP8 backend (intent.backend) is "
                f"{facts.get('intent.backend')}: only "
                f"{', '.join(('scaled_mm',) + only)} checked; `fp8-doctor smoke` checks every "
                "installed backend")
        if isinstance(main.doc.get("speed"), dict) and not shapes:
            details["speed_note"] = ("the job's GEMM shapes are unknown (intent.shapes.*): only "
                                     "8192^3 was timed; pass --shape MxKxN for your own")
        return SmokeOutcome(facts_out, details)
    except Exception as exc:  # noqa: BLE001 - the smoke step reports, it never aborts the doctor
        err = f"the smoke step itself failed: {type(exc).__name__}: {exc}"
        if early is not None:
            early.cancel()
        return SmokeOutcome({"smoke.ran": True, "smoke.status": "crash", "smoke.error": err},
                            {"status": "crash", "error": err})
