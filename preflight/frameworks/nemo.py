"""NeMo 1.x: Hydra/OmegaConf model YAML (``${model.x}`` / ``${.x}`` resolved as OmegaConf would).

NeMo ignores every ``model.fp8*`` key unless ``model.transformer_engine`` is true (NeMo docs,
``features/mixed_precision.rst``), so that framework cancels its own FP8 request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import LIT_PRECISION, Derived, IntentOut, Stated, View
from preflight.frameworks.megatron import _attention_and_mlp_widths
from preflight.frameworks.nemo_hydra import PY_HINT, read_python
from preflight.reading.interpolate import resolve
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ReaderOutput

KIND = "nemo"


def nemo_model_keys(model: Any) -> int:
    """How many NeMo-only keys a ``model:`` mapping has (Lightning's score subtracts them)."""
    keys = {str(k) for k in model} if isinstance(model, dict) else set()
    return len(keys & {"transformer_engine", "fp8", "fp8_hybrid", "fp8_e4m3",
                       "megatron_amp_O2", "mcore_gpt", "encoder_seq_length",
                       "tensor_model_parallel_size", "nemo_version"})


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a NeMo 1.x model YAML."""
    s = 4 * nemo_model_keys(data.get("model"))
    if isinstance(data.get("trainer"), dict) and "exp_manager" in data:
        s += 3
    if str(data.get("name", "")).startswith("megatron"):
        s += 3
    return s


def read_nemo(path: str, parsed: Parsed) -> ReaderOutput:
    """NeMo 1.x: Hydra/OmegaConf YAML, so ``${model.x}`` / ``${.x}`` are resolved first."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(resolve(data, parsed.line_of), parsed, "config.nemo", path)
    return ReaderOutput(facts, prov)



def from_nemo(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    n = View(f, "nemo", prov)
    out = IntentOut()
    out["distributed"] = ("megatron", n.src("model", "NeMo runs on Megatron"))
    broken = n.unknown("compose")       # a Hydra app's config not composed (nemo_hydra.py)
    if broken is not None:
        out["fp8"] = (broken, n.src("compose"))
        return out.build()
    fp8 = n.truthy("model.fp8")
    raw = n.get("model.fp8")
    if n.unknown("model.fp8") is not None:      # ${oc.env:FP8} the launch does not decide
        out["fp8"] = (n.unknown("model.fp8"), n.src("model.fp8"))
    elif isinstance(raw, str) and raw.strip().lower() not in {"true", "false", "1", "0", "yes",
                                                           "no", ""}:
        # NeMo 1.x takes a bool (`fp8: e4m3` is another framework's key, e.g. Megatron-Bridge's,
        # read with --kind nemo): a non-empty string would be truthy there, so "no" is a guess
        out["fp8"] = (Unknown(f"model.fp8 is {raw[:40]!r}, not the true/false NeMo 1.x takes"),
                      n.src("model.fp8"))
    elif fp8:
        out["fp8"] = (True, n.src("model.fp8"))
        # NeMo docs: "If this argument [transformer_engine] is not set to True, all subsequent
        # arguments will be ignored." (docs/source/features/mixed_precision.rst)
        te = n.unknown("model.transformer_engine")
        if te is not None:
            out["fp8"] = (Unknown(f"model.fp8 is on, but NeMo ignores it unless "
                                  f"model.transformer_engine is true: {te.reason}"),
                          n.src("model.transformer_engine"))
        elif not n.truthy("model.transformer_engine"):
            out.overrides_fp8 = (True, n.src("model.transformer_engine",
                                                "model.transformer_engine not set"))
        out["backend"] = ("te", n.src("model.transformer_engine", n.src("model.fp8")))
        out["recipe"] = ("delayed", n.src("model.fp8"))
        # NeMo checks fp8_e4m3 before fp8_hybrid on both code paths (FP8D-NEMO-0002), so E4M3
        # wins when both are set.
        e4 = n.truthy("model.fp8_e4m3")
        key = "model.fp8_e4m3" if e4 else "model.fp8_hybrid"
        shaky = n.unknown("model.fp8_e4m3") or (None if e4 else n.unknown("model.fp8_hybrid"))
        out["format"] = (shaky if shaky is not None else "e4m3" if e4 else "hybrid",
                         n.src(key, n.src("model.fp8")))
    else:
        out["fp8"] = (False, n.src("model.fp8", "model.fp8 not set"))
    prec = n.get("trainer.precision")
    if prec is not None:
        out["precision"] = (LIT_PRECISION.get(str(prec), Unknown(f"trainer.precision {prec!r}")),
                            n.src("trainer.precision"))
    gran = n.get("model.activations_checkpoint_granularity")
    meth = n.get("model.activations_checkpoint_method")
    ac_src = n.src("model.activations_checkpoint_granularity",
                   n.src("model.activations_checkpoint_method", "no activations_checkpoint_*"))
    out["activation_checkpointing"] = (gran is not None or meth is not None, ac_src)
    if gran is not None:
        out["recompute_granularity"] = (str(gran).lower(), ac_src)
    elif meth is None:
        out["recompute_granularity"] = ("none", ac_src)
    out["compile"] = (False, "NeMo 1.x does not torch.compile the model")
    hidden = n.int("model.hidden_size")
    if hidden:
        out["shapes.hidden"] = (hidden, n.src("model.hidden_size"))
        ffn = n.int("model.ffn_hidden_size")
        out["shapes.ffn"] = ((ffn, n.src("model.ffn_hidden_size")) if ffn
                             else (4 * hidden, "NeMo default (4 x hidden)"))
        # NeMo's activation names a gated unit by "glu" (swiglu, fast-geglu, reglu ...)
        gated = "glu" in str(n.get("model.activation", "")).lower()
        _attention_and_mlp_widths(n, out, hidden, ffn or 4 * hidden,
                                  "model.activation" if gated else None, ("model.",), gqa=True)
    seq, mb = n.int("model.encoder_seq_length"), n.int("model.micro_batch_size")
    cp = n.int("model.context_parallel_size") or 1
    if seq and mb:
        out["shapes.tokens"] = (seq * mb // cp, n.src("model.micro_batch_size"))
    _dynamic_shapes(n, out, seq, mb)
    if n.truthy("model.sequence_parallel"):
        out["shapes.sp"] = (True, n.src("model.sequence_parallel"))
    if n.int("model.tensor_model_parallel_size"):
        out["shapes.tp"] = (n.int("model.tensor_model_parallel_size"),
                            n.src("model.tensor_model_parallel_size"))
    _parallel_and_features(n, out)
    devices, nodes = n.int("trainer.devices"), n.int("trainer.num_nodes")
    if devices:
        out["num_gpus"] = (devices * (nodes or 1), n.src("trainer.devices"))
    return out.build()


def _dynamic_shapes(n: View, out: IntentOut, seq: int | None, mb: int | None) -> None:
    """The shared sequence and MoE facts (issue 23): ``model.data.train_ds.packed_sequence``
    (SFT on packed .npy data), ``model.num_moe_experts`` / ``moe_router_topk`` /
    ``expert_model_parallel_size`` (TransformerConfig fields copied by name)."""
    if seq:
        out["seq_len"] = (seq, n.src("model.encoder_seq_length"))
    if mb:
        out["micro_batch"] = (mb, n.src("model.micro_batch_size"))
    if n.has("model.data.train_ds.packed_sequence"):
        out["packing"] = (n.truthy("model.data.train_ds.packed_sequence"),
                          n.src("model.data.train_ds.packed_sequence"))
    experts = n.int("model.num_moe_experts")
    if experts:
        out["moe.experts"] = (experts, n.src("model.num_moe_experts"))
        if n.int("model.moe_router_topk"):
            out["moe.top_k"] = (n.int("model.moe_router_topk"), n.src("model.moe_router_topk"))
        out["ep"] = ((n.int("model.expert_model_parallel_size"),
                      n.src("model.expert_model_parallel_size"))
                     if n.int("model.expert_model_parallel_size") else
                     (1, "NeMo default (expert_model_parallel_size 1)"))


def _parallel_and_features(n: View, out: IntentOut) -> None:
    """Parallel sizes and FP8 features (issue 16) from ``model.*``.

    NeMo v2.1.0 megatron_base_model.py: every TransformerConfig field named in ``model`` is
    copied by name (build_transformer_config), so ``fp8_dot_product_attention`` /
    ``fp8_multi_head_attention`` reach Transformer Engine; ``sequence_parallel`` is turned off
    at TP 1; ``fp8_params`` is the FP8 param gather; ``ub_tp_comm_overlap`` the TP overlap;
    ``enable_cuda_graph`` the CUDA graphs (megatron_gpt_model.py)."""
    sizes: dict[str, int | None] = {}
    parallel: tuple[tuple[Stated, str], ...] = (("tp", "model.tensor_model_parallel_size"),
                                                ("cp", "model.context_parallel_size"))
    for name, key in parallel:
        value = n.int(key)
        sizes[name] = value if n.has(key) else 1
        if not n.has(key) or n.get(key) is None:
            out[name] = (1, f"NeMo default ({key.removeprefix('model.')} 1)")
            sizes[name] = 1
        elif value is None:
            out[name] = (Unknown(f"{key} is {str(n.get(key))[:40]!r}"), n.src(key))
        else:
            out[name] = (value, n.src(key))
    sp = n.truthy("model.sequence_parallel")
    if sp and sizes["tp"] is None:
        out["sequence_parallel"] = (Unknown("sequence_parallel is set but NeMo turns it off at "
                                            "TP 1, and the TP size is not a number"),
                                    n.src("model.sequence_parallel"))
    else:
        out["sequence_parallel"] = (sp and sizes["tp"] != 1,
                                    n.src("model.sequence_parallel",
                                          "NeMo default (sequence_parallel False)"))
    att = [k for k in ("model.fp8_dot_product_attention", "model.fp8_multi_head_attention")
           if n.truthy(k)]
    shaky = [n.unknown(k) for k in ("model.fp8_dot_product_attention",
                                     "model.fp8_multi_head_attention") if n.unknown(k)]
    out["fp8_attention"] = ((True, n.src(att[0])) if att else
                            (shaky[0], n.src("model.fp8_dot_product_attention")) if shaky else
                            (False, n.src("model.fp8_dot_product_attention",
                                          "NeMo default (fp8_dot_product_attention False)")))
    switches: tuple[tuple[Stated, str], ...] = (("cuda_graphs", "model.enable_cuda_graph"),
                                                ("fp8_params", "model.fp8_params"),
                                                ("tp_comm_overlap", "model.ub_tp_comm_overlap"))
    for name, key in switches:
        out[name] = (n.unknown(key) or n.truthy(key),
                     n.src(key, f"NeMo default ({key.removeprefix('model.')} False)"))


FRAMEWORK = Framework(
    kind=KIND, title="NeMo 1.x", formats=("yaml",), score=score, read=read_nemo,
    derive=from_nemo, precedence=8, cancels_fp8_of=(KIND,),
    # a NeMo 1.x @hydra_runner app in the job: its composed config (frameworks/nemo_hydra.py)
    read_python=read_python, python_hint=PY_HINT,
    distributions=("nemo-toolkit",), from_source=True, rule_area="NEMO", area_title="NeMo",
    # its GPT models are megatron-core's (TE layers, the FP8 recipe built by megatron-core)
    runs_on=("megatron",),
    shape_keys=(("heads", ("model.num_attention_heads",)),
                ("kv_heads", ("model.num_query_groups",)), ("layers", ("model.num_layers",)),
                ("seq", ("model.encoder_seq_length",)),
                ("micro_batch", ("model.micro_batch_size",)),
                ("tp", ("model.tensor_model_parallel_size",))),
    # OmegaConf's YAML loader refuses a key given twice ("found duplicate key"; omry/omegaconf
    # 0019bcaca49e, omegaconf/_utils.py get_yaml_loader), so the job would not start.
    duplicate_keys="error",
    defaults=(
        Default("model.ffn_hidden_size", "4 x hidden", "NeMo 1.x",
                "nemo/collections/nlp/models/language_modeling/megatron_base_model.py"),
    ),
    file_strings_why=(
        "NeMo 1.x reads its Hydra config as a DictConfig without a schema; how each model "
        "class reads the key was not read at a tag"),
)
