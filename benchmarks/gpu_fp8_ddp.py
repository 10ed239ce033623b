"""What FP8D-TORCH-0005 leaves unverified: float8-stored weights through DDP on sm_90, torch >= 2.8.

FP8D-TORCH-0005 (rules/torch/FP8D-TORCH-0005.yaml) fires for weights kept in ``torch.float8_*``
and replicated by DDP when torch is below 2.8 or the GPU below sm_90. Its quiet side, sm_90 with
torch >= 2.8, rests on the torch sources read at the tags (NCCLUtils.hpp's float8 map) and NCCL's
sm_90 rule; two steps of DDP's wrap-time path were not read: the CUDA ``cat`` that
``_broadcast_coalesced`` flattens float8 tensors with (finetrainers PR 184's '"cat_cuda" not
implemented for Float8_e4m3fn'), and NCCL carrying float8 at all. This script runs both, for real,
on one GPU with a one-rank NCCL process group (``torch.distributed`` at world size 1: the same
process-group and dtype paths DDP takes; a second rank on the same GPU is refused by NCCL, so the
cross-rank transfer itself needs two GPUs and is not claimed):

1. ``torch.cat`` of float8_e4m3fn / e5m2 CUDA tensors;
2. ``dist.broadcast`` and ``dist.all_reduce`` (SUM) of float8 tensors on the NCCL group;
3. ``DistributedDataParallel`` wrapping a module whose frozen weights are float8 (upcast per layer
   to BF16 for compute, as finetrainers' layerwise upcasting does) and one training step.

Each case runs in its own child (a failed NCCL call can leave the process group unusable), with a
timeout. Writes ``gpu_fp8_ddp.json`` (device, capability, versions incl. NCCL, one entry per
case: ok / error kind and message) to ``--out`` (default ``$OUT``).

    python3 benchmarks/gpu_fp8_ddp.py --out "$OUT"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CASES = ("cat", "broadcast", "all_reduce", "ddp_wrap_step")

_CHILD = r'''
import json, os, sys
import torch
import torch.distributed as dist
case = sys.argv[1]
out = {"case": case}
try:
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    if case != "cat":
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    dts = (torch.float8_e4m3fn, torch.float8_e5m2)
    if case == "cat":
        for dt in dts:
            a = torch.randn(64, 64, device=dev).to(dt)
            b = torch.randn(32, 64, device=dev).to(dt)
            c = torch.cat([a.flatten(), b.flatten()])
            assert c.dtype == dt and c.numel() == a.numel() + b.numel()
    elif case == "broadcast":
        for dt in dts:
            t = torch.randn(1024, device=dev).to(dt)
            ref = t.clone()
            dist.broadcast(t, src=0)
            assert torch.equal(t.view(torch.uint8), ref.view(torch.uint8))
    elif case == "all_reduce":
        for dt in dts:
            t = torch.full((1024,), 0.5, device=dev).to(dt)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            assert float(t.float().mean()) == 0.5
    elif case == "ddp_wrap_step":
        class Upcast(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.frozen = torch.nn.Linear(256, 256, bias=False)
                self.frozen.weight.requires_grad_(False)
                self.frozen.weight.data = self.frozen.weight.data.to(torch.float8_e4m3fn)
                self.head = torch.nn.Linear(256, 256, bias=False, dtype=torch.bfloat16)
            def forward(self, x):
                w = self.frozen.weight.to(torch.bfloat16)
                return self.head(torch.nn.functional.linear(x, w))
        m = Upcast().to(dev)
        ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[0])
        opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-3)
        x = torch.randn(8, 256, device=dev, dtype=torch.bfloat16)
        loss = ddp(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        assert m.frozen.weight.dtype == torch.float8_e4m3fn
    torch.cuda.synchronize()
    out["status"] = "ok"
except Exception as exc:  # the finding is the exception's kind and text
    out["status"] = "error"
    out["error_type"] = type(exc).__name__
    out["error"] = str(exc)[:600]
finally:
    if dist.is_initialized():
        dist.destroy_process_group()
print("RESULT " + json.dumps(out))
'''


def _versions() -> dict[str, object]:
    code = ("import json, torch; d = torch.cuda.get_device_properties(0) if torch.cuda.is_available() "
            "else None; print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
            "'nccl': (lambda v: '.'.join(map(str, v)) if isinstance(v, tuple) else str(v))("
            "torch.cuda.nccl.version()) if d else None, "
            "'device': d.name if d else None, 'cc': f'{d.major}.{d.minor}' if d else None}))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(run.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": run.stderr[-600:]}


def run_case(case: str, timeout: float) -> dict[str, object]:
    start = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True,
                             text=True, timeout=timeout, env={**os.environ, "NCCL_NVLS_ENABLE": "0"})
    except subprocess.TimeoutExpired:
        return {"case": case, "status": "timeout", "seconds": timeout}
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    result = (json.loads(lines[-1][7:]) if lines else
              {"case": case, "status": "crashed", "rc": run.returncode, "stderr": run.stderr[-600:]})
    result["seconds"] = round(time.monotonic() - start, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "versions": _versions(),
              "cases": [run_case(c, args.timeout) for c in CASES]}
    Path(args.out, "gpu_fp8_ddp.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0 if all(c["status"] == "ok" for c in report["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
