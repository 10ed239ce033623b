"""GPU: check `fp8-doctor speedup`'s prediction against a real short training run.

    python benchmarks/speedup_validate.py --out DIR [--steps 20] [--only torchao|te|llama8b]

1. A small Llama-style model (RMSNorm, GQA attention through SDPA, SwiGLU MLP, untied LM head;
   hidden 2048, FFN 5632, 16 heads / 4 KV, 8 layers, vocab 32000, micro-batch 4 x seq 2048),
   trained for a few steps with AdamW (fused) in BF16 and in FP8, each under torch.compile:
   torchao Float8Linear tensorwise (LM head left in BF16, as torchao's recipes and accelerate's
   filter do), and Transformer Engine (te.Linear, DelayedScaling, eager) when TE imports.
   The measured step speed-up is t_step(BF16) / t_step(FP8).
2. The prediction for the same shapes and recipe from preflight.speedup (its child process).
3. The prediction's GPU time for Llama-3-8B shapes (seq 4096, micro-batch 1): target < 30 s.
Writes DIR/speedup_validate.json and a chart DIR/speedup_chart.png when matplotlib imports.
`--only te` runs the TE part alone, in a fresh process that imports Transformer Engine first:
importing TE after torch has loaded its own cuDNN failed on the GPU machine
("libcudnn_cnn.so.9: undefined symbol ... libcudnn_graph.so.9").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from preflight.speedup import ModelShape  # noqa: E402
from preflight.speedup.run import speedup  # noqa: E402

SMALL = ModelShape(hidden=2048, ffn=5632, heads=16, kv_heads=4, layers=8, vocab=32000, seq=2048,
                   micro_batch=4, gated=True)
LLAMA8B = ModelShape(hidden=4096, ffn=14336, heads=32, kv_heads=8, layers=32, vocab=128256,
                     seq=4096, micro_batch=1, gated=True)


class Block(nn.Module):
    def __init__(self, s: ModelShape, linear: type = nn.Linear) -> None:
        super().__init__()
        kv = s.hidden // s.heads * s.kv_heads
        self.s, self.kv = s, kv
        self.n1, self.n2 = nn.RMSNorm(s.hidden), nn.RMSNorm(s.hidden)
        self.qkv = linear(s.hidden, s.hidden + 2 * kv, bias=False)
        self.out = linear(s.hidden, s.hidden, bias=False)
        self.fc1 = linear(s.hidden, 2 * s.ffn, bias=False)
        self.fc2 = linear(s.ffn, s.hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        s, hd = self.s, self.s.hidden // self.s.heads
        q, k, v = self.qkv(self.n1(x)).split([h, self.kv, self.kv], dim=-1)
        q = q.view(b, t, s.heads, hd).transpose(1, 2)
        k = k.view(b, t, s.kv_heads, hd).transpose(1, 2)
        v = v.view(b, t, s.kv_heads, hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, h))
        g, u = self.fc1(self.n2(x)).chunk(2, dim=-1)
        return x + self.fc2(F.silu(g) * u)


class Llama(nn.Module):
    def __init__(self, s: ModelShape, linear: type = nn.Linear) -> None:
        super().__init__()
        self.emb = nn.Embedding(s.vocab, s.hidden)
        self.blocks = nn.ModuleList(Block(s, linear) for _ in range(s.layers or 1))
        self.norm = nn.RMSNorm(s.hidden)
        self.lm_head = nn.Linear(s.hidden, s.vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.norm(x))


def train(model: nn.Module, s: ModelShape, steps: int, ctx=None) -> float:
    """Median seconds per training step (after warm-up steps, compile included there)."""
    import contextlib

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, s.vocab, (s.micro_batch, s.seq), device="cuda")
    times = []
    for i in range(steps + 3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with (ctx() if ctx else contextlib.nullcontext()):
            logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, s.vocab).float(), ids.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if i >= 3:
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def run_torchao(s: ModelShape, steps: int) -> dict:
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    torch.manual_seed(0)
    base = Llama(s).cuda().to(torch.bfloat16)
    t_bf16 = train(torch.compile(base), s, steps)
    del base
    torch.cuda.empty_cache()
    torch.manual_seed(0)
    m = Llama(s).cuda().to(torch.bfloat16)
    convert_to_float8_training(m, config=Float8LinearConfig(),
                               module_filter_fn=lambda mod, fqn: fqn != "lm_head")
    t_fp8 = train(torch.compile(m), s, steps)
    return {"bf16_step_s": t_bf16, "fp8_step_s": t_fp8, "measured_speedup": t_bf16 / t_fp8}


def run_te(s: ModelShape, steps: int) -> dict:
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe

    def te_linear(i: int, o: int, bias: bool = False) -> nn.Module:
        return te.Linear(i, o, bias=bias, params_dtype=torch.bfloat16)
    torch.manual_seed(0)
    m = Llama(s, te_linear).cuda().to(torch.bfloat16)
    t_bf16 = train(m, s, steps)
    rec = recipe.DelayedScaling()
    t_fp8 = train(m, s, steps, ctx=lambda: te.fp8_autocast(enabled=True, fp8_recipe=rec))
    return {"bf16_step_s": t_bf16, "fp8_step_s": t_fp8, "measured_speedup": t_bf16 / t_fp8}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--only", choices=("torchao", "te", "llama8b"))
    args = ap.parse_args()
    if args.only == "te":
        import transformer_engine.pytorch  # noqa: F401 - before torch loads its cuDNN
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res: dict = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                 "date": time.strftime("%Y-%m-%d"), "small_model": SMALL.__dict__}
    if args.only in (None, "torchao"):
        _torchao(res, args.steps)
    if args.only in (None, "te"):
        _te(res, args.steps)
    if args.only in (None, "llama8b"):
        _llama8b(res, out)
    name = f"speedup_validate{'_' + args.only if args.only else ''}.json"
    (out / name).write_text(json.dumps(res, indent=2, default=str))
    summary = {k: v for k, v in res.items() if "prediction" not in k or k.endswith("wall_s")}
    print(json.dumps(summary, indent=2, default=str))


def _torchao(res: dict, steps: int) -> None:
    t0 = time.perf_counter()
    pred = speedup({}, SMALL, backend="torchao", recipe="tensorwise", measure_layers=True)
    res["torchao_prediction_wall_s"] = round(time.perf_counter() - t0, 1)
    res["torchao_prediction"] = pred.to_dict()
    try:
        import torchao
        res["torchao"] = torchao.__version__
        res["torchao_measured"] = run_torchao(SMALL, steps)
        p = pred.prediction.step_speedup if pred.prediction else None
        if p:
            m = res["torchao_measured"]["measured_speedup"]
            res["torchao_predicted"] = p
            res["torchao_error_pct"] = round(100 * (p - m) / m, 1)
            if pred.unfused:
                res["torchao_predicted_unfused"] = pred.unfused.step_speedup
                res["torchao_unfused_error_pct"] = round(
                    100 * (pred.unfused.step_speedup - m) / m, 1)
    except Exception as exc:  # noqa: BLE001
        res["torchao_measured"] = {"error": f"{type(exc).__name__}: {exc}"[:500]}


def _te(res: dict, steps: int) -> None:
    try:
        import transformer_engine
        res["te"] = transformer_engine.__version__
        t0 = time.perf_counter()
        tpred = speedup({}, SMALL, backend="te", recipe="delayed")
        res["te_prediction_wall_s"] = round(time.perf_counter() - t0, 1)
        res["te_prediction"] = tpred.to_dict()
        res["te_measured"] = run_te(SMALL, steps)
        if tpred.prediction:
            m = res["te_measured"]["measured_speedup"]
            res["te_predicted"] = tpred.prediction.step_speedup
            res["te_error_pct"] = round(100 * (tpred.prediction.step_speedup - m) / m, 1)
    except Exception as exc:  # noqa: BLE001
        res["te_measured"] = {"error": f"{type(exc).__name__}: {exc}"[:500]}


def _llama8b(res: dict, out: Path) -> None:
    t0 = time.perf_counter()
    big = speedup({}, LLAMA8B, backend="torchao", recipe="tensorwise")
    res["llama8b_prediction_wall_s"] = round(time.perf_counter() - t0, 1)
    res["llama8b_prediction"] = big.to_dict()
    try:
        from preflight.speedup.render import render_text, write_chart
        print(render_text(big))
        write_chart(big, str(out / "speedup_chart.png"))
    except Exception as exc:  # noqa: BLE001
        print("chart:", exc)


if __name__ == "__main__":
    main()
