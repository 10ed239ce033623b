""""Worth it": FP8 (``torch._scaled_mm``, tensorwise E4M3, bf16 out) vs BF16 ``torch.mm`` GEMM
time at the job's own shapes and at a large reference shape. CUDA only; inside the smoke child.

The FP8 operands are quantized before timing (what TE/torchao's cached weights and fused casts
approach); the cast cost is reported separately by benchmarks/gpu_verify.py.
"""

from __future__ import annotations

from typing import Any

from preflight.smoke import scaled_mm as smm

REF_SHAPE = (8192, 8192, 8192)
BUDGET_S = 0.05   # timed seconds per shape and variant, split into ROUNDS rounds (gpu-results.md)


def pad16(v: int) -> int:
    return max(16, (int(v) + 15) // 16 * 16)


ROUNDS = 3        # BF16 and FP8 timed alternately, best of each: a fresh process's clock
                  # ramp-up or a neighbour's burst then hits both sides, not one (gpu-results.md)


def _events() -> tuple[Any, Any]:
    import torch

    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def per_call(fn: Any, n: int) -> float:
    """Seconds per call of ``fn`` over ``n`` calls, by CUDA events (also the speed-up
    prediction's timer, preflight/speedup/child.py)."""
    start, end = _events()
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / 1e3 / n


def _calls_for(fn: Any, budget: float) -> int:
    """Warm up (3 calls, then one timed call) and size a round to ``budget`` seconds."""
    for _ in range(3):
        fn()
    once = max(per_call(fn, 1), 1e-6)
    return int(min(200, max(3, budget / once)))


def time_pair(f1: Any, f2: Any) -> tuple[float, float]:
    """Best-of-ROUNDS seconds per call of two functions, timed alternately."""
    n1, n2 = _calls_for(f1, BUDGET_S / ROUNDS), _calls_for(f2, BUDGET_S / ROUNDS)
    t1, t2 = [], []
    for _ in range(ROUNDS):
        t1.append(per_call(f1, n1))
        t2.append(per_call(f2, n2))
    return min(t1), min(t2)


def measure(shape: tuple[int, int, int], device: str, *, fast_accum: bool = False) -> dict[str, Any]:
    """BF16 and FP8 time of one (M, K, N) GEMM; ``speedup`` = t_bf16 / t_fp8."""
    import torch

    m, k, n = (pad16(v) for v in shape)
    a = torch.randn((m, k), device=device, dtype=torch.bfloat16)
    b = torch.randn((n, k), device=device, dtype=torch.bfloat16)
    a8, sa = smm.quantize(a, torch.float8_e4m3fn)
    b8, sb = smm.quantize(b, torch.float8_e4m3fn)
    bt, b8t = b.t(), b8.t()
    t_bf16, t_fp8 = time_pair(
        lambda: torch.mm(a, bt),
        lambda: smm.scaled_mm(a8, b8t, sa, sb, torch.bfloat16, use_fast_accum=fast_accum))
    flop = 2.0 * m * k * n   # the operands go with this frame
    return {"shape": [m, k, n], "bf16_tflops": round(flop / t_bf16 / 1e12, 1),
            "fp8_tflops": round(flop / t_fp8 / 1e12, 1), "speedup": round(t_bf16 / t_fp8, 3)}


def run_all(device: str, job_shapes: list[list[int]], *, reference: bool = True) -> dict[str, Any]:
    """Speed at every job shape (deduplicated) and at REF_SHAPE."""
    seen: list[tuple[int, int, int]] = []
    for s in job_shapes:
        t = tuple(pad16(v) for v in s)
        if len(t) == 3 and t not in seen:
            seen.append(t)
    res: dict[str, Any] = {"job": [measure(s, device) for s in seen]}
    if res["job"]:
        res["job_speedup_min"] = min(r["speedup"] for r in res["job"])
    if reference:
        ref = measure(REF_SHAPE, device)
        res["ref"], res["ref_speedup"] = ref, ref["speedup"]
    return res
