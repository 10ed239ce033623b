"""The speed-up to expect from FP8 for *this* model: its shapes, every distinct GEMM of a training
step, and the arithmetic that turns timed GEMMs into a predicted step speed-up.

A transformer layer's linear layers (QKV, attention output, FC1 (gate+up for a gated MLP), FC2)
each run three GEMMs per training step: forward ``Y = X W^T`` ([T, in] x [in, out]), the input
gradient ``dX = dY W`` ([T, out] x [out, in]) and the weight gradient ``dW = dY^T X``
([out, T] x [T, in]), T being the tokens per micro-batch per rank. In FP8 each of X, W and dY is
also cast (amax, scale, cast, and a transposed copy for the GEMMs that need it), which is what
makes FP8 lose at small shapes. Timing (GPU, in a child) is in :mod:`.child`; combining the
times into a prediction is :func:`predict`; shapes come from :mod:`.shapes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASSES = ("fwd", "dgrad", "wgrad")


@dataclass(frozen=True)
class ModelShape:
    """What the prediction needs to know about the model and the micro-batch, per rank."""

    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    layers: int | None          # None: the per-layer prediction only (head/optimizer left out)
    vocab: int | None
    seq: int
    micro_batch: int
    gated: bool = True          # SwiGLU-style MLP: FC1 has 2 x ffn outputs
    tp: int = 1                 # tensor parallel: linears are split across ranks
    source: tuple[str, ...] = ()  # where each value came from ("hidden=4096 from config.json:3")
    model_type: str | None = None  # the HF model_type, when a config or known model gives it
    tied: bool = False          # LM head tied to the embedding (tie_word_embeddings)
    # The HF config document itself (the trial builds the framework's class from it); not
    # printed, not compared.
    hf_config: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def tokens(self) -> int:
        return self.seq * self.micro_batch

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


@dataclass(frozen=True)
class Linear:
    """One distinct linear layer of a transformer block, per rank."""

    name: str
    d_in: int
    d_out: int
    count: int                  # per training step (layers)

    def gemms(self, tokens: int) -> list[tuple[str, int, int, int]]:
        """(pass, M, K, N) of its three GEMMs."""
        return [("fwd", tokens, self.d_in, self.d_out),
                ("dgrad", tokens, self.d_out, self.d_in),
                ("wgrad", self.d_out, tokens, self.d_in)]


def linears(shape: ModelShape) -> list[Linear]:
    """The block's linear layers per rank (column-parallel split of out, row-parallel of in)."""
    layers = shape.layers or 1
    kv = shape.head_dim * shape.kv_heads
    tp = max(shape.tp, 1)
    fc1 = (2 if shape.gated else 1) * shape.ffn
    return [Linear("qkv", shape.hidden, (shape.hidden + 2 * kv) // tp, layers),
            Linear("attn_out", shape.hidden // tp, shape.hidden, layers),
            Linear("fc1", shape.hidden, fc1 // tp, layers),
            Linear("fc2", shape.ffn // tp, shape.hidden, layers)]


def gemm_table(shape: ModelShape) -> list[dict[str, Any]]:
    """Every distinct GEMM of a training step with its count (what the report lists)."""
    rows = []
    for lin in linears(shape):
        for pas, m, k, n in lin.gemms(shape.tokens):
            rows.append({"linear": lin.name, "gemm": pas, "m": m, "k": k, "n": n,
                         "count": lin.count, "gflop": round(2 * m * k * n / 1e9, 2)})
    return rows


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one linear's training triple, BF16 and FP8 (casts included)."""

    linear: str
    bf16_s: float
    fp8_s: float
    fp8_gemm_s: float           # of fp8_s: the three FP8 GEMMs alone
    cast_s: float               # of fp8_s: amax + scale + cast (+ transposed copy) of X, W, dY


@dataclass(frozen=True)
class Prediction:
    """The predicted speed-ups and what they rest on."""

    linear_speedup: float                    # Σ BF16 linear time / Σ FP8 linear time
    step_speedup: float                      # the same with the untimed rest added to both
    per_linear: dict[str, float]
    other_s: float                           # attention, norms, optimizer ... (estimated)
    linear_bf16_s: float
    linear_fp8_s: float
    verdict: str
    notes: tuple[str, ...] = field(default_factory=tuple)


NOT_WORTH = 1.05
"""Below this predicted step speed-up FP8 does not pay for its numerical risk and extra
moving parts (the verdict says so)."""


TRIAL_ERROR = 0.05
"""How far the trial's step speed-up may land from real training: 11 of the 12 cells of the
validation table within +-5% (H200, 2026-11-27, docs/gpu-results.md; the twelfth +6.9%). A trial
result this close to :data:`NOT_WORTH` says so instead of picking a side: Qwen2.5-7B rowwise
measured 1.040x (will not pay) where the trial said 1.051x (should pay)."""

HOST_BOUND_ERROR = 0.15
"""How far the trial may land from real training when the host limits its FP8 step (the GPU
idles between an eager FP8 model's small kernels: speedup/gpubusy.py). Such a step follows the
host's speed and load, not the GPU's: the 1B TE eager cell's real speed-up moved 12% between runs
of one call, and the trial landed +7.0%, +7.4%, +13.0%, -12.9% (H200), +14.4% and -7.7% (H100)
from the real runs' median (docs/gpu-results.md, 2026-11-27 and 2026-11-28). No trial of a few
seconds predicts that within +-5%; the verdict states the wider range instead."""


def speedup_range(step: float, error: float) -> tuple[float, float]:
    """Where the real speed-up lies for a result ``step`` that is within ``error`` of it."""
    return step / (1 + error), step / (1 - error)


def at_the_line(step: float, error: float | None) -> bool:
    """Whether ``step``, give or take ``error``, could be on either side of :data:`NOT_WORTH`
    (below 1.0x too: 0.97x +-15% may well pay)."""
    if not error:
        return False
    lo, hi = speedup_range(step, error)
    return lo <= NOT_WORTH <= hi


def verdict_kind(step: float, error: float | None = None) -> str:
    """What the verdict for ``step`` (give or take ``error``) says: ``at the line``, ``slower``
    (even its range's top is under 1.0x), ``not worth`` (under :data:`NOT_WORTH`) or ``pays``."""
    if at_the_line(step, error):
        return "at the line"
    top = speedup_range(step, error)[1] if error else step
    if top < 1.0:
        return "slower"
    return "not worth" if step < NOT_WORTH else "pays"


def pays(step: float, error: float | None = None) -> bool:
    """Whether the verdict for ``step`` (give or take ``error``) says FP8 should pay: the exit
    code of ``speedup`` follows it (0 pays, 1 not)."""
    return verdict_kind(step, error) == "pays"


def verdict_for(step: float, linear: float | None = None, error: float | None = None,
                why: str = "the trial's") -> str:
    """The verdict line for a step speed-up (modelled or measured); ``error``: how far the
    number may be from the truth (the trial's :data:`TRIAL_ERROR`, or :data:`HOST_BOUND_ERROR`
    with ``why`` saying the host limits the step), which hedges a result at the line between
    paying and not, and one under 1.0x whose range reaches above it."""
    kind = verdict_kind(step, error)
    lo, hi = speedup_range(step, error) if error else (step, step)
    if kind == "at the line":
        return (f"FP8 is at the line here: about {step:.2f}x per training step, which with "
                f"{why} +-{error:.0%} is anywhere from {lo:.2f}x to {hi:.2f}x, around the "
                f"{NOT_WORTH:.2f}x it takes to pay: it will not pay reliably. Grow the micro-batch "
                "/ sequence, or stay in BF16.")
    if kind == "slower":
        return (f"FP8 will be slower than BF16 at these shapes (step {step:.2f}x): the casts "
                "cost more than the faster GEMMs save. Stay in BF16, or grow the "
                "micro-batch / sequence.")
    if kind == "not worth":
        spread = (f", anywhere from {lo:.2f}x to {hi:.2f}x with {why} +-{error:.0%}"
                  if error and step < 1.0 else "")
        return (f"FP8 will not pay at these shapes (step {step:.2f}x{spread}, under "
                f"{NOT_WORTH:.2f}x): not worth its numerical risk.")
    on_linears = f" ({linear:.2f}x on the linears)" if linear else ""
    return f"FP8 should pay: about {step:.2f}x per training step{on_linears}."


def shape_dict(shape: ModelShape) -> dict[str, Any]:
    """The shape as JSON for reports and requests, without the HF config document."""
    from dataclasses import asdict

    doc = asdict(shape)
    doc.pop("hf_config", None)
    return doc


def predict(shape: ModelShape, timings: list[Timing], other_s: float,
            notes: tuple[str, ...] = ()) -> Prediction:
    """Combine per-linear timings (per layer) and the estimated rest of the step."""
    count = {lin.name: lin.count for lin in linears(shape)}
    bf16 = sum(t.bf16_s * count[t.linear] for t in timings)
    fp8 = sum(t.fp8_s * count[t.linear] for t in timings)
    lin = bf16 / fp8 if fp8 > 0 else 0.0
    step = (bf16 + other_s) / (fp8 + other_s) if fp8 + other_s > 0 else 0.0
    per = {t.linear: round(t.bf16_s / t.fp8_s, 3) if t.fp8_s > 0 else 0.0 for t in timings}
    return Prediction(round(lin, 3), round(step, 3), per, other_s, bf16, fp8,
                      verdict_for(step, lin), notes)


def table_lines(head: list[str], rows: list[list[str]], md: bool) -> list[str]:
    """A table of ``rows`` under ``head``: Markdown, or columns padded to their widest cell."""
    if md:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                *("| " + " | ".join(r) + " |" for r in rows)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    return ["  ".join(h.ljust(w) for h, w in zip(head, widths)),
            *("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)]
