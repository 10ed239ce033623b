"""The model a plain PyTorch script builds from Transformer Engine modules: the GEMM sizes of its
``te.Linear`` / ``LayerNormLinear`` / ``LayerNormMLP`` / ``GroupedLinear`` / ``TransformerLayer``
/ ``MultiheadAttention`` constructions (``config.pytorch.te.gemm_in`` / ``gemm_out``), and whether
the files read build any TE module at all (``intent.te_modules``; ``config.pytorch.model_loaded``
names a call that may bring the model from elsewhere).

Why sizes: TE checks every FP8 GEMM's input and weight before it runs
(``check_dim_for_fp8_exec`` / ``assert_dim_for_fp8_exec``, transformer_engine/pytorch/utils.py at
v1.13 and v2.18): the weight ``[out_features, in_features]`` needs ``in % 16`` and ``out % 8``
(TransformerEngine issue 1422: ``te.Linear(712, 896)`` fails with ``dims=[896, 712]``); MXFP8
scales blocks of 32 along both. A size that is no literal (``te.Linear(cfg.hidden, ...)``) or a
module built under a condition the text does not decide is Unknown, and a conclusion is drawn
only where the known sizes already decide it.

Why "builds TE modules": ``te.fp8_autocast`` / ``te.autocast`` changes only what TE modules
compute (TE v2.18 docs, "Using FP8 with Transformer Engine": "only the modules of Transformer
Engine are affected by the autocast"); a model of ``torch.nn.Linear`` under it runs in BF16/FP32
(holdout19 gpt2scratch). ``none`` needs every model the script runs to be built in the files read:
a model loaded from elsewhere (``from_pretrained``, ``torch.load``) or a TE class passed around as
a value leaves it Unknown.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, View
from preflight.reading.pyfacts import PyOut
from preflight.reading.pymodelrows import gemm_rows
from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Call, dotted

# Positional order of the size arguments (TE v2.18 transformer_engine/pytorch/module/*.py,
# transformer.py, attention/multi_head_attention.py): name -> ((in-size args), (out-size args)).
# TransformerLayer / LayerNormMLP: QKV and FC1 take the hidden size, FC2 the FFN size, and their
# outputs are 3h, h and the FFN size (3h has the power of two of h).
_SIZES: dict[str, tuple[tuple[tuple[int, str], ...], tuple[tuple[int, str], ...]]] = {
    "Linear": (((0, "in_features"),), ((1, "out_features"),)),
    "LayerNormLinear": (((0, "in_features"),), ((1, "out_features"),)),
    "GroupedLinear": (((1, "in_features"),), ((2, "out_features"),)),
    "LayerNormMLP": (((0, "hidden_size"), (1, "ffn_hidden_size")),
                     ((0, "hidden_size"), (1, "ffn_hidden_size"))),
    "TransformerLayer": (((0, "hidden_size"), (1, "ffn_hidden_size")),
                         ((0, "hidden_size"), (1, "ffn_hidden_size"))),
    "MultiheadAttention": (((0, "hidden_size"),), ((0, "hidden_size"),)),
}
# Calls that bring a model from outside the files read: what it is built of is not in the text.
# torch.load is one only with weights_only=False (the default is True from torch 2.6, which loads
# tensors and containers, never a module: torch v2.6.0 serialization.py).
_LOADS = frozenset({"from_pretrained", "from_config", "jit.load", "hub.load"})
# Packages whose calls may build or swap in TE modules the script never names: accelerate's and
# Lightning's FP8 paths replace torch.nn.Linear with te.Linear (accelerate v1.10.0
# utils/transformer_engine.py convert_model; lightning v2.5.0 plugins/precision/transformer_engine.py),
# Megatron-core / NeMo / llm-foundry models are built of TE layers.
_TE_BUILDERS = ("accelerate.", "lightning.", "pytorch_lightning.", "megatron.", "nemo.",
                "llmfoundry.", "composer.", "torchtitan.")
_MAX_DIM = 1 << 31


def _size(call: Call, pos: int, key: str) -> int | None:
    value = call.args[pos] if pos < len(call.args) else call.value(key)
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value < _MAX_DIM
    return value if ok else None


def gemm_sizes(out: PyOut, prefix: str, built: Iterable[tuple[Call, str]]) -> None:
    """``prefix.te.gemm_in`` / ``gemm_out``: the sorted distinct sizes of every TE module the
    files construct, or Unknown naming the first construction whose sizes the text does not give
    (a known misaligned size still decides: :func:`dims_align`)."""
    ins: set[int] = set()
    outs: set[int] = set()
    unknown: str | None = None
    first = None
    for call, name in built:
        first = first or call
        spec = _SIZES.get(name)
        if spec is None:
            continue
        got_in = [_size(call, p, k) for p, k in spec[0]]
        got_out = [_size(call, p, k) for p, k in spec[1]]
        if call.when is not None or None in got_in or None in got_out:
            unknown = unknown or (f"te.{name} at line {call.line} is built with sizes the text "
                                  "does not give" if call.when is None else
                                  f"te.{name} at line {call.line} is built only when "
                                  f"{call.when.reason}")
            got_in, got_out = [], []
        ins.update(v for v in got_in if v is not None)
        outs.update(v for v in got_out if v is not None)
    if first is None:
        return
    rows = gemm_rows(out.module.tree, out.module.imports)
    if rows.value is not None:      # the input's literal shape: TE issue 1571 (pymodelrows)
        out.put(f"{prefix}.te.gemm_rows", rows.value, rows.line)
    line = first.line if not unknown else None
    if unknown:
        out.put(f"{prefix}.te.gemm_unknown", unknown, None)
    if ins:
        out.put(f"{prefix}.te.gemm_in", sorted(ins), line)
        out.put(f"{prefix}.te.gemm_out", sorted(outs), line)


# TE classes that build GEMM modules (te.ops.Sequential / BasicLinear: the fusible-ops API).
_TE_CLASSES = frozenset(_SIZES) | {"DotProductAttention", "Sequential", "BasicLinear"}


def te_refs(module: Module, limit: int = 100_000) -> set[str]:
    """TE module classes the file names anywhere, called or not (``te.Linear(...)`` in a method,
    ``default=te.TransformerLayer`` passed around, ``class MyLinear(TELinear)``): a name resolved
    through the file's imports (any scope) to ``transformer_engine.*.<class>``; the first
    ``limit`` nodes of the tree."""
    found: set[str] = set()
    for count, node in enumerate(ast.walk(module.tree)):
        if count >= limit:
            break
        if isinstance(node, ast.Attribute) and node.attr in _TE_CLASSES:
            parts = (dotted(node) or "").split(".")
            qualified = ".".join([module.imports.get(parts[0], parts[0]), *parts[1:]])
        elif isinstance(node, ast.Name) and node.id in module.imports:
            qualified = module.imports[node.id]
        else:
            continue
        name = qualified.rsplit(".", 1)[-1] if isinstance(node, ast.Name) else node.attr
        if qualified.split(".")[0] == "transformer_engine" and name in _TE_CLASSES:
            found.add(name)
    return found


def model_loaded(out: PyOut, prefix: str, calls: Iterable[Call]) -> None:
    """``prefix.model_loaded``: the first call of the file that may load or build the model's
    layers outside the files read (a file of the job that calls none says nothing; the first
    file's value wins, which is all :func:`te_modules` needs: whether any file has one)."""
    for call in calls:
        loads = call.name in _LOADS or call.func.endswith(tuple(f".{n}" for n in _LOADS)) or (
            call.func == "torch.load" and call.value("weights_only", True) is not True)
        if loads or call.func.startswith(_TE_BUILDERS):
            out.put(f"{prefix}.model_loaded", call.func.removeprefix("__main__."), call.line)
            return


def te_modules(p: View, out: IntentOut) -> None:
    """``te_modules`` where a TE autocast is opened: "yes" where a file read builds a TE module,
    "none" where none does and no model comes from outside the files read, else Unknown."""
    if not p.has("te.autocast.enabled"):
        return
    if p.has("te.modules"):
        out["te_modules"] = ("yes", p.src("te.modules"))
    elif p.has("model_loaded"):
        out["te_modules"] = (Unknown(
            f"{p.get('model_loaded')}() at {p.src('model_loaded')} may load or build the "
            "model's layers, which the files read do not give"), p.src("model_loaded"))
    else:
        out["te_modules"] = ("none", p.src("te.autocast.enabled"))


def _align(n: int) -> int:
    return min(n & -n, 128)


def dims_align(p: View, out: IntentOut, recipe: Any) -> None:
    """``shapes.dims_align`` from the TE modules' sizes: the in-sizes' power of two, and the
    out-sizes' doubled (they need 8 where in-sizes need 16), except under MXFP8 (32 both ways).
    With a module of unknown sizes, only a value under 16 is conclusive. The rows of the tensor
    a script feeds the modules (:mod:`preflight.reading.pymodelrows`) are ``shapes.tokens``,
    where no framework earlier in order gives micro-batch x sequence."""
    rows = p.get("te.gemm_rows")
    if (isinstance(rows, int) and not isinstance(rows, bool) and rows > 0) or \
            p.unknown("te.gemm_rows"):
        out["shapes.tokens"] = (p.unknown("te.gemm_rows") or rows, p.src("te.gemm_rows"))
    ins, outs = p.get("te.gemm_in"), p.get("te.gemm_out")
    if not (isinstance(ins, list) and isinstance(outs, list) and ins and outs):
        return
    if not all(isinstance(v, int) for v in ins + outs):
        return
    a, b = _align(math.gcd(*ins)), _align(math.gcd(*outs))
    value = min(a, b) if recipe == "mxfp8" else min(a, 2 * b, 128)
    reason = p.get("te.gemm_unknown")
    src = p.src("te.gemm_in")
    if isinstance(reason, str) and value >= 16:
        out["shapes.modules_align"] = (Unknown(reason), src)
    else:
        out["shapes.modules_align"] = (value, src)


def fp8_attention(p: View, out: IntentOut) -> None:
    """TE attention runs in FP8 when the autocast's recipe object sets ``fp8_dpa=True`` or
    ``fp8_mha=True`` (DotProductAttention.forward forces fp8_dpa on when fp8_mha is set: TE v2.6
    transformer_engine/pytorch/attention/dot_product_attention/dot_product_attention.py
    l.648-655). A value the script does not decide is Unknown; neither keyword leaves the fact
    to the defaults (the recipe may be changed after it is built)."""
    keys = [f"te.autocast.recipe_args.{k}" for k in ("fp8_dpa", "fp8_mha")
            if p.has(f"te.autocast.recipe_args.{k}")]
    on = [k for k in keys if p.get(k) is True]
    if on:
        out["fp8_attention"] = (True, p.src(on[0]))
        return
    undecided = [k for k in keys if p.unknown(k) is not None or
                 not isinstance(p.get(k), bool)]
    if undecided:
        out["fp8_attention"] = (p.unknown(undecided[0]) or Unknown(
            f"{undecided[0].rsplit('.', 1)[1]}={p.get(undecided[0])!r} in the recipe"),
            p.src(undecided[0]))
