"""GPU timing for the speed-up prediction; runs as a child process (``python -m
preflight.speedup.child REQUEST_JSON``), one result JSON line on stdout.

Per distinct linear layer it times, at the job's own shapes, the three BF16 GEMMs of a training
step and the three FP8 GEMMs of the job's recipe (``torch._scaled_mm``: tensorwise, or rowwise
scales). The casts FP8 adds (an amax pass, the cast, and the transposed copy the dgrad and wgrad
GEMMs need, for X, W and dY) are memory-bound kernels that a compiled model fuses with their
neighbours; timed alone, in a compiled single linear, they made the prediction 12% pessimistic
against a real compiled training run on an H100 (docs/gpu-results.md), so they are modelled as
the bytes they move at the measured copy bandwidth. With ``measure_layers`` each linear is also timed whole
as torchao's compiled Float8Linear against a compiled nn.Linear (casts not fused with anything
else: an upper bound). With ``backend: te`` and Transformer Engine importable, each linear is
timed whole as a ``te.Linear`` forward + backward under ``fp8_autocast`` (TE's own fused casts)
against the same module in BF16. What the step does besides linears is timed where it can be
(attention: BF16 SDPA forward + backward; the LM head GEMMs) and estimated where it cannot
(norms, activations, residuals, loss, optimizer: bytes moved at the measured copy bandwidth).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from preflight.speedup import childwhy

Best = Callable[[Callable[[], object]], float]
"""Best-of-rounds seconds per call of a function (:func:`_timer`)."""

ROUNDS = 3
BUDGET_S = 0.04            # timed seconds per op per round
# Bytes moved per token per layer by what is not a GEMM or attention, forward + backward, in
# BF16 under torch.compile: the two RMSNorms, residual adds and RoPE (~24 x hidden) and the
# SwiGLU activation (~18 x ffn). An estimate: the validation run (benchmarks) checks it.
ELEM_BYTES_PER_HIDDEN = 24
ELEM_BYTES_PER_FFN = 18
TE_LAYERS_PER_CONTEXT = 8       # te.Linear calls timed under one fp8_autocast
OPTIMIZER_BYTES_PER_PARAM = 16   # fused AdamW: param, grad, two moments, read and written
# Bytes per element a dynamically scaled FP8 cast moves: the amax pass reads BF16 (2), the cast
# reads it again (2) and writes FP8 twice, row-major and transposed (1 + 1).
CAST_BYTES_PER_ELEMENT = 6


def cast_seconds(tokens: int, d_in: int, d_out: int, bandwidth: float) -> float:
    """Modelled time of the casts of X [T, in], W [out, in] and dY [T, out]."""
    elements = tokens * d_in + d_in * d_out + tokens * d_out
    return CAST_BYTES_PER_ELEMENT * elements / bandwidth


def copy_bandwidth(torch: Any, best: Best, device: str) -> float:
    """Bytes per second a device-to-device copy moves (read + write)."""
    buf = torch.empty(64 << 20, device=device, dtype=torch.uint8)
    dst = torch.empty_like(buf)
    return 2 * (64 << 20) / best(lambda: dst.copy_(buf))   # the buffers go with this frame


def _timer(torch: Any) -> Best:
    """Best-of-ROUNDS seconds per call, each round sized to BUDGET_S (the smoke step's timer)."""
    from preflight.smoke.speed import per_call

    def best(fn: Callable[[], object]) -> float:
        for _ in range(3):
            fn()
        once = max(per_call(fn, 1), 1e-6)
        n = int(min(100, max(2, BUDGET_S / once)))
        return min(per_call(fn, n) for _ in range(ROUNDS))
    return best


def _casts(torch: Any, rowwise: bool) -> Any:
    """Eager casts, only to make the FP8 operands of the timed GEMMs."""
    fmax = {torch.float8_e4m3fn: 448.0, torch.float8_e5m2: 57344.0}

    def cast(t: Any, dtype: Any) -> tuple[Any, Any, Any, Any]:
        if rowwise:
            amax = t.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12)
            amax_t = t.abs().amax(dim=0, keepdim=True).float().clamp(min=1e-12)
        else:
            amax = amax_t = t.abs().amax().float().clamp(min=1e-12)
        scale, scale_t = fmax[dtype] / amax, fmax[dtype] / amax_t
        q = (t.float() * scale).clamp(-fmax[dtype], fmax[dtype]).to(dtype)
        qt = (t.float() * scale_t).clamp(-fmax[dtype], fmax[dtype]).to(dtype).t().contiguous()
        return q, qt, scale.reciprocal(), scale_t.reciprocal().t()
    return cast


def time_linear_scaled_mm(torch: Any, best: Best, tokens: int, d_in: int, d_out: int,
                          rowwise: bool, device: str, bandwidth: float) -> dict[str, Any]:
    bf = torch.bfloat16
    x = torch.randn(tokens, d_in, device=device, dtype=bf)
    w = torch.randn(d_out, d_in, device=device, dtype=bf) * 0.02
    dy = torch.randn(tokens, d_out, device=device, dtype=bf) * 1e-3
    e4, e5 = torch.float8_e4m3fn, (torch.float8_e4m3fn if rowwise else torch.float8_e5m2)
    cast = _casts(torch, rowwise)
    x8, x8t, sx, sxt = cast(x, e4)
    w8, w8t, sw, swt = cast(w, e4)
    d8, d8t, sd, sdt = cast(dy, e5)

    def smm(a: Any, b: Any, sa: Any, sb: Any) -> Any:
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=bf)
    if rowwise:
        # rowwise: per-row scales of A ([M,1]) and per-column scales of B ([1,N])
        fwd8 = lambda: smm(x8, w8.t(), sx, sw.t())  # noqa: E731
        dgr8 = lambda: smm(d8, w8t.t(), sd, swt.t())  # noqa: E731
        wgr8 = lambda: smm(d8t, x8t.t(), sdt, sxt.t())  # noqa: E731
    else:
        fwd8 = lambda: smm(x8, w8.t(), sx, sw)  # noqa: E731
        dgr8 = lambda: smm(d8, w8t.t(), sd, swt)  # noqa: E731
        wgr8 = lambda: smm(d8t, x8t.t(), sdt, sxt)  # noqa: E731
    out: dict[str, Any] = {"bf16": {}, "fp8": {}}
    for name, f16, f8 in (("fwd", lambda: x @ w.t(), fwd8), ("dgrad", lambda: dy @ w, dgr8),
                          ("wgrad", lambda: dy.t() @ x, wgr8)):
        out["bf16"][name] = best(f16)
        out["fp8"][name] = best(f8)
    out["cast_model_s"] = cast_seconds(tokens, d_in, d_out, bandwidth)
    return out


def time_linear_torchao(torch: Any, best: Best, tokens: int, d_in: int, d_out: int,
                        rowwise: bool, device: str) -> dict[str, float]:
    """One linear's forward + backward, whole, compiled: ``nn.Linear`` in BF16 against the same
    layer converted by torchao (``convert_to_float8_training``), as a compiled training step
    runs it: torchao's own casts, fused by inductor, and its FP8 GEMMs."""
    import copy

    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    config = Float8LinearConfig.from_recipe_name("rowwise") if rowwise else Float8LinearConfig()
    m16 = torch.nn.Sequential(torch.nn.Linear(d_in, d_out, bias=False)).to(device, torch.bfloat16)
    m8 = convert_to_float8_training(copy.deepcopy(m16), config=config)
    x = torch.randn(tokens, d_in, device=device, dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(tokens, d_out, device=device, dtype=torch.bfloat16) * 1e-3
    c16, c8 = torch.compile(m16), torch.compile(m8)
    return {"bf16_s": best(lambda: c16(x).backward(g)), "fp8_s": best(lambda: c8(x).backward(g))}


def time_linear_te(torch: Any, best: Best, tokens: int, d_in: int, d_out: int,
                   recipe_name: str, device: str) -> dict[str, Any]:
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe as te_recipe

    recipe = (te_recipe.DelayedScaling() if recipe_name in ("delayed", "") else
              te_recipe.Float8CurrentScaling() if recipe_name == "current" else
              te_recipe.MXFP8BlockScaling() if recipe_name == "mxfp8" else te_recipe.DelayedScaling())
    lins = [te.Linear(d_in, d_out, bias=False, params_dtype=torch.bfloat16, device=device)
            for _ in range(TE_LAYERS_PER_CONTEXT)]
    x = torch.randn(tokens, d_in, device=device, dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(tokens, d_out, device=device, dtype=torch.bfloat16) * 1e-3

    # One fp8_autocast around several layers, as a model runs them: entering and leaving the
    # context (and, for delayed scaling, the amax reduction at its exit) once per layer made the
    # TE prediction 26% pessimistic against a real run on an H100 (docs/gpu-results.md).
    def step(fp8: bool) -> None:
        with te.fp8_autocast(enabled=fp8, fp8_recipe=recipe):
            ys = [lin(x) for lin in lins]
        torch.autograd.backward(ys, [g] * TE_LAYERS_PER_CONTEXT)
    bf16_s = best(lambda: step(False)) / TE_LAYERS_PER_CONTEXT
    fp8_s = best(lambda: step(True)) / TE_LAYERS_PER_CONTEXT
    return {"bf16": {"fwd+bwd": bf16_s}, "fp8": {"fwd+bwd": fp8_s}, "cast": {}}


def _attention_seconds(torch: Any, best: Best, mb: int, heads: int, seq: int, hd: int,
                       device: str) -> float:
    """Causal SDPA forward + backward in BF16, per layer (its tensors go with this frame)."""
    import torch.nn.functional as F

    bf = torch.bfloat16
    q, k, v = (torch.randn(mb, heads, seq, hd, device=device, dtype=bf, requires_grad=True)
               for _ in range(3))
    go = torch.randn(mb, heads, seq, hd, device=device, dtype=bf)
    return best(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(go))


def _head_seconds(torch: Any, best: Best, tokens: int, hidden: int, vocab: int,
                  device: str) -> float:
    """The LM head's three GEMMs in BF16 (it stays BF16)."""
    bf = torch.bfloat16
    x = torch.randn(tokens, hidden, device=device, dtype=bf)
    w = torch.randn(vocab, hidden, device=device, dtype=bf)
    dy = torch.randn(tokens, vocab, device=device, dtype=bf)
    return best(lambda: x @ w.t()) + best(lambda: dy @ w) + best(lambda: dy.t() @ x)


def other_time(torch: Any, best: Best, shape: dict[str, Any], device: str) -> dict[str, Any]:
    """Attention (timed), LM head (timed), the rest (estimated from the copy bandwidth)."""
    tp = max(int(shape.get("tp") or 1), 1)
    heads, hd = shape["heads"] // tp, shape["hidden"] // shape["heads"]
    mb, seq, tokens = shape["micro_batch"], shape["seq"], shape["micro_batch"] * shape["seq"]
    attn_s = _attention_seconds(torch, best, mb, heads, seq, hd, device)
    bandwidth = copy_bandwidth(torch, best, device)
    layers = shape.get("layers") or 1
    elem_bytes = tokens * (ELEM_BYTES_PER_HIDDEN * shape["hidden"] + ELEM_BYTES_PER_FFN *
                           shape["ffn"] // tp) * layers
    out = {"attention_s": attn_s * layers, "elementwise_s": elem_bytes / bandwidth,
           "bandwidth_gbs": round(bandwidth / 1e9, 1), "head_s": 0.0, "optimizer_s": 0.0}
    if shape.get("layers") and shape.get("vocab"):
        vocab = shape["vocab"] // tp
        out["head_s"] = _head_seconds(torch, best, tokens, shape["hidden"], vocab, device)
        out["head_s"] += 3 * tokens * vocab * 4 / bandwidth          # softmax + loss, fp32
        h, f = shape["hidden"], shape["ffn"]
        kv = h // shape["heads"] * shape["kv_heads"]
        per_layer = h * (h + 2 * kv) + h * h + h * f * (3 if shape.get("gated", True) else 2)
        params = (per_layer * layers + 2 * vocab * h) / tp
        out["optimizer_s"] = params * OPTIMIZER_BYTES_PER_PARAM / bandwidth
    return out


def run(request: dict[str, Any]) -> dict[str, Any]:
    import torch

    device = request.get("device", "cuda")
    if not torch.cuda.is_available():
        return {"status": "skipped", "reason": "torch sees no CUDA device (timing needs a GPU)",
                "torch": torch.__version__}
    torch.backends.cuda.matmul.allow_tf32 = True
    best = _timer(torch)
    shape = request["shape"]
    tokens = shape["micro_batch"] * shape["seq"]
    backend, recipe = request.get("backend") or "torchao", request.get("recipe") or "tensorwise"
    rowwise = recipe == "rowwise"
    started = time.perf_counter()
    use_te = backend == "te"
    if use_te:
        try:
            import transformer_engine.pytorch  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return {"status": "failed", "reason": "backend te: " + childwhy.reason(
                exc, 200, "Transformer Engine does not import here")}
    ao_problem: str | None = None
    measure = bool(request.get("measure_layers")) and not use_te
    if measure:
        try:
            import torchao.float8  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - the modelled casts still give an answer
            ao_problem = (f"torchao.float8 does not import ({childwhy.reason(exc, 120)}): no "
                          "whole-layer bound")
    bandwidth = copy_bandwidth(torch, best, device)
    linears = []
    for lin in request["linears"]:
        if use_te:
            t = time_linear_te(torch, best, tokens, lin["d_in"], lin["d_out"], recipe, device)
        else:
            # The GEMMs (BF16 and the recipe's FP8), the casts modelled; on request also the
            # whole layer as torchao runs it alone (the unfused bound).
            t = time_linear_scaled_mm(torch, best, tokens, lin["d_in"], lin["d_out"],
                                      rowwise, device, bandwidth)
            if measure and ao_problem is None:
                t["whole"] = time_linear_torchao(torch, best, tokens, lin["d_in"],
                                                 lin["d_out"], rowwise, device)
        linears.append({**lin, **t})
        torch.cuda.empty_cache()
    other = other_time(torch, best, shape, device)
    return {"status": "ok", "device_name": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "backend": "te" if use_te else "scaled_mm",
            "note": ao_problem, "recipe": recipe, "linears": linears,
            "other": other, "seconds": round(time.perf_counter() - started, 2)}


def main() -> int:
    try:
        request = json.loads(sys.argv[1])
        result = run(request)
    except Exception as exc:  # noqa: BLE001 - the parent turns this into a clear failure
        result = {"status": "failed", "reason": childwhy.reason(exc, 500)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
