"""Raw ``torch._scaled_mm`` checks (backend-free): exact identity, scale semantics, e5m2 refusal,
and the SQNR band that shows FP8 is really engaged. Runs inside the smoke child only.

Both signatures are handled: torch < 2.5 returns ``(out, amax)`` and has optional scales; torch
>= 2.5 returns a tensor and requires ``scale_a``/``scale_b`` (pytorch PR #128683). Passing the
scales and ``out_dtype`` as keywords and unwrapping a tuple works on both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from preflight.smoke import numerics as nm

# mm(a8, b8, scale_a, scale_b, out_dtype) -> Tensor: the FP8 GEMM under test. Tests inject
# faulty ones (scales applied the wrong way) to prove the checks catch them.
MM = Callable[[Any, Any, Any, Any, Any], Any]
# gemm(a_hp, b_hp) -> Tensor: a whole high-precision-in, FP8-inside GEMM (quantize + mm).
GEMM = Callable[[Any, Any], Any]


def api_kind(device: str) -> str:
    """'tuple' (torch < 2.5, returns (out, amax)) or 'tensor' (current), from a real call."""
    import torch

    one = torch.ones((), device=device, dtype=torch.float32)
    x = torch.zeros((16, 16), device=device, dtype=torch.float8_e4m3fn)
    out = torch._scaled_mm(x, x.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
    return "tuple" if isinstance(out, tuple) else "tensor"


def scaled_mm(a8: Any, b8: Any, scale_a: Any, scale_b: Any, out_dtype: Any,
              use_fast_accum: bool = False) -> Any:
    """Portable ``torch._scaled_mm``: keywords for both signatures, tuple unwrapped."""
    import torch

    kwargs: dict[str, Any] = {"scale_a": scale_a, "scale_b": scale_b, "out_dtype": out_dtype}
    if use_fast_accum:
        kwargs["use_fast_accum"] = True
    out = torch._scaled_mm(a8, b8, **kwargs)
    return out[0] if isinstance(out, tuple) else out


def quantize(t: Any, dtype: Any) -> tuple[Any, Any]:
    """Tensorwise amax scaling: returns (fp8 tensor, fp32 dequantization scale)."""
    import torch

    fmax = torch.finfo(dtype).max
    amax = t.detach().abs().max().float().clamp(min=1e-12)
    scale = fmax / amax
    q = (t.float() * scale).clamp(-fmax, fmax).to(dtype)
    return q, (1.0 / scale).to(torch.float32).reshape(())


def fp8_gemm(mm: MM = scaled_mm, use_fast_accum: bool = False) -> GEMM:
    """The FP8 GEMM of a bf16 (M,K) x (N,K)^T problem through ``mm``, bf16 out."""
    def run(a: Any, b: Any) -> Any:
        import torch

        a8, sa = quantize(a, torch.float8_e4m3fn)
        b8, sb = quantize(b, torch.float8_e4m3fn)
        if use_fast_accum:
            return scaled_mm(a8, b8.t(), sa, sb, torch.bfloat16, use_fast_accum=True)
        return mm(a8, b8.t(), sa, sb, torch.bfloat16)
    return run


def check_identity(device: str, mm: MM = scaled_mm) -> bool:
    """x8 @ I must equal x8 exactly (adapted from PyTorch's _test_tautological_mm)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    x8 = torch.rand((64, 64), generator=g).to(device).to(torch.float8_e4m3fn)
    eye = torch.eye(64, device=device).to(torch.float8_e4m3fn)
    one = torch.ones((), device=device, dtype=torch.float32)
    # eye is symmetric; .t() only gives mat2 the column-major layout cuBLASLt wants on sm90.
    out = mm(x8, eye.t(), one, one, torch.float32)
    return bool(out.dtype == torch.float32 and torch.equal(out, x8.float()))


def check_scale(device: str, mm: MM = scaled_mm) -> bool:
    """Scales are multiplicative dequantization factors, checked exactly with powers of two.

    0.5*0.5 summed over K=16 is 4.0 with unit scales; with scale_a=2, scale_b=0.25 it is 2.0.
    A backend that divides by the scales (the quantization convention) gives 8.0 or 32.0.
    """
    import torch

    x = torch.full((16, 16), 0.5, device=device).to(torch.float8_e4m3fn)
    y = torch.full((16, 16), 0.5, device=device).to(torch.float8_e5m2).t()
    f32 = {"device": device, "dtype": torch.float32}
    unit = mm(x, y, torch.tensor(1.0, **f32), torch.tensor(1.0, **f32), torch.float32)
    scaled = mm(x, y, torch.tensor(2.0, **f32), torch.tensor(0.25, **f32), torch.float32)
    return bool(torch.all(unit == 4.0) and torch.all(scaled == 2.0))


def check_e5m2_refused(device: str) -> bool:
    """e5m2 x e5m2 must raise on CUDA ("Multiplication of two Float8_e5m2 matrices is not
    supported"); a device that accepts it is not running the checked cuBLASLt path."""
    import torch

    x = torch.ones((16, 16), device=device).to(torch.float8_e5m2)
    one = torch.ones((), device=device, dtype=torch.float32)
    try:
        scaled_mm(x, x.t(), one, one, torch.bfloat16)
    except (RuntimeError, ValueError, TypeError):
        return True
    return False


def check_fidelity(device: str, gemm: GEMM | None = None, shape: tuple[int, int, int] = (256, 1024, 512)
                   ) -> dict[str, Any]:
    """SQNR of the FP8 GEMM against fp32: inside [FWD_SQNR_MIN_DB, BYPASS_SQNR_DB] when engaged."""
    import torch

    m, k, n = shape
    g = torch.Generator(device="cpu").manual_seed(1)
    a = torch.randn((m, k), generator=g).to(device=device, dtype=torch.bfloat16)
    b = torch.randn((n, k), generator=g).to(device=device, dtype=torch.bfloat16)
    out = (gemm or fp8_gemm())(a, b).float()
    ref = a.float() @ b.float().t()
    s = nm.sqnr_db(ref, out)
    result: dict[str, Any] = {
        "sqnr_db": nm.finite_or_none(s),
        "finite": bool(torch.isfinite(out).all()),
        "engaged": nm.engaged(s),
        "accurate": nm.accurate(s),
    }
    if gemm is None:
        a8, sa = quantize(a, torch.float8_e4m3fn)
        b8, sb = quantize(b, torch.float8_e4m3fn)
        deq = (a8.float() * sa) @ (b8.float() * sb).t()
        result["kernel_sqnr_db"] = nm.finite_or_none(nm.sqnr_db(deq, out))
    return result


def run_all(device: str, *, strict_e5m2: bool) -> dict[str, Any]:
    """Every raw _scaled_mm check; ``strict_e5m2`` only on CUDA (the CPU kernel accepts e5m2)."""
    res: dict[str, Any] = {"api": api_kind(device)}
    res["identity_ok"] = check_identity(device)
    res["scale_ok"] = check_scale(device)
    if strict_e5m2:
        res["e5m2_refused"] = check_e5m2_refused(device)
    res.update(check_fidelity(device))
    return res
