"""AReaL (inclusionAI/AReaL): an experiment YAML and its launch line, read at 4aef98d8.

An AReaL job is one YAML (``experiment_name``, ``trial_name``, ``cluster``, ``actor``,
``rollout``, ...) loaded by ``load_expr_config`` (areal/api/cli_args.py:2960): Hydra composes
``--config X.yaml`` with the ``key=value`` overrides of the command line
(``parse_cli_args``, cli_args.py:2890-2912), then OmegaConf merges the result over the
experiment's dataclass defaults (``to_structured_cfg``, cli_args.py:2950-2957). It is started as
``python3 examples/math/gsm8k_rl.py --config examples/math/gsm8k_grpo.yaml scheduler.type=local``
(README.md:140) or, for the SPMD launchers, ``python3 -m areal.infra.launcher.local <script.py>
--config X.yaml k=v`` (``areal.launcher.local`` before the move).

The actor trains on the engine its ``backend`` names (:mod:`.areal_backend`):

- ``megatron``: FP8 when ``actor.megatron.fp8_config`` is given (None by default,
  cli_args.py:914; megatron_engine.py:203-204), Transformer Engine through Megatron-Core with
  ``mode`` (e4m3 | hybrid) as the format, ``recipe`` (tensorwise | delayed | mxfp8 | blockwise)
  and ``param`` (FP8 parameters); ``ddp.fp8_param_gather`` is Megatron's. AReaL refuses FP8
  training unless the checkpoint (``actor.path``) is itself FP8 (``quant_method: fp8``,
  megatron_engine.py:1188-1208).
- ``archon`` (AReaL's torchtitan-style engine): ``actor.archon.fp8_config.mode: blockwise`` is
  torchao's blockwise 128x128 e4m3 linear with a Triton GEMM (cli_args.py:465-535,
  experimental/engine/archon_engine.py:320-338; Hopper only); ``disabled`` by default.
- ``fsdp``: no FP8 path (FSDPEngineConfig, cli_args.py:414-460, has none).

The rollout (``rollout.backend`` sglang | vllm) serves ``sglang.model_path`` /
``vllm.model`` (``${actor.path}`` in AReaL's examples) in the precision of that checkpoint:
neither config has a quantization field (cli_args.py:1625-1790), so an FP8 rollout is an FP8
checkpoint: its name says so (``Qwen/Qwen3-1.7B-FP8``), or Megatron FP8 training, which
requires the actor's checkpoint to be FP8, serves that same checkpoint. The behaviour/proximal
policy gap is corrected by importance weights when ``actor.use_decoupled_loss`` and
``actor.rejection_sampling`` are set (areal/utils/functional/functional.py:487-498, 534-538;
before bc9f00988, 2026-04-20, the decoupled loss always weighted: v1.0.0 functional.py:208-217).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import areal_backend as ab
from preflight.frameworks import kvformat
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.ckptconfig import weights
from preflight.reading.layered import load_chain, source_of
from preflight.reading.overridelaunch import Syntax, base_unread, find_launch, merged_facts
from preflight.reading.parse import Parsed
from preflight.reading.types import Linked, ReaderOutput

KIND = "areal"
PREFIX = ab.PREFIX
_CLI = ab._CLI
LAUNCHER = re.compile(r"(?:^|[/.])areal[./](?:infra[./])?launcher[./](?:local|ray|slurm)"
                      r"(?:\.py)?$")
HINT = re.compile(r"\bareal[./](?:infra[./])?launcher[./](?:local|ray|slurm)\b")
# overrides of keys only AReaL's experiment configs have (the script's launch line is AReaL's);
# scheduler.type=local|ray|slurm is on every launch line of its docs (README.md:140, SchedulerConfig
# cli_args.py:2559); a script of the job without `from areal` keeps them as its own (ENTRY)
FLAGS = re.compile(r"(?:^|[\s\"'])\+{0,2}(?:allocation_mode|actor\.backend|rollout\.backend|"
                   r"actor\.(?:megatron|archon)\.fp8_config\.\w+|cluster\.n_gpus_per_node|"
                   r"cluster\.name_resolve\.\w+|scheduler\.type)=")
ENTRY = re.compile(r"^\s*(?:from\s+areal[.\s]|import\s+areal\b)", re.M)
SYNTAX = Syntax(entry=lambda w: bool(LAUNCHER.search(w)), value_flags=frozenset({"config"}))
SCRIPT = Syntax(entry=lambda w: w.endswith(".py"), value_flags=frozenset({"config"}))
_MARKERS = ("allocation_mode", "gconfig", "rollout", "saver", "recover", "evaluator",
            "stats_logger")
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
           "float32": "fp32", "fp32": "fp32"}
_FSDP = f"{ab.AT} areal/engine/fsdp_utils/__init__.py:12 (FSDP2 fully_shard)"


def score(data: Any) -> int:
    """AReaL's experiment YAML: ``experiment_name`` and ``trial_name`` at the top (both
    required, cli_args.py:2677-2684) and an engine named AReaL's way or its sections. Every
    marker but ``allocation_mode`` is a key other trainers use (frameworks/_claim.py): one of
    AReaL's own (``allocation_mode``, an engine string, ``cluster.name_resolve`` /
    ``fileroot``) is needed, or a file of generic keys is AReaL's and FP8 "no" (redteam5)."""
    if "experiment_name" not in data or "trial_name" not in data:
        return 0
    hits = sum(1 for k in _MARKERS if k in data)
    own = "allocation_mode" in data
    for section, names in (("actor", ab.TRAIN), ("rollout", ab.INFER)):
        sub = data.get(section)
        backend = sub.get("backend") if isinstance(sub, dict) else None
        if isinstance(backend, str) and backend.strip().lower().startswith(names):
            hits, own = hits + 3, True
    cluster = data.get("cluster")
    if isinstance(cluster, dict) and ("name_resolve" in cluster or "fileroot" in cluster):
        hits, own = hits + 2, True
    # the other markers are keys many trainers share (frameworks/_claim.py GENERIC): never
    # enough alone (hypothesis: experiment_name, trial_name, evaluator, rollout claimed a file)
    return 20 + hits if hits >= 2 and own else 0


def _with_megatron(facts: dict[str, Any], prov: dict[str, Any], path: str) -> None:
    """Megatron's own settings (config.megatron.*), the checkpoints' weights
    (``checkpoint_weights.<actor|sglang|vllm>``: :mod:`.ckptconfig`, their config.json read
    where the folder is inside the job) and ``checkpoint_fp8``."""
    mf, mp = ab.megatron_facts(facts, prov)
    facts.update(mf)
    prov.update(mp)
    for short, key in (("actor", "actor.path"), ("sglang", "sglang.model_path"),
                       ("vllm", "vllm.model")):
        name = f"{PREFIX}.{key}"
        if name not in facts:
            continue
        held = weights(facts[name], path)
        src = held.source or prov.get(name, "")
        facts[f"{PREFIX}.checkpoint_weights.{short}"] = held.fp8
        prov[f"{PREFIX}.checkpoint_weights.{short}"] = src
        if short == "actor":
            # the Megatron engine takes quant_method "fp8" only (megatron_engine.py:1195-1198):
            # fbgemm_fp8 or compressed-tensors FP8 weights are refused too
            method = held.quant_method
            facts[f"{PREFIX}.checkpoint_fp8"] = method if isinstance(method, Unknown) else \
                method == "fp8"
            prov[f"{PREFIX}.checkpoint_fp8"] = src


def checkpoint_fp8(path: Any) -> Any:
    """Whether a checkpoint holds FP8 weights as its name tells (where no reader stated its
    ``checkpoint_weights``): ``...-FP8`` yes; a family published in BF16 under its plain name
    (Qwen/Qwen3-1.7B), or a ``bf16`` folder, no; any other path Unknown."""
    if isinstance(path, Unknown):
        return path
    if not isinstance(path, str) or not path.strip():
        return Unknown("actor.path is not a path")
    said = apart.by_weights(None, path)     # the engines serve the weights' precision
    if said is not None:
        return said
    return Unknown(f"whether {path[:80]!r} holds FP8 weights is in its config.json "
                   "(quantization_config), which is not read here")


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """The experiment YAML (Hydra ``defaults:`` of its folder too), ``${...}`` resolved, and
    what its Megatron engine hands Megatron-Core as ``config.megatron.*``."""
    chain = load_chain(path, parsed, style="hydra-dir")
    facts, prov = chain.facts(PREFIX, Source(path, parsed.line_of(("defaults",))))
    _with_megatron(facts, prov, path)
    linked = tuple(Linked(p, KIND, source_of(path, parsed)(("defaults",)), key="defaults",
                          line=parsed.line_of(("defaults",))) for p in chain.files)
    return ReaderOutput(facts, prov, tuple(chain.problems), linked)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The launch line: ``--config X.yaml`` and its ``key=value`` overrides in order (Hydra
    compose), through an AReaL launcher module or the experiment script itself."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        read = find_launch(path, text, SCRIPT, outer)
        if read.launch is None or read.flag("config") is None:
            return ReaderOutput(problems=tuple(read.problems))
    merged = merged_facts(read, KIND, read.flag("config"), style="hydra-dir", key="--config")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"] = read.launch.entry.text
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    _with_megatron(facts, prov, path)
    linked = merged.linked
    actor, _ = ab.engines(facts, prov)
    if merged.base is not None and (actor is None or actor.backend != "megatron"):
        # the base, read again on its own, would hand its Megatron settings to the Megatron
        # rules although the line runs another engine (`actor.backend=fsdp:d8`): its settings
        # are in these facts already
        linked = tuple(x for x in linked if x.kind != KIND)
    return ReaderOutput(facts, prov, tuple(read.problems), linked)


def _fp8(v: View, out: IntentOut, actor: ab.Engine | None) -> None:
    """Training FP8 of the actor's engine."""
    meg = ab.fp8_config_set(v.facts, "actor.megatron.fp8_config")
    archon_mode = v.facts.get(f"{PREFIX}.actor.archon.fp8_config.mode")
    archon = archon_mode if isinstance(archon_mode, Unknown) else \
        archon_mode is not None and str(archon_mode).strip().lower() != "disabled"
    asked = [x for x in (meg, archon) if x is True or isinstance(x, Unknown)]
    unread = base_unread(v.facts, KIND)
    engine = actor.backend if actor is not None else unread or Unknown(
        "neither actor.backend nor allocation_mode is set in the files read (AReaL requires "
        f"one: {_CLI}:1160-1166)")
    esrc = actor.source if actor is not None else v.src("base_config")
    if not asked:
        if unread is not None:
            out["fp8"] = (unread, v.src("base_config"))
        else:
            out["fp8"] = (False, f"{_CLI}:914 (actor.megatron.fp8_config: None) and :468 "
                                 "(actor.archon.fp8_config.mode: disabled): no FP8 setting")
        return
    if isinstance(engine, Unknown):
        out["fp8"] = (Unknown(f"an FP8 setting is given, but the engine it belongs to is not "
                              f"known: {engine.reason}"), esrc)
    elif engine == "megatron" and meg is not False:
        src = v.src("actor.megatron.fp8_config.mode", v.src("actor.megatron.fp8_config"))
        out["fp8"] = (meg, src)
        if meg is True:
            out["backend"] = ("te", src)
            fmt = str(v.get("actor.megatron.fp8_config.mode", "e4m3")).lower()
            out["format"] = (fmt if fmt in ("e4m3", "hybrid") else
                             Unknown(f"fp8_config.mode {fmt[:40]!r}"), src)
            rkey = "actor.megatron.fp8_config.recipe"
            recipe = v.get(rkey, "delayed")
            nested = any(n.startswith(f"{PREFIX}.{rkey}.") for n in v.facts)
            out["recipe"] = (str(recipe).lower() if isinstance(recipe, str) and not nested else
                             Unknown(f"fp8_config.recipe is no recipe name ({str(recipe)[:40]})"),
                             v.src(rkey, f"{_CLI}:747-752 (recipe: delayed)"))
            pkey = "actor.megatron.fp8_config.param"
            out["fp8_params"] = (ab.truthy(v.get(pkey)) or ab.truthy(
                v.get("actor.megatron.ddp.fp8_param_gather")),
                v.src(pkey, f"{_CLI}:755 (param: False)"))
    elif engine == "archon" and archon is not False:
        src = v.src("actor.archon.fp8_config.mode")
        out["fp8"] = (archon, src)
        if archon is True:
            mode = str(archon_mode).strip().lower()
            # ArchonFP8Config.__post_init__ refuses any other mode (cli_args.py:522-527)
            out["backend"] = ("torchao", src)
            out["recipe"] = ("blockwise" if mode == "blockwise" else
                             Unknown(f"archon fp8_config.mode {mode[:40]!r} (AReaL refuses it)"),
                             src)
    else:
        which = "megatron" if meg is not False else "archon"
        out["fp8"] = (False, f"{esrc}: the actor runs on {engine}; actor.{which}.fp8_config is "
                             f"read only by the {which} engine")


def _rollout(v: View, out: IntentOut, rollout: ab.Engine | None, train_fp8: bool) -> None:
    if rollout is None:
        return      # SFT / reward-model experiments have no rollout
    out["rollout.engine"] = (rollout.backend, rollout.source)
    if isinstance(rollout.backend, Unknown):
        out["rollout.fp8"] = (rollout.backend, rollout.source)
        return
    key = "sglang.model_path" if rollout.backend == "sglang" else "vllm.model"
    model = v.get(key) or v.get("actor.path")
    msrc = v.src(key, v.src("actor.path"))
    short = rollout.backend if v.get(key) else "actor"
    read = f"checkpoint_weights.{short}"
    held = v.facts[f"{PREFIX}.{read}"] if v.has(read) else \
        checkpoint_fp8(model) if model is not None else Unknown("no model path given")
    if v.has(read) and not isinstance(held, Unknown):
        msrc = v.src(read)
    if not isinstance(held, Unknown):
        out["rollout.fp8"] = (held, msrc)
    elif train_fp8 and (model == v.get("actor.path") or not v.has(key)):
        # megatron_engine.py:1188-1208: FP8 training starts only from an FP8 checkpoint, and
        # the rollout serves that same checkpoint
        out["rollout.fp8"] = (True, msrc)
    else:
        out["rollout.fp8"] = (Unknown(
            f"the rollout serves {str(model)[:80]!r} in the precision of its checkpoint "
            "(AReaL's SGLang/vLLM configs have no quantization setting), which is not read "
            "here"), msrc)
    if rollout.backend == "sglang":
        kv = v.unknown("sglang.kv_cache_dtype") or v.get("sglang.kv_cache_dtype")
        out["rollout.kv_cache_fp8"] = (apart.kv_fp8(kv), v.src("sglang.kv_cache_dtype",
                                                               f"{_CLI}:1781 (kv_cache_dtype: auto)"))
        kvformat.put(out, kv, v.src("sglang.kv_cache_dtype", _CLI))
    _correction(v, out)


def _correction(v: View, out: IntentOut) -> None:
    dkey = "actor.use_decoupled_loss"
    if not ab.truthy(v.get(dkey)):
        out["rollout.is_correction"] = (False, v.src(dkey, f"{_CLI}:1485-1490 "
                                                         "(use_decoupled_loss: False)"))
        return
    rs = v.facts.get(f"{PREFIX}.actor.rejection_sampling")
    if v.any_prefix("actor.rejection_sampling") and rs is not None and \
            not isinstance(rs, Unknown) or any(
            n.startswith(f"{PREFIX}.actor.rejection_sampling.") for n in v.facts):
        out["rollout.is_correction"] = (True, v.src("actor.rejection_sampling", v.src(dkey)))
    elif v.any_prefix("actor.behav_imp_weight_cap") or v.any_prefix("allocation_mode"):
        # the layout before bc9f00988: the decoupled loss always weights by pi_prox/pi_behave
        out["rollout.is_correction"] = (True, v.src(dkey))
    elif v.has("actor.rejection_sampling"):
        out["rollout.is_correction"] = (False, v.src("actor.rejection_sampling"))
    else:
        out["rollout.is_correction"] = (Unknown(
            "use_decoupled_loss without rejection_sampling: AReaL weights by the behaviour "
            "policy only with rejection_sampling since bc9f00988 (2026-04-20), always before; "
            "which AReaL runs is not known"), v.src(dkey))


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    actor, rollout = ab.engines(f, prov)
    _fp8(v, out, actor)
    backend = actor.backend if actor is not None else None
    if backend == "megatron":
        out.runs_on = ("megatron",)
    if isinstance(backend, Unknown) and actor is not None:
        out["distributed"] = (backend, actor.source)
    elif backend in ("megatron", "fsdp", "archon"):
        out["distributed"] = ("megatron" if backend == "megatron" else "fsdp2",
                              actor.source if actor is not None else _FSDP)
    dtype = v.get("actor.dtype", "bfloat16")
    out["precision"] = (_DTYPES.get(str(dtype).lower(), Unknown(f"actor.dtype {dtype!r}")),
                        v.src("actor.dtype", f"{_CLI}:1098 (dtype: bfloat16)"))
    if actor is not None and actor.sizes and backend in ("megatron", "archon"):
        sizes: tuple[tuple[Stated, str], ...] = (("tp", "t"), ("cp", "c"), ("ep", "e"))
        for name, dim in sizes:
            out[name] = (actor.sizes.get(dim, 1), actor.source)
        if backend == "megatron":
            # MegatronParallelStrategy(use_sequence_parallel=tp > 1), megatron_engine.py:1242
            tp, cp = actor.sizes.get("t", 1), actor.sizes.get("c", 1)
            out["sequence_parallel"] = (tp > 1, actor.source)
            # micro-batches are packed (pack_tensor_dict), each sequence padded to tp
            # (tp*cp*2 with CP), lcm'd with 16 under FP8 (megatron_engine.py:1971-1988), and
            # the packed row to a multiple of lcm(that, 256) (pad_packed_tensor_dict,
            # areal/utils/data.py:918-929; N_TOKENS_PER_PAGE = 256, data.py:815)
            align = tp * cp * 2 if cp > 1 else tp
            if out.get("fp8", (False,))[0] is True:
                align = math.lcm(align, 16)
            align = math.lcm(align, 256)
            where = f"{ab.AT} areal/engine/megatron_engine.py:1971-1988, utils/data.py:918-929"
            out["packing"] = (True, where)
            out["pad_multiple"] = (align, where)
    ckpt = "actor.gradient_checkpointing"
    out["activation_checkpointing"] = (v.truthy(ckpt), v.src(ckpt, f"{_CLI}:1095-1097 "
                                                                   "(gradient_checkpointing: "
                                                                   "False)"))
    nodes, gpus = v.int("cluster.n_nodes"), v.int("cluster.n_gpus_per_node")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), v.src("cluster.n_gpus_per_node"))
    _rollout(v, out, rollout, out.get("fp8", (False,))[0] is True and backend == "megatron")
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="AReaL", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=22,
    references=(
        Reference("--config", KIND, "relative to the launch directory (cli_args.py:2902: "
                                    "Path(args.config).absolute())"),
    ),
    defaults=(
        Default("actor.megatron.fp8_config", "None (no FP8)", "AReaL 4aef98d8",
                "areal/api/cli_args.py:914"),
        Default("actor.megatron.fp8_config.recipe", "delayed", "AReaL 4aef98d8",
                "areal/api/cli_args.py:747-752"),
        Default("actor.archon.fp8_config.mode", "disabled", "AReaL 4aef98d8",
                "areal/api/cli_args.py:468"),
        Default("actor.megatron.ddp.use_distributed_optimizer", "True", "AReaL 4aef98d8",
                "areal/api/cli_args.py:722"),
    ),
    # Megatron by actor.backend: derive states it as runs_on
    distributions=("areal",), from_source=True, rule_area="AREAL", area_title="AReaL",
    # OmegaConf.structured merges the YAML and the Hydra overrides into the dataclasses, which
    # converts a string for a bool field ('true', 'off', ...)
    file_strings="words", cli_strings="words",
    file_strings_why=(
        "AReaL merges the YAML and its overrides into OmegaConf.structured of its dataclasses "
        "(areal/api/cli_args.py l.2950-2963 @ 4aef98d8), which converts a string for a bool "
        "field"),
    launch=Launch(read_text, command=HINT, flags=FLAGS, entry=ENTRY, heredoc_values=True),
    shape_keys=(("model", ("actor.path",)),),
)
