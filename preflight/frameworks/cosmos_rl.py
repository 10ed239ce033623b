"""Cosmos-RL (nvidia-cosmos/cosmos-rl): its TOML config and the launcher that takes it,
``cosmos-rl --config X.toml [custom_script.py [args]]`` (also ``python -m
cosmos_rl.launcher.launch_all`` and ``python cosmos_rl/launcher/launch_all.py``), the
controller of a hand-launched multi-node run, ``./cosmos_rl/launcher/launch_controller.sh --port P
--config X.toml`` (``tools/launch_controller.sh`` in older docs; its replicas fetch the config
from it, docs/multinodes/overview.rst at v0.4.4), and the Slurm dispatcher ``python
tools/slurm/dispatch_job.py --config-path X.toml ...``.

Read at v0.3.0 (2025-08-16) and v0.4.4 (= 89f2e5b5, 2026-07-31), alike in what follows but where
said (``cosmos_rl/policy/config/__init__.py`` line numbers at v0.4.4):

- The launcher (``cosmos_rl/launcher/launch_all.py`` ``parse_args``, l.104-345; pyproject
  ``[project.scripts] cosmos-rl = cosmos_rl.launcher.launch_all:main``) requires ``--config``, a
  TOML it loads with the ``toml`` package; the positional ``script`` is the user's module of
  datasets / reward functions, never a config (not read for FP8 here).
- Policy FP8 is ``[train.fp8]`` (``FP8Config`` l.752-763): ``enable_fp8`` (default false),
  ``fp8_recipe`` (``dynamic_scaling``; ``delayed_scaling`` raises NotImplementedError),
  ``quant_recipe`` (``rowwise`` default, or ``tensorwise``; another value fails an assert: the
  Field ``choices`` are not checked by pydantic). ``cosmos_rl/utils/fp8/fp8_util.py``
  ``FP8ModelConverter``: torchao ``convert_to_float8_training`` with
  ``Float8LinearConfig.from_recipe_name("rowwise")``, or ``Float8LinearConfig(...)``
  (tensorwise); it does nothing on torch < 2.7 (``MIN_TORCH_VERSION_FOR_FP8``, a warning) and
  refuses GPUs below compute capability 8.9. ``[train.fp4] enable_fp4`` (v0.3.9+) is used only
  without FP8 (``llm_trainer.py`` l.93-100): Cosmos-RL's own NVFP4 linear (``utils/fp4``).
- ``train.compile`` defaults to true (l.911); ``param_dtype`` to bfloat16 (l.849).
- The rollout (``RolloutConfig`` l.1477-1530): ``quantization`` ``none`` (default) or ``fp8``,
  handed to vLLM (``vllm_rollout.py`` l.321), whose FP8 linear layers Cosmos-RL patches to
  per-token / per-channel (rowwise) ``torch._scaled_mm`` (l.333-338,
  ``monkey_patch_for_fp8.apply_fp8_linear_patch``; docs/quantization/fp8.rst); ``backend``
  ``vllm`` (default), ``vllm_async`` or ``trtllm`` (v0.4.x; its rollout asserts
  ``quantization is None``, ``trtllm_rollout.py`` l.84). No KV-cache dtype is passed (vLLM's
  ``auto``).
- Importance-sampling correction of the rollout/trainer mismatch: ``GrpoConfig.use_decoupled_loss``
  (default false, l.637; v0.3.9+) weights each token by ``exp(old - rollout logprob)``, capped by
  ``behav_imp_weight_cap`` (``grpo_trainer.py`` l.246-256); ``use_rollout_logprobs_for_loss``
  takes the rollout's logprobs as the PPO ratio's old ones instead (not called a correction
  here: Unknown). An SFT ``train_policy`` (``type = "sft"``) has no rollout.
- Parallelism: ``[policy.parallelism]`` ``tp_size`` (default 2), ``cp_size``, ``ep_size``,
  ``dp_shard_size`` (FSDP2 ``fully_shard`` when above 1: ``policy/model/*/parallelize.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import Syntax, base_unread, find_launch, merged_facts
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

KIND = "cosmos_rl"
PREFIX = f"config.{KIND}"
_REL = "nvidia-cosmos/cosmos-rl@v0.4.4"
_CFG = f"{_REL} cosmos_rl/policy/config/__init__.py"
ENTRY = re.compile(r"^cosmos-rl$|(?:^|/)cosmos_rl/launcher/launch_all\.py$|"
                   r"^cosmos_rl\.launcher\.launch_all$|"
                   r"(?:^|/)(?:cosmos_rl/launcher|tools)/launch_controller\.sh$|"
                   r"(?:^|/)tools/slurm/dispatch_job\.py$")
HINT = re.compile(r"(?:^|[\s/;&|(])cosmos-rl\s|cosmos_rl[./]launcher[./]launch_all"
                  r"|(?:cosmos_rl/launcher|tools)/launch_controller\.sh|tools/slurm/dispatch_job\.py")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({
    "config", "url", "port", "policy", "rollout", "reference", "p2r-ratio", "log-dir",
    "num-workers", "worker-idx", "node-ip-list", "rdzv-port", "lepton-job-name", "n",
    "lepton-container-image", "lepton-container-port", "lepton-resource-shape",
    "lepton-node-group", "ng", "lepton-env", "e", "lepton-secret", "s", "lepton-mount",
    # launch_controller.sh (v0.4.4 l.20-45): --port, --config, --log, --script
    "log", "script",
    # tools/slurm/dispatch_job.py (v0.4.4 parse_args): the options that take a value
    "job-name", "ngpu-per-node", "n-policy-replicas", "n-rollout-replicas",
    "n-reference-replicas", "slurm-partition", "slurm-account", "config-path",
    "output-root-path", "repo-root-path", "mount-dirs", "cosmos-container", "container",
    "duration", "retries", "pre-timeout-signal", "slurm-job-time"}))
"""The options that take a value: launch_all.py's (v0.4.4 l.109-330; the rest of Lepton's
too), the controller script's and the Slurm dispatcher's."""

_TOP_OWN = frozenset({"redis", "eth_ips", "vla", "distillation"})
_SECTION_OWN = (
    ("train", frozenset({"train_policy", "optm_name", "optm_impl", "optm_grad_norm_clip",
                         "train_batch_per_replica", "sync_weight_interval", "fsdp_reduce_dtype",
                         "fsdp_reshard_after_forward", "transfer_dtype", "logprob_dtype",
                         "async_tp_enabled"})),
    ("rollout", frozenset({"n_generation", "n_generation_to_batch", "vllm_use_flashinfer",
                           "n_generation_mini_batch"})),
    ("policy", frozenset({"model_gradient_checkpointing", "model_max_length"})),
)
"""Config / TrainingConfig / RolloutConfig / PolicyConfig fields no other trainer spells so
(v0.4.4): one claims the TOML (``train``, ``rollout``, ``policy`` alone are generic)."""
_QUANT = {"rowwise": "rowwise", "tensorwise": "tensorwise"}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def score(data: Any) -> int:
    """Cosmos-RL's own keys at the top or in its ``train`` / ``rollout`` / ``policy`` tables."""
    top = {str(k) for k in list(data)[:4096]}
    hits = len(top & _TOP_OWN)
    for section, own in _SECTION_OWN:
        block = data.get(section)
        if isinstance(block, dict):
            hits += len({str(k) for k in list(block)[:4096]} & own)
    if not hits and not owns(top, _TOP_OWN):
        return 0
    return 8 + 2 * hits + len(top & {"train", "rollout", "policy", "logging", "validation"})


read_toml = read_plain(PREFIX)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``cosmos-rl --config X.toml [script.py ...]``: the TOML it names, linked and read."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    # the controller script takes --config, the Slurm dispatcher --config-path (the TOML it
    # copies to the job and hands its controller, cosmos_rl_job_multi_node.sh l.428)
    config = read.flag("config", "config-path")
    merged = merged_facts(read, KIND, config, style="toml", key="--config")
    facts, prov = merged.facts, merged.provenance
    line = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    if config is None:
        # argparse: `--config` is required (l.109-114): the launcher exits 2
        facts[f"{PREFIX}.base_config"] = Unknown(
            "the launch line gives no --config, which cosmos-rl requires (argparse exits)")
        prov[f"{PREFIX}.base_config"] = line
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = read.launch.entry.text, line
    if read.positional:
        value, src = read.positional[0]
        facts[f"{PREFIX}.script"], prov[f"{PREFIX}.script"] = value, src
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _bool(v: View, key: str, default: bool) -> tuple[Any, str]:
    """A pydantic bool field: its value, the default when absent, Unknown for another type."""
    if not v.has(key):
        return default, ""
    if (why := v.unknown(key)) is not None:    # a table or list (reading/boolflags.tables)
        return why, v.src(key)
    raw = v.get(key)
    if isinstance(raw, bool):
        return raw, v.src(key)
    if isinstance(raw, Unknown):
        return raw, v.src(key)
    return Unknown(f"{key} = {str(raw)[:40]!r} is no boolean: pydantic refuses it and the "
                   "config does not load"), v.src(key)


def _fp8(v: View, out: IntentOut) -> None:
    unread = base_unread(v.facts, KIND)
    on, src = _bool(v, "train.fp8.enable_fp8", False)
    if not v.has("train.fp8.enable_fp8") and unread is not None:
        out["fp8"] = (unread, v.src("base_config"))
        return
    if on is False:
        fp4, fsrc = _bool(v, "train.fp4.enable_fp4", False)
        if fp4 is not False:
            # without FP8 the trainer converts to its own NVFP4 linear (llm_trainer.py l.96-100,
            # cosmos_rl/utils/fp4, v0.3.9+): low precision asked, as NVFP4 is elsewhere here
            out["fp8"] = (fp4, fsrc)
            if fp4 is True:
                quant = v.get("train.fp4.quant_recipe", "rowwise")
                out["recipe"] = ("nvfp4" if quant == "rowwise" else Unknown(
                    f"train.fp4.quant_recipe {str(quant)[:40]!r}: FP4ModelConverter builds no "
                    "config for it (fp4_util.py l.107-121) and the conversion fails"),
                    v.src("train.fp4.quant_recipe", fsrc))
                out["backend"] = (Unknown("Cosmos-RL's own NVFP4 linear layers "
                                          "(cosmos_rl/utils/fp4) are no backend fp8-doctor "
                                          "names"), fsrc)
            return
        out["fp8"] = (False, src or f"{_CFG} l.752-753 (FP8Config.enable_fp8 = False)")
        return
    out["fp8"] = (on, src)
    if on is not True:
        return
    out["backend"] = ("torchao", src)
    quant = v.get("train.fp8.quant_recipe", "rowwise")
    qsrc = v.src("train.fp8.quant_recipe", f"{_CFG} l.759-763 (quant_recipe = rowwise)")
    recipe: Any = _QUANT.get(quant) if isinstance(quant, str) else None
    if recipe is None:
        recipe = quant if isinstance(quant, Unknown) else Unknown(
            f"train.fp8.quant_recipe {str(quant)[:40]!r} is neither rowwise nor tensorwise: "
            "FP8ModelConverter's assert stops the job (cosmos_rl/utils/fp8/fp8_util.py)")
    scaling = v.get("train.fp8.fp8_recipe", "dynamic_scaling")
    if scaling == "delayed_scaling":
        recipe = Unknown("train.fp8.fp8_recipe = delayed_scaling raises NotImplementedError "
                         "in FP8ModelConverter (cosmos_rl/utils/fp8/fp8_util.py): the job stops")
        qsrc = v.src("train.fp8.fp8_recipe")
    elif scaling != "dynamic_scaling":
        recipe = Unknown(f"train.fp8.fp8_recipe {str(scaling)[:40]!r} is no FP8Recipe: "
                         "FP8ModelConverter's assert stops the job")
        qsrc = v.src("train.fp8.fp8_recipe")
    out["recipe"] = (recipe, qsrc)


def _rollout(v: View, out: IntentOut) -> None:
    kind = v.get("train.train_policy.type", "grpo")
    if kind != "grpo":
        return      # SFT: no rollout (an unknown type: pydantic's discriminator refuses it)
    backend = v.get("rollout.backend", "vllm")
    bsrc = v.src("rollout.backend", f"{_CFG} l.1524-1528 (backend = vllm)")
    engine: Any = {"vllm": "vllm", "vllm_async": "vllm", "trtllm": "trtllm"}.get(
        backend if isinstance(backend, str) else "")
    out["rollout.engine"] = (engine or Unknown(
        f"rollout.backend {str(backend)[:40]!r} is a custom rollout backend"), bsrc)
    quant = v.get("rollout.quantization", "none")
    qsrc = v.src("rollout.quantization", f"{_CFG} l.1511-1515 (quantization = none)")
    fp8: Any
    if quant == "fp8" and engine == "trtllm":
        fp8 = Unknown("rollout.quantization = fp8 with the trtllm backend: its rollout asserts "
                      "quantization is None (trtllm_rollout.py l.84), the job stops")
    elif quant == "fp8" and engine == "vllm":
        fp8 = True
        out["rollout.recipe"] = ("rowwise", qsrc + " (vLLM FP8 patched to rowwise: "
                                 "vllm_rollout.py l.333-338, docs/quantization/fp8.rst)")
    elif quant == "fp8":
        fp8 = Unknown(f"rollout.quantization = fp8 on the custom backend {str(backend)[:40]!r}")
    elif quant in ("none", "mxfp4", None):
        fp8 = False
    else:
        fp8 = Unknown(f"rollout.quantization {str(quant)[:40]!r} is handed to the rollout "
                      "engine as is")
    out["rollout.fp8"] = (fp8, qsrc)
    if engine == "vllm":
        out["rollout.kv_cache_fp8"] = (False, f"{_REL} vllm_rollout.py l.290-326 (no "
                                              "kv_cache_dtype passed: vLLM's auto)")
    decoupled, dsrc = _bool(v, "train.train_policy.use_decoupled_loss", False)
    own, osrc = _bool(v, "train.train_policy.use_rollout_logprobs_for_loss", False)
    if decoupled is True:
        out["rollout.is_correction"] = (True, dsrc)
    elif own is True:
        out["rollout.is_correction"] = (Unknown(
            "use_rollout_logprobs_for_loss takes the rollout's logprobs as the PPO ratio's old "
            "ones; whether that counts as importance-sampling correction is not decided here"),
            osrc)
    elif not isinstance(decoupled, bool):
        out["rollout.is_correction"] = (decoupled, dsrc)
    else:
        out["rollout.is_correction"] = (False, dsrc or f"{_CFG} l.636-646 (use_decoupled_loss = "
                                                       "False: no behaviour importance weights)")


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    _fp8(v, out)
    _rollout(v, out)
    compile_, csrc = _bool(v, "train.compile", True)
    if csrc:
        out["compile"] = (compile_, csrc)
    else:
        out.default("compile", (True, f"{_CFG} l.911 (compile = True)"))
    dtype = v.get("train.param_dtype")
    if dtype is not None:
        out["precision"] = (_DTYPES.get(str(dtype)[:20], Unknown(
            f"train.param_dtype {str(dtype)[:40]!r} is none of bfloat16, float16, float32")),
            v.src("train.param_dtype"))
    else:
        out.default("precision", ("bf16", f"{_CFG} l.849-853 (param_dtype = bfloat16)"))
    sizes: tuple[tuple[Stated, str, int], ...] = (
        ("tp", "policy.parallelism.tp_size", 2), ("cp", "policy.parallelism.cp_size", 1),
        ("ep", "policy.parallelism.ep_size", 1))
    for name, key, default in sizes:
        n = v.int(key)
        if n is not None:
            out[name] = (n, v.src(key))
        elif not v.has(key):
            out.default(name, (default, f"{_CFG} ParallelismConfig ({key.rsplit('.', 1)[1]} "
                                        f"= {default})"))
    shard = v.int("policy.parallelism.dp_shard_size")
    if shard is not None and (shard > 1 or shard == -1):
        out["distributed"] = ("fsdp2", v.src("policy.parallelism.dp_shard_size"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="Cosmos-RL", formats=("toml", "text"), score=score, read=read_toml,
    derive=derive, precedence=28,
    duplicate_keys="error",          # the toml package refuses a key given twice
    references=(Reference("--config", KIND, "the launcher's TOML, a path relative to the "
                                             "launch directory"),),
    defaults=(
        Default("train.fp8.enable_fp8", "False", "cosmos-rl 0.3.0-0.4.4",
                "cosmos_rl/policy/config/__init__.py FP8Config"),
        Default("train.fp8.quant_recipe", "rowwise", "cosmos-rl 0.3.0-0.4.4",
                "cosmos_rl/policy/config/__init__.py FP8Config"),
        Default("train.compile", "True", "cosmos-rl 0.3.0-0.4.4",
                "cosmos_rl/policy/config/__init__.py TrainingConfig"),
        Default("rollout.quantization", "none", "cosmos-rl 0.3.0-0.4.4",
                "cosmos_rl/policy/config/__init__.py RolloutConfig"),
        Default("train.train_policy.use_decoupled_loss", "False", "cosmos-rl 0.3.9-0.4.4",
                "cosmos_rl/policy/config/__init__.py GrpoConfig"),
    ),
    distributions=("cosmos-rl",), requires=("torchao",), from_source=True,
    rule_area="COSMOS", area_title="Cosmos-RL",
    launch=Launch(read_text, command=HINT, trains=(("cosmos-rl",),)),
    # pydantic (v2, lax) takes 'true' / 'false' / 'on' / 'off' / 1 / 0 for its bool fields
    bool_keys=("train.fp8.enable_fp8", "train.fp4.enable_fp4", "train.compile", "train.train_policy.use_decoupled_loss",
               "train.train_policy.use_rollout_logprobs_for_loss"),
    bool_on_off=True,
    file_strings="words",
    file_strings_why="pydantic BaseModel fields (cosmos_rl/policy/config/__init__.py) convert "
                     "'true' / 'false' to booleans",
    shape_keys=(("model", ("policy.model_name_or_path",)),
                ("tp", ("policy.parallelism.tp_size",))),
)
