"""SkyRL (NovaSky-AI/SkyRL): ``python -m skyrl.train.entrypoints.main_base key=value ...``.

Two layouts, told apart by the entry point:

- ``skyrl.train.entrypoints.main_base`` (the ``skyrl`` package, read at 19b0e132): no YAML;
  ``SkyRLTrainConfig.from_cli_overrides(sys.argv[1:])`` (skyrl/train/config/config.py:979)
  applies ``OmegaConf.from_cli`` overrides over the dataclass defaults, and refuses ``+key``.
- ``skyrl_train.entrypoints.main_base`` (the ``skyrl-train`` package, removed 2026-03 in
  #1249, read at bffec2a5): Hydra over the packaged ``skyrl_train/config/ppo_base_config.yaml``
  (``@hydra.main(config_name="ppo_base_config")``, main_base.py:423); engine settings sit
  directly under ``generator.`` there (``generator.backend``, ``generator.engine_init_kwargs``).
  A ``--config-name`` of the job's own is not read: what it sets is Unknown.

FP8: the rollout engine (vLLM) quantizes on line with ``engine_init_kwargs.quantization=fp8``
(a pass-through to the engine's arguments, config.py:608; vLLM docs features/quantization/fp8.md
at v0.13.0: BF16 weights quantized to E4M3 with a per-tensor scale, dynamic activation scales),
the KV cache with ``engine_init_kwargs.kv_cache_dtype=fp8*``. Training is BF16 on FSDP
(``trainer.bf16: true``, config.py:735; the FSDP workers have no FP8 path); on Megatron,
``trainer.policy.megatron_config.transformer_config_kwargs`` is set field by field on the
Megatron-Bridge provider (workers/megatron/megatron_worker.py:424), so ``...fp8=hybrid|e4m3`` is
Transformer Engine FP8 training. The rollout/trainer mismatch is corrected by
``trainer.algorithm.off_policy_correction.tis_ratio_type`` (token | sequence; default None,
config.py:393) or the deprecated ``trainer.algorithm.use_tis``.

A job's own entry module (SkyRL's examples run ``uv run -m examples.train.algorithms.dapo.
main_dapo`` from the checkout's top) is looked for next to the script, in the current directory
and from the job's roots; one the job does not hold leaves ``entry_base`` Unknown, and the
overrides are read over the layout their keys belong to. SkyRL's FP8 PR (merge ref adcfcead,
2026-08-17) adds ``megatron_config.fp8`` / ``fp8_recipe`` (``auto``: by the GPU) / ``fp8_param``
and ``generator.inference_engine.serialized_weight_sync_mode`` (FP8 rollout weights).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import flashrl, kvformat
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.parse import read_text as read_text_file
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ConfigProblem, ReaderOutput

KIND = "skyrl"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|[/.])(?:skyrl[./]train|skyrl_train)[./]entrypoints[./]main_base"
                   r"(?:\.py)?$")
# A job's own entry point (SkyRL's examples: ``-m examples.train.algorithms.dapo.main_dapo``,
# 19b0e132) subclasses BasePPOExp from main_base and parses the same overrides
# (``DAPOConfig.from_cli_overrides(sys.argv[1:])`` over make_config's dataclasses, or skyrl-train's
# ``@hydra.main(config_path=config_dir, config_name="ppo_base_config")`` at bffec2a5): a launch of
# a ``main``/``entrypoint`` module given overrides only SkyRL has (``generator.inference_engine.``,
# ``trainer.policy.model.path=``) is SkyRL's when its file, found in the job, imports main_base
_CUSTOM_WORD = re.compile(r"^(?:[A-Za-z_]\w*\.)+\w*(?:main|entrypoint)\w*$|"
                          r"(?:^|/)\w*(?:main|entrypoint)\w*\.py$")
# overrides only SkyRL's configs have (a script with one is SkyRL's to read; linear to search)
_CUSTOM_HINT = r"\b(?:generator\.inference_engine\.\w|trainer\.policy\.model\.path=)"
HINT = re.compile(r"(?:skyrl[./]train|skyrl_train)[./]entrypoints[./]main_base|" + _CUSTOM_HINT)
_MAIN_BASE = re.compile(r"\b(skyrl\.train|skyrl_train)\.entrypoints\.main_base\b")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)),
                value_flags=frozenset({"config-path", "config-name", "config-dir", "cp", "cn",
                                       "cd"}))
CUSTOM = Syntax(entry=lambda w: bool(_CUSTOM_WORD.search(w)), value_flags=SYNTAX.value_flags)
MEG = "trainer.policy.megatron_config"
TFC = f"{MEG}.transformer_config_kwargs"
_NEW = "SkyRL 19b0e132 skyrl/train/config/config.py"
_OLD = "skyrl-train bffec2a5 skyrl_train/config/ppo_base_config.yaml"
# what each layout uses when the launch line does not say: (value, where it was read)
NEW_DEFAULTS: dict[str, tuple[Any, str]] = {
    "trainer.strategy": ("fsdp", f"{_NEW}:713 (strategy: fsdp, FSDP2 fully_shard)"),
    "trainer.bf16": (True, f"{_NEW}:735 (bf16: True)"),
    "generator.inference_engine.backend": ("vllm", f"{_NEW}:568 (backend: vllm)"),
    "trainer.algorithm.off_policy_correction.tis_ratio_type": (
        None, f"{_NEW}:393 (tis_ratio_type: None)"),
    "trainer.algorithm.use_tis": (False, f"{_NEW}:464 (use_tis: False)"),
}
OLD_DEFAULTS: dict[str, tuple[Any, str]] = {
    "trainer.strategy": ("fsdp2", f"{_OLD}:23 (strategy: fsdp2)"),
    "trainer.bf16": (True, f"{_OLD}:224 (bf16: true)"),
    "generator.backend": ("vllm", f"{_OLD}:261 (backend: vllm)"),
    "trainer.algorithm.off_policy_correction.tis_ratio_type": (
        None, f"{_OLD}:138 (tis_ratio_type: null)"),
    "trainer.algorithm.use_tis": (False, f"{_OLD}:125 (use_tis: false)"),
}
# the new package's "fsdp" is FSDP2 (fully_shard, distributed/fsdp_strategy.py asserts "fsdp");
# skyrl-train took "fsdp" (FSDP1) and "fsdp2" (fsdp_strategy.py:71 at bffec2a5)
_STRATEGY = {"new": {"fsdp": "fsdp2", "megatron": "megatron"},
             "old": {"fsdp": "fsdp1", "fsdp2": "fsdp2", "megatron": "megatron"}}


def score(data: Any) -> int:
    """SkyRL has no config file of its own in the new layout: read from its launch line."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("SkyRL is read from the script that runs skyrl.train.entrypoints."
                     "main_base; pass the launch script")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``main_base`` launch line (or a job's own entry point on it): its overrides in order
    over the layout's defaults."""
    read = find_launch(path, text, SYNTAX, outer)
    base_entry = None
    if read.launch is None:
        read = find_launch(path, text, CUSTOM, outer)
        if read.launch is None:
            return ReaderOutput(problems=tuple(read.problems))
        base_entry = _subclassed(read.launch.entry.text, path,
                                 Source(path, text.count("\n", 0, read.launch.offset) + 1))
        if base_entry is None:
            return ReaderOutput(problems=tuple(read.problems))
    merged = merged_facts(read, KIND, None, style="hydra", key="--config-name")
    facts, prov = merged.facts, merged.provenance
    entry = read.launch.entry.text
    entry_src = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = entry, entry_src
    if base_entry is not None:
        facts[f"{PREFIX}.entry_base"], prov[f"{PREFIX}.entry_base"] = base_entry
        entry = base_entry[0] if isinstance(base_entry[0], str) else \
            _LAYOUT_ENTRY.get(_keys_layout(facts) or "", "")
    problems = list(read.problems)
    if entry and "skyrl_train" not in entry:
        for ov, src in read.overrides:
            if ov.op in ("add", "force"):
                # from_cli_overrides raises ValueError on it (config.py:1004-1010 at 19b0e132);
                # skyrl-train's Hydra took `+generator.engine_init_kwargs.x=...`
                problems.append(ConfigProblem(path, src.line, (
                    f"SkyRL refuses the '+' prefix of {ov.raw[:80]!r} (skyrl.train's "
                    "from_cli_overrides raises ValueError: the job stops at start); drop the "
                    "'+': engine_init_kwargs takes new keys without it")))
                break
    name = read.flag("config-name", "cn")
    if name is not None:
        # skyrl-train's Hydra: a config of the job's own replaces ppo_base_config.yaml
        facts[f"{PREFIX}.base_config"] = Unknown(
            f"--config-name {str(name[0])[:80]} (a config of the job's own) was not read, so "
            "the settings it holds are not known")
        prov[f"{PREFIX}.base_config"] = name[1]
    for key, (value, where) in flashrl.facts(path, text, read.launch.entry.offset,
                                             read.launch.before, outer).items():
        facts[f"{PREFIX}.{key}"], prov[f"{PREFIX}.{key}"] = value, where
    return ReaderOutput(facts, prov, tuple(problems), merged.linked)


def _subclassed(entry: str, script: str, at: Source) -> tuple[Any, Source] | None:
    """The main_base a job's own entry point (``-m pkg.main_x`` / ``pkg/main_x.py``) builds on,
    with the line of its import, when its file is found in the job (next to the script, in the
    current directory, or from a job root: ``uv run -m examples.train.algorithms.dapo.main_dapo``
    runs from the checkout's top); None when the file found is no SkyRL entry. A file the job
    does not hold leaves it Unknown (``at``: the launch line): the line's SkyRL-only overrides
    are still SkyRL's (SkyRL's own examples/train/algorithms/*/main_*.py all build on main_base:
    dapo/main_dapo.py l.12-25 @ 6ec5417e adds algorithm fields only, make_config)."""
    target = entry if entry.endswith(".py") else entry.replace(".", "/") + ".py"
    found = locate(target, script) or under_roots(target)
    if found is None:
        return Unknown(f"the entry module {entry[:120]} is not in the job: which SkyRL base it "
                       "builds on, and any default it changes, are not known here"), at
    try:
        text = read_text_file(found)
    except ParseError:
        return None
    hit = _MAIN_BASE.search(text)
    if hit is None:
        return None
    return f"{hit.group(1)}.entrypoints.main_base", Source(found, text.count("\n", 0,
                                                                          hit.start()) + 1)


_LAYOUT_ENTRY = {"new": "skyrl.train.entrypoints.main_base",
                 "old": "skyrl_train.entrypoints.main_base"}


def _keys_layout(facts: Mapping[str, Any]) -> str | None:
    """The layout the overrides' keys belong to (an entry not in the job): the engine settings
    sit under generator.inference_engine. in skyrl, directly under generator. in skyrl-train."""
    keys = [n[len(PREFIX) + 1:] for n in facts if n.startswith(f"{PREFIX}.generator.")]
    if any(k.startswith("generator.inference_engine.") for k in keys):
        return "new"
    if any(k.split(".")[1] in ("backend", "engine_init_kwargs", "num_inference_engines")
           for k in keys if k.count(".") >= 1):
        return "old"
    return None


def _layout(v: View) -> str:
    entry = v.get("entry_base", v.get("entry", ""))
    if isinstance(entry, Unknown):
        return _keys_layout(v.facts) or "new"
    return "old" if "skyrl_train" in str(entry) else "new"


def _get(v: View, key: str) -> tuple[Any, str]:
    """The launch line's value, else the layout's default (Unknown under a job's own base, or
    an entry module not in the job whose layout its overrides do not tell)."""
    if v.has(key):
        return v.facts.get(v.prefix + key), v.src(key)
    base = v.facts.get(f"{PREFIX}.base_config")
    if isinstance(base, Unknown):
        return base, v.src("base_config")
    entry = v.facts.get(f"{PREFIX}.entry_base")
    if isinstance(entry, Unknown):
        if _keys_layout(v.facts) is None:
            return entry, v.src("entry_base")
        old = _layout(v) == "old"
        value, where = (OLD_DEFAULTS if old else NEW_DEFAULTS).get(key, (None, "SkyRL default"))
        return value, (f"{where}; the entry module is not in the job, its overrides are "
                       f"{'skyrl-train' if old else 'skyrl'}'s")
    table = OLD_DEFAULTS if _layout(v) == "old" else NEW_DEFAULTS
    return table.get(key, (None, "SkyRL default"))


def _engine_key(v: View, name: str) -> str:
    """Where the rollout engine's settings sit in this layout."""
    return f"generator.{name}" if _layout(v) == "old" else f"generator.inference_engine.{name}"


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    strategy, ssrc = _get(v, "trainer.strategy")
    engine: Any = strategy if isinstance(strategy, Unknown) else \
        _STRATEGY[_layout(v)].get(str(strategy), Unknown(f"trainer.strategy {strategy!r}"))
    out["distributed"] = (engine, ssrc)
    bf16, bsrc = _get(v, "trainer.bf16")
    out["precision"] = (bf16 if isinstance(bf16, Unknown) else
                        "bf16" if bf16 in (True, "true", "True") else "fp32", bsrc)
    _training_fp8(v, out, engine)
    if engine == "megatron":
        # the Megatron workers build Megatron-Core models through Megatron-Bridge
        out.runs_on = ("megatron",)
        sizes: tuple[tuple[Stated, str], ...] = (("tp", "tensor_model_parallel_size"),
                                                 ("cp", "context_parallel_size"),
                                                 ("ep", "expert_model_parallel_size"))
        for name, key in sizes:
            value = v.int(f"{MEG}.{key}")
            out[name] = (value if value is not None else 1,
                         v.src(f"{MEG}.{key}", f"{_NEW}:190 ({key}: 1)"))
    mb = v.int("trainer.micro_train_batch_size_per_gpu")
    if mb:
        out["micro_batch"] = (mb, v.src("trainer.micro_train_batch_size_per_gpu"))
    prompt = v.int("trainer.max_prompt_length")
    gen = v.int("generator.sampling_params.max_generate_length")
    if prompt and gen:
        out["seq_len"] = (prompt + gen, v.src("generator.sampling_params.max_generate_length"))
    gpus = v.int("trainer.placement.policy_num_gpus_per_node")
    if gpus:
        nodes = v.int("trainer.placement.policy_num_nodes") or 1
        out["num_gpus"] = (gpus * nodes, v.src("trainer.placement.policy_num_gpus_per_node"))
    _rollout(v, out)
    return out.build()


# SkyRL PR merge ref adcfcead (2026-08-17; not on main at a9564572e, 2026-08-21) adds top-level
# megatron_config.fp8 / fp8_recipe / fp8_param / fp8_amax_compute_algo, folded into
# transformer_config_kwargs where that does not set the key (config.py:512-528, 605-613), and
# generator.inference_engine.serialized_weight_sync_mode: "blockwise" syncs FP8 weights with
# 128x128 block scales and serves them with vLLM quantization "fp8" (config.py:1154-1160;
# quantization/blockwise_fp8.py:146), "mxfp8" with "modelopt_mxfp8" (quantization/mxfp8.py:184)
_PR = "SkyRL adcfcead"
_SYNC = {"blockwise": "blockwise", "mxfp8": "mxfp8"}


def _tfc(v: View, key: str) -> tuple[Any, str]:
    """A TransformerConfig kwarg: transformer_config_kwargs.<key>, else megatron_config.<key>
    (the PR's top-level field, folded in when the kwarg is not set)."""
    if not v.has(f"{TFC}.{key}") and v.has(f"{MEG}.{key}"):
        return v.facts.get(f"{PREFIX}.{MEG}.{key}"), v.src(f"{MEG}.{key}")
    return _get(v, f"{TFC}.{key}")


def _training_fp8(v: View, out: IntentOut, engine: Any) -> None:
    fmt, fsrc = _tfc(v, "fp8")
    if isinstance(fmt, Unknown):
        out["fp8"] = (fmt, fsrc)
    elif fmt in (None, False, "null", "none", "None"):
        out["fp8"] = (False, "SkyRL trains in BF16 (trainer.bf16); FP8 training only through "
                             "megatron_config.transformer_config_kwargs.fp8 on Megatron")
    elif isinstance(engine, Unknown):
        out["fp8"] = (engine, v.src("trainer.strategy"))
    elif engine != "megatron":
        out["fp8"] = (False, f"{fsrc} is read only by the Megatron workers; trainer.strategy is "
                             f"{engine}")
    elif isinstance(fmt, str) and fmt.lower() in {"hybrid", "e4m3", "e5m2"}:
        out["fp8"] = (True, fsrc)
        out["format"] = (fmt.lower(), fsrc)
        out["backend"] = ("te", fsrc)
        recipe, rsrc = _tfc(v, "fp8_recipe")
        if isinstance(recipe, str) and recipe.strip().lower() == "auto":
            recipe = Unknown(f"fp8_recipe=auto: SkyRL picks mxfp8 on SM100+ (Blackwell) and "
                             f"blockwise before, on the GPU it runs on ({_PR} distributed/"
                             "megatron/quantization_utils.py:39-70)")
        out["recipe"] = (recipe, rsrc) if recipe is not None else \
            ("delayed", "Megatron TransformerConfig default (fp8_recipe delayed)")
        param, psrc = _tfc(v, "fp8_param")
        if param is not None:
            out["fp8_params"] = (param if isinstance(param, (bool, Unknown)) else
                                 str(param).lower() == "true", psrc)
    else:
        out["fp8"] = (Unknown(f"transformer_config_kwargs.fp8 is {str(fmt)[:40]!r}"), fsrc)


def _rollout(v: View, out: IntentOut) -> None:
    backend, bsrc = _get(v, _engine_key(v, "backend"))
    out["rollout.engine"] = (backend if isinstance(backend, Unknown) else str(backend).lower(),
                             bsrc)
    kwargs = _engine_key(v, "engine_init_kwargs")
    quant, qsrc = _get(v, f"{kwargs}.quantization")
    sync = v.facts.get(f"{PREFIX}.generator.inference_engine.serialized_weight_sync_mode")
    if sync is not None and str(sync).lower() not in ("none", "null", ""):
        where = v.src("generator.inference_engine.serialized_weight_sync_mode")
        recipe = _SYNC.get(str(sync).lower()) if not isinstance(sync, Unknown) else None
        out["rollout.fp8"] = (True, where) if recipe else (
            sync if isinstance(sync, Unknown) else
            Unknown(f"serialized_weight_sync_mode={str(sync)[:40]!r} is not known ({_PR})"),
            where)
        if recipe:   # the trainer's FP8 weights and scales, served as they are
            out["rollout.recipe"] = (recipe, where)
    elif isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, qsrc)
    else:
        on = str(quant).lower() == "fp8"
        out["rollout.fp8"] = (on, qsrc if quant is not None else
                              "SkyRL default engine_init_kwargs {} (no quantization)")
        # vLLM's online dynamic FP8 (quantization="fp8"): every Linear but lm_head in E4M3 with
        # a per-tensor weight scale, activations scaled dynamically per tensor
        # (https://docs.vllm.ai/en/v0.5.4/quantization/fp8.html, "Online Dynamic Quantization").
        if on:
            out["rollout.recipe"] = ("tensorwise", qsrc)
        else:   # FlashRL's FLASHRL_CONFIG (examples/flash_rl: `uv run --env-file .env.fp8`)
            flashrl.apply(out, v.facts, PREFIX, v.src, out["rollout.engine"][0])
    kv, ksrc = _get(v, f"{kwargs}.kv_cache_dtype")
    out["rollout.kv_cache_fp8"] = (kv if isinstance(kv, Unknown) else
                                   str(kv).lower().startswith("fp8"),
                                   ksrc if kv is not None else
                                   "the rollout engine's default KV cache dtype (auto)")
    kvformat.put(out, kv, ksrc)
    tis, tsrc = _get(v, "trainer.algorithm.off_policy_correction.tis_ratio_type")
    use, usrc = _get(v, "trainer.algorithm.use_tis")
    if tis not in (None, "null", "None", "") and not isinstance(tis, Unknown):
        out["rollout.is_correction"] = (True, tsrc)
    elif use in (True, "true", "True"):
        out["rollout.is_correction"] = (True, usrc)
    elif isinstance(tis, Unknown) or isinstance(use, Unknown):
        out["rollout.is_correction"] = ((tis, tsrc) if isinstance(tis, Unknown) else (use, usrc))
    else:
        out["rollout.is_correction"] = (False, tsrc)


FRAMEWORK = Framework(
    kind=KIND, title="SkyRL", formats=("text",), score=score, read=read_yaml,
    derive=derive, precedence=19,
    defaults=tuple(Default(k, str(val), "skyrl (19b0e132)", s)
                   for k, (val, s) in NEW_DEFAULTS.items()) +
    tuple(Default(k, str(val), "skyrl-train (bffec2a5)", s)
          for k, (val, s) in OLD_DEFAULTS.items()),
    # FSDP or Megatron by trainer.strategy: derive states Megatron as runs_on
    distributions=("skyrl", "skyrl-train"), rule_area="SKYRL",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("trainer.policy.model.path",)),
                ("micro_batch", ("trainer.micro_train_batch_size_per_gpu",)),
                ("tp", (f"{MEG}.tensor_model_parallel_size",))),
)
