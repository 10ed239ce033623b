"""Megatron-LM: launch scripts and argument files, ``--yaml-cfg`` YAML, functional-test YAML.

Reading is in :mod:`.megatron_args` (flags by their own name: ``--fp8-format hybrid`` ->
``config.megatron.fp8_format``). This module recognises Megatron files, derives intent from
them (``_attention_and_mlp_widths`` is shared with NeMo, which runs on Megatron) and holds the
framework record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from preflight.base.versions import comparison_key
from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View, first
from preflight.frameworks.megatron_args import ENTRY, TEXT_HINTS, read_args_text, read_yaml
from preflight.frameworks.megatron_args_foreign import foreign

KIND = "megatron"
_first = first


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a Megatron YAML (--yaml-cfg or test case)."""
    top = {str(k) for k in data}
    s = 4 * len(top & {"language_model", "model_parallel", "MODEL_ARGS"})
    s += 2 * len(top & {"transformer_impl", "use_distributed_optimizer", "ENV_VARS",
                        "TEST_TYPE"})
    return s


def from_megatron(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = megatron_intent(v, f, prov)
    odd = foreign(f, v.prefix.rstrip("."))
    # a file read under a forced --kind (config.unrecognised) gets intent.py's own reason
    if odd is not None and out.get("fp8", (None,))[0] is False and \
            "config.unrecognised" not in f:
        # a precision flag Megatron-LM lacks: another program reads the line, or it never runs
        # as written; Megatron's own flags are not the whole answer (megatron_args_foreign.py)
        flag, value = odd
        out["fp8"] = (Unknown(f"{flag} {str(value)[:60]!r} is no Megatron-LM flag, and it speaks "
                              "of precision: the program this line runs may read FP8 from it "
                              "(Megatron-LM's parser would refuse it)"),
                      v.src(flag[2:].replace("-", "_")))
    return out.build()


def megatron_intent(m: View, f: Mapping[str, Any], prov: Mapping[str, str]) -> IntentOut:
    """Intent from Megatron arguments by their dest names, under ``m``'s kind (ms-swift's
    Megatron path passes the same arguments with underscores)."""
    out = IntentOut()
    out["distributed"] = ("megatron", prov.get("config.files", "config"))
    fmt_key = _first(m, "fp8_format", "fp8", "language_model.fp8")
    fmt: Any = None
    src = None
    if fmt_key is not None:
        fmt, src = m.get(fmt_key), m.src(fmt_key)
    elif m.truthy("fp8_hybrid"):                       # 23.04 / 23.06 flags
        fmt, src = "hybrid", m.src("fp8_hybrid")
    elif m.truthy("fp8_e4m3"):
        fmt, src = "e4m3", m.src("fp8_e4m3")
    fp8 = isinstance(fmt, str) and fmt.lower() in {"hybrid", "e4m3", "e5m2"}
    fp4 = isinstance(m.get("fp4_format"), str)   # --fp4-format e2m1 (core >= 0.15): NVFP4
    if fp4 and not fp8:
        src = m.src("fp4_format")
    out["fp8"] = (fp8 or fp4, src or prov.get("config.files", "config"))
    broken = next((u for u in map(m.unknown, ("fp8_format", "fp4_format")) if u), None)
    if broken is not None and not (fp8 or fp4):
        out["fp8"] = (broken, m.src("fp8_format", m.src("fp4_format")))
    impl = m.get("transformer_impl")
    if fp8 or fp4:
        if fp8:
            out["format"] = (str(fmt).lower(), src or "intent")
        if impl == "transformer_engine":
            out["backend"] = ("te", m.src("transformer_impl"))
        elif impl == "local":
            out["backend"] = ("none", m.src("transformer_impl"))
        else:
            out["backend"] = _impl_default(f, src)
        rkey = _first(m, "fp8_recipe", "language_model.fp8_recipe")
        out["recipe"] = (m.get(rkey) if rkey else "delayed",
                         m.src(rkey) if rkey else "Megatron default (delayed)")
        if rkey is None and m.unknown("fp8_recipe"):    # from a branch not decided here
            out["recipe"] = (m.unknown("fp8_recipe"), m.src("fp8_recipe"))
        if fp4:   # TE runs NVFP4 through the same autocast with an NVFP4BlockScaling recipe
            out["recipe"] = (str(m.get("fp4_recipe", "nvfp4")),
                             m.src("fp4_recipe", m.src("fp4_format")))
    _precision(m, out)
    _recompute(m, out)
    out["compile"] = (False, "Megatron does not torch.compile the model")
    if m.truthy("use_torch_fsdp2"):
        # training.py wraps the model in TorchFullyShardedDataParallel (torch fully_shard)
        # instead of Megatron's DDP (core_v0.12.0+)
        out["distributed"] = ("fsdp2", m.src("use_torch_fsdp2"))
    _widths(m, out)
    seq_key = _first(m, "seq_length", "language_model.seq_length")
    mb_key = _first(m, "micro_batch_size", "language_model.micro_batch_size")
    seq = m.int(seq_key) if seq_key else None
    mb = m.int(mb_key) if mb_key else 1
    cp_key = _first(m, "context_parallel_size", "model_parallel.context_parallel_size")
    cp = (m.int(cp_key) if cp_key else 1) or 1
    if seq and mb:
        out["shapes.tokens"] = (mb * seq // cp, m.src(seq_key))
    tp_key = _first(m, "tensor_model_parallel_size", "model_parallel.tensor_model_parallel_size")
    if tp_key and m.int(tp_key):
        out["shapes.tp"] = (m.int(tp_key), m.src(tp_key))
    if m.truthy("sequence_parallel") or m.truthy("model_parallel.sequence_parallel"):
        out["shapes.sp"] = (True, m.src("sequence_parallel"))
    _parallel_and_features(m, out, prov)
    _dynamic_shapes(m, out, seq_key, mb_key)
    gpus, nodes = m.int("nproc_per_node"), m.int("nnodes")
    if gpus:
        if m.has("nnodes") and nodes is None:
            out["num_gpus"] = (Unknown(f"--nnodes is {str(m.get('nnodes'))[:40]!r}, set at "
                                       "launch"), m.src("nnodes"))
        else:
            out["num_gpus"] = (gpus * (nodes or 1), m.src("nproc_per_node"))
    return out


def _precision(m: View, out: IntentOut) -> None:
    """--bf16 / --fp16 (Megatron's default fp32); one only an undecided branch gives: Unknown
    (frameworks/megatron_walk.py)."""
    for key, prec in (("bf16", "bf16"), ("model_parallel.bf16", "bf16"), ("fp16", "fp16"),
                      ("model_parallel.fp16", "fp16")):
        if m.truthy(key):
            out["precision"] = (prec, m.src(key))
            return
        if m.unknown(key):
            out["precision"] = (m.unknown(key), m.src(key))
            return
    out["precision"] = ("fp32", "Megatron default (fp32)")


def _dynamic_shapes(m: View, out: IntentOut, seq_key: str | None, mb_key: str | None) -> None:
    """The shared sequence and MoE facts (issue 23): Megatron-LM's GPT datasets yield samples of
    exactly --seq-length tokens (documents concatenated, gpt_dataset.py), so nothing is packed at
    run time; ms-swift's path restates ``packing`` (swift.py). MoE: --num-experts,
    --moe-router-topk (default 2), --expert-model-parallel-size (default 1), read at core_v0.12.0
    - core_v0.19.0 (megatron/training/arguments.py)."""
    if seq_key and m.int(seq_key):
        out["seq_len"] = (m.int(seq_key), m.src(seq_key))
    if mb_key and m.int(mb_key):
        out["micro_batch"] = (m.int(mb_key), m.src(mb_key))
    out["packing"] = (False, "Megatron-LM GPT datasets yield fixed --seq-length samples")
    experts = _first(m, "num_experts", "language_model.num_moe_experts")
    if experts is None or not m.int(experts):
        return
    out["moe.experts"] = (m.int(experts), m.src(experts))
    topk = _first(m, "moe_router_topk", "language_model.moe_router_topk")
    out["moe.top_k"] = ((m.int(topk), m.src(topk)) if topk and m.int(topk) else
                        (2, "Megatron default (--moe-router-topk 2)"))
    ep = _first(m, "expert_model_parallel_size", "model_parallel.expert_model_parallel_size")
    out["ep"] = ((m.int(ep), m.src(ep)) if ep and m.int(ep) else
                 (1, "Megatron default (--expert-model-parallel-size 1)"))


def _recompute(m: View, out: IntentOut) -> None:
    """Activation checkpointing and its granularity (``--recompute-*``)."""
    rc = _first(m, "recompute_granularity", "language_model.recompute_granularity")
    if rc:
        gran = str(m.get(rc)).lower()
        out["activation_checkpointing"] = (gran not in {"none", "null"}, m.src(rc))
        out["recompute_granularity"] = ("none" if gran in {"none", "null"} else gran, m.src(rc))
    elif m.truthy("recompute_activations"):
        # Megatron's arguments.py turns --recompute-activations into granularity 'selective'.
        out["activation_checkpointing"] = (True, m.src("recompute_activations"))
        out["recompute_granularity"] = ("selective", m.src("recompute_activations"))
    else:
        out["activation_checkpointing"] = (False, "no --recompute-* argument")
        out["recompute_granularity"] = ("none", "no --recompute-* argument")


def _widths(m: View, out: IntentOut) -> None:
    """Hidden and FFN sizes (Megatron's defaults when unset) and the GEMM widths."""
    hidden_key = _first(m, "hidden_size", "language_model.hidden_size")
    hidden = m.int(hidden_key) if hidden_key else None
    if hidden:
        out["shapes.hidden"] = (hidden, m.src(hidden_key))
        gated_key = _first(m, "swiglu", "language_model.gated_linear_unit")
        gated = bool(gated_key) and m.truthy(gated_key)
        ffn_key = _first(m, "ffn_hidden_size", "language_model.ffn_hidden_size")
        ffn = m.int(ffn_key) if ffn_key else None
        if ffn:
            out["shapes.ffn"] = (ffn, m.src(ffn_key))
        elif gated:
            # arguments.py validate_args: with --swiglu the default keeps the parameter count of
            # a 4h MLP spread over two projections, rounded down to a multiple of 64
            ffn = int((4 * hidden * 2 / 3) / 64) * 64
            out["shapes.ffn"] = (ffn, "Megatron default with --swiglu (8h/3, multiple of 64)")
        else:
            ffn = 4 * hidden
            out["shapes.ffn"] = (ffn, "Megatron default (4 x hidden)")
        _attention_and_mlp_widths(m, out, hidden, ffn, gated_key if gated else None,
                                  ("", "language_model."),
                                  gqa=m.truthy("group_query_attention") or
                                  m.has("language_model.num_query_groups"))


def _size(m: View, out: IntentOut, name: Stated, keys: tuple[str, ...], flag: str) -> int | None:
    """A parallel size by the first of ``keys``: the integer, 1 by Megatron's default when
    absent, ``Unknown`` when given but not an integer (set at launch: ``$TP``)."""
    key = _first(m, *keys)
    unknown = next((m.unknown(k) for k in keys if m.unknown(k)), None)
    if key is None and unknown is not None:     # decided at run time, or by a branch
        out[name] = (unknown, m.src(keys[0]))
        return None
    if key is None:
        out[name] = (1, f"Megatron default ({flag} 1)")
        return 1
    value = m.int(key)
    if value is None:
        out[name] = (Unknown(f"{flag} is {str(m.get(key))[:40]!r}, set at launch"), m.src(key))
        return None
    out[name] = (value, m.src(key))
    return value


def _parallel_and_features(m: View, out: IntentOut, prov: Mapping[str, str]) -> None:
    """Parallel sizes and FP8 features (issue 16), by Megatron's own argument names.

    Flags read at core_v0.12.0 - core_v0.19.0 (megatron/training/arguments.py): validate_args
    turns --sequence-parallel off when TP is 1; --cuda-graph-impl (none | local |
    transformer_engine) supersedes --enable-cuda-graph / --external-cuda-graph. FP8 attention
    (TransformerConfig.fp8_dot_product_attention / fp8_multi_head_attention) has no flag: the
    generated arguments exclude it (core_v0.16.0+), so only a --yaml-cfg can set it."""
    tp = _size(m, out, "tp", ("tensor_model_parallel_size",
                               "model_parallel.tensor_model_parallel_size"),
               "--tensor-model-parallel-size")
    _size(m, out, "cp", ("context_parallel_size", "model_parallel.context_parallel_size"),
          "--context-parallel-size")
    sp_key = _first(m, "sequence_parallel", "model_parallel.sequence_parallel")
    if sp_key is None and m.unknown("sequence_parallel"):
        out["sequence_parallel"] = (m.unknown("sequence_parallel"), m.src("sequence_parallel"))
    elif sp_key is None:
        out["sequence_parallel"] = (False, "Megatron default (no --sequence-parallel)")
    elif tp == 1:
        out["sequence_parallel"] = (False, m.src("tensor_model_parallel_size",
                                                 "Megatron turns sequence parallel off at TP 1"))
    elif tp is None:
        out["sequence_parallel"] = (Unknown("--sequence-parallel is set, but Megatron turns it "
                                            "off when TP is 1 and TP is set at launch"),
                                    m.src(sp_key))
    else:
        out["sequence_parallel"] = (m.truthy(sp_key), m.src(sp_key))
    att = _first(m, "fp8_dot_product_attention", "fp8_multi_head_attention",
                 "language_model.fp8_dot_product_attention",
                 "language_model.fp8_multi_head_attention")
    if att is not None:
        on = any(m.truthy(k) for k in ("fp8_dot_product_attention", "fp8_multi_head_attention",
                                       "language_model.fp8_dot_product_attention",
                                       "language_model.fp8_multi_head_attention"))
        out["fp8_attention"] = (on, m.src(att))
    else:
        out["fp8_attention"] = (False, "Megatron default (TransformerConfig "
                                       "fp8_dot_product_attention False; no flag sets it)")
    impl = m.get("cuda_graph_impl")
    graphs = [k for k in ("enable_cuda_graph", "external_cuda_graph") if m.truthy(k)]
    if isinstance(impl, str) and impl.strip().lower() in {"local", "transformer_engine",
                                                     "full_iteration"}:
        out["cuda_graphs"] = (True, m.src("cuda_graph_impl"))
    elif graphs:
        out["cuda_graphs"] = (True, m.src(graphs[0]))
    elif impl is not None and not (isinstance(impl, str) and impl.strip().lower() == "none"):
        out["cuda_graphs"] = (Unknown(f"--cuda-graph-impl is {str(impl)[:40]!r}"),
                              m.src("cuda_graph_impl"))
    else:
        out["cuda_graphs"] = (False, m.src("cuda_graph_impl", "Megatron default (no CUDA "
                                                             "graphs)"))
    flags: tuple[tuple[Stated, str, str], ...] = (
        ("fp8_params", "fp8_param_gather", "--fp8-param-gather"),
        ("tp_comm_overlap", "tp_comm_overlap", "--tp-comm-overlap"))
    for name, key, flag in flags:
        out[name] = ((True, m.src(key)) if m.truthy(key) else
                     (m.unknown(key), m.src(key)) if m.unknown(key) else
                     (False, m.src(key, f"Megatron default (no {flag})")))


_CORE_0_6 = Version("0.6.0")   # --transformer-impl defaults to transformer_engine from here


def _impl_default(f: Mapping[str, Any], src: str | None) -> tuple[Any, str]:
    """The backend ``--transformer-impl`` defaults to, by the megatron-core installed here.

    megatron/training/arguments.py: ``default='local'`` at core_v0.5.0, ``'transformer_engine'``
    from core_v0.6.0 (issue 14: one job left the backend unknown, its explicit twin fired)."""
    version = f.get("pkg.megatron-core.version")
    key = comparison_key(version) if isinstance(version, str) else None
    if key is None:
        why = ("not installed here" if version is None else
               str(version.reason) if isinstance(version, Unknown) else f"{version!r}")
        return (Unknown("--transformer-impl not given: Megatron's default is local before core "
                        f"0.6.0 and transformer_engine from 0.6.0, and megatron-core is {why} "
                        "(run on the training node, or --assume pkg.megatron-core=V)"),
                src or "intent")
    if key >= _CORE_0_6:
        return "te", f"megatron-core {version} default (--transformer-impl transformer_engine)"
    return "none", f"megatron-core {version} default (--transformer-impl local)"


def _attention_and_mlp_widths(v: View, out: IntentOut, hidden: int, ffn: int, gated_key: str | None,
                              roots: tuple[str, ...], gqa: bool) -> None:
    """Full (unsharded) output widths of the QKV and FC1 GEMMs, for ``intent.shapes.gemms``.

    megatron/core/transformer/attention.py: QKV has ``kv_channels * (heads + 2 * groups)``
    outputs (``kv_channels`` defaults to hidden / heads; groups = heads without grouped-query
    attention), and the output projection takes ``kv_channels * heads`` inputs. mlp.py doubles
    FC1's outputs for a gated linear unit (``--swiglu``)."""
    heads_key = _first(v, *(r + "num_attention_heads" for r in roots))
    heads = v.int(heads_key) if heads_key else None
    if heads and heads > 0:
        groups_key = _first(v, *(r + "num_query_groups" for r in roots)) if gqa else None
        groups = (v.int(groups_key) if groups_key else None) or heads
        kv_key = _first(v, *(r + "kv_channels" for r in roots))
        kv = (v.int(kv_key) if kv_key else None) or hidden // heads
        src = v.src(groups_key or heads_key)
        out["shapes.qkv_out"] = (kv * (heads + 2 * groups), src)
        out["shapes.proj_in"] = (kv * heads, v.src(kv_key or heads_key))
    if gated_key:
        out["shapes.fc1_out"] = (2 * ffn, v.src(gated_key))



FRAMEWORK = Framework(
    kind=KIND, title="Megatron-LM / megatron-core", formats=("text", "yaml"), score=score,
    read=read_yaml, derive=from_megatron, precedence=7,
    distributions=("megatron-core",), from_source=True, rule_area="MEG", area_title="Megatron",
    launch=Launch(read_args_text, flags=TEXT_HINTS, entry=ENTRY, heredoc_values=True),
    shape_keys=(("heads", ("num_attention_heads",)), ("kv_heads", ("num_query_groups",)),
                ("layers", ("num_layers",)), ("vocab", ("vocab_size",)),
                ("seq", ("seq_length",)), ("micro_batch", ("micro_batch_size",)),
                ("tp", ("tensor_model_parallel_size",)), ("gated", ("swiglu",))),
    references=(
        Reference("--yaml-cfg", "megatron",
                  "opened relative to the launch directory; its values replace the command "
                  "line's (megatron/training/arguments.py load_yaml)"),
    ),
    defaults=(
        Default("--transformer-impl", "local before core 0.6.0, transformer_engine from 0.6.0",
                "megatron-core (the version installed where the check runs)",
                "megatron/training/arguments.py at core_v0.5.0 and core_v0.6.0"),
        Default("--fp8-recipe", "delayed", "all", "megatron/training/arguments.py"),
        Default("--bf16 / --fp16", "fp32", "all", "megatron/training/arguments.py"),
    ),
)
