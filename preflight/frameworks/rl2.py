"""RL2 (ChenmienTan/RL2, "Ray Less RL"): ``torchrun ... -m RL2.trainer.ppo key=value ...``.

RL2's trainers are ``@hydra.main`` over the packaged ``RL2/trainer/config/<name>.yaml`` (ppo, sft,
dpo, rm); the launch line's ``key=value`` overrides are OmegaConf's. Two layouts, told apart by
the override keys:

- the flat layout (jusjinuk/RL2 fork at 3c0e3e65, 2025-09; upstream until its config split):
  ``rollout.dtype: bfloat16`` (ppo.yaml:46) is handed to SGLang's ``Engine(dtype=...)`` with no
  other engine argument (RL2/workers/rollout.py:34-41: no quantization, no kv_cache_dtype), and
  the actor is FSDP with ``MixedPrecision(param_dtype=torch.bfloat16, ...)`` fixed in code
  (RL2/utils/data_parallelism.py:26-30). Nothing in the tree says fp8 or quantiz.
- the grouped layout (upstream 9161ede5, 2026-05): ``defaults: [actor: fsdp]`` (``actor=megatron``
  picks Megatron), ``actor.dtype: bfloat16`` (config/actor/fsdp.yaml:3, megatron.yaml:2), and
  ``rollout.server_args`` (ppo.yaml:29-33) handed whole to SGLang's ``ServerArgs(**server_args)``
  (RL2/workers/rollout.py:129-135): ``rollout.server_args.quantization=fp8`` /
  ``kv_cache_dtype=fp8_e4m3`` reach the engine as SGLang reads them. On Megatron,
  ``actor.tf_config`` is set key by key on the provider (workers/megatron/base.py:53-55), so
  ``actor.tf_config.fp8=hybrid|e4m3`` would be Transformer Engine FP8 training.

The package is RL2 itself (``-m RL2.trainer.ppo`` runs from the checkout's top): where the job
holds ``RL2/trainer/config/<trainer>.yaml`` (next to the script, or from a job root) it is read
under the overrides (a fork's own defaults); else the defaults are cited from the pinned commits.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import kvformat
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ReaderOutput

KIND = "rl2"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|[/.])RL2[./]trainer[./](?:ppo|sft|dpo|rm)(?:\.py)?$")
HINT = re.compile(r"\bRL2[./]trainer[./](?:ppo|sft|dpo|rm)\b")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)),
                value_flags=frozenset({"config-path", "config-name", "config-dir", "cp", "cn",
                                       "cd"}))
_FLAT = "jusjinuk/RL2@3c0e3e65"
_GROUPED = "ChenmienTan/RL2@9161ede5"
# what each layout uses when the launch line does not say: (value, where it was read)
FLAT_DEFAULTS: dict[str, tuple[Any, str]] = {
    "rollout.dtype": ("bfloat16", f"{_FLAT} RL2/trainer/config/ppo.yaml:46 (rollout.dtype: "
                                  "bfloat16)"),
    "rollout.quantization": (None, f"{_FLAT} RL2/workers/rollout.py:34-41 (SGLang Engine gets "
                                   "model_path, dtype, tp_size, mem_fraction_static only: no "
                                   "quantization)"),
    "rollout.kv_cache_dtype": (None, f"{_FLAT} RL2/workers/rollout.py:34-41 (no kv_cache_dtype: "
                                     "SGLang's auto, the model dtype)"),
    "actor.dtype": ("bfloat16", f"{_FLAT} RL2/utils/data_parallelism.py:26-30 (FSDP "
                                "MixedPrecision param_dtype=torch.bfloat16, fixed in code)"),
}
GROUPED_DEFAULTS: dict[str, tuple[Any, str]] = {
    "actor_group": ("fsdp", f"{_GROUPED} RL2/trainer/config/ppo.yaml:1-5 (defaults: actor: fsdp)"),
    "actor.dtype": ("bfloat16", f"{_GROUPED} RL2/trainer/config/actor/fsdp.yaml:3 (dtype: "
                                "bfloat16)"),
    "rollout.server_args.quantization": (None, f"{_GROUPED} RL2/trainer/config/ppo.yaml:29-33 "
                                               "(server_args: no quantization)"),
    "rollout.server_args.kv_cache_dtype": (None, f"{_GROUPED} RL2/trainer/config/ppo.yaml:29-33 "
                                                 "(server_args: no kv_cache_dtype: SGLang's "
                                                 "auto, the model dtype)"),
}
_FP8_FORMATS = frozenset({"hybrid", "e4m3", "e5m2"})


def score(data: Any) -> int:
    """RL2's configs are its own package's: read from its launch line."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("RL2 is read from the script that runs RL2.trainer.ppo; pass the launch "
                     "script")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``RL2.trainer.*`` launch line: its overrides in order (the packaged defaults are
    cited, not opened)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    # a job that holds RL2 itself (`-m RL2.trainer.ppo` run from its checkout, a fork's own
    # defaults) has its packaged config read under the overrides; one it does not hold is cited
    entry = str(read.launch.entry.text)
    rel = f"RL2/trainer/config/{re.split(r'[./]', entry.removesuffix('.py'))[-1]}.yaml"
    found = locate(rel, path) or under_roots(rel)
    at = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    merged = merged_facts(read, KIND, (found, at) if found else None, style="hydra",
                          key="--config-name")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = entry, at
    for ov, src in read.overrides:
        # Hydra's group choice (`actor=megatron`, ppo.yaml's defaults list) is not a value of
        # the merged config: `actor.tf_config.x=` after it would replace it there
        if ov.path == ("actor",) and ov.op == "set" and not isinstance(ov.value, dict):
            facts[f"{PREFIX}.actor_group"], prov[f"{PREFIX}.actor_group"] = ov.value, src
    name = read.flag("config-name", "cn")
    if name is not None:
        facts[f"{PREFIX}.base_config"] = Unknown(
            f"--config-name {str(name[0])[:80]} (a config of the job's own) was not read, so "
            "the settings it holds are not known")
        prov[f"{PREFIX}.base_config"] = name[1]
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _layout(v: View) -> str:
    """``grouped`` when an override names the grouped layout's keys, else ``flat``."""
    keys = [k[len(v.prefix):] for k in v.facts if k.startswith(v.prefix)]
    grouped = any(k.startswith(("rollout.server_args.", "rollout.train.", "actor.tf_config."))
                  or k == "actor_group" for k in keys)
    return "grouped" if grouped else "flat"


def _get(v: View, key: str, table: dict[str, tuple[Any, str]]) -> tuple[Any, str]:
    if v.has(key):
        return v.facts.get(v.prefix + key), v.src(key)
    base = v.facts.get(f"{PREFIX}.base_config")
    if isinstance(base, Unknown):
        return base, v.src("base_config")
    return table.get(key, (None, "RL2 default"))


def derive(f: Any, prov: Any) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    table = GROUPED_DEFAULTS if _layout(v) == "grouped" else FLAT_DEFAULTS
    engine, esrc = _get(v, "actor_group", table) if table is GROUPED_DEFAULTS else \
        ("fsdp", FLAT_DEFAULTS["actor.dtype"][1])
    dist: Any = engine if isinstance(engine, Unknown) else \
        {"fsdp": "fsdp1", "megatron": "megatron"}.get(str(engine),
                                                      Unknown(f"actor={str(engine)[:40]!r}"))
    out["distributed"] = (dist, esrc)
    dtype, dsrc = _get(v, "actor.dtype", table)
    out["precision"] = (dtype if isinstance(dtype, Unknown) else
                        {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(
                            str(dtype), Unknown(f"actor.dtype {str(dtype)[:40]!r}")), dsrc)
    fmt = v.facts.get(f"{PREFIX}.actor.tf_config.fp8")
    if dist == "megatron" and fmt is not None:
        fsrc = v.src("actor.tf_config.fp8")
        if isinstance(fmt, Unknown):
            out["fp8"] = (fmt, fsrc)
        elif str(fmt).lower() in _FP8_FORMATS:
            out["fp8"] = (True, fsrc)
            out["format"] = (str(fmt).lower(), fsrc)
            out["backend"] = ("te", fsrc)
        elif str(fmt).lower() in ("null", "none", "false", ""):
            out["fp8"] = (False, fsrc)
        else:
            out["fp8"] = (Unknown(f"actor.tf_config.fp8 {str(fmt)[:40]!r}"), fsrc)
    else:
        out["fp8"] = (False, f"{dsrc}; RL2 has no FP8 training option"
                             + (" (actor.tf_config.fp8 is read by the Megatron actor only)"
                                if fmt is not None else ""))
    if dist == "megatron":
        out.runs_on = ("megatron",)
    _rollout(v, out, table)
    return out.build()


def _rollout(v: View, out: IntentOut, table: dict[str, tuple[Any, str]]) -> None:
    out["rollout.engine"] = ("sglang", f"{_FLAT if table is FLAT_DEFAULTS else _GROUPED} "
                                       "RL2/workers/rollout.py (SGLang Engine / ServerArgs)")
    grouped = table is GROUPED_DEFAULTS
    qkey = "rollout.server_args.quantization" if grouped else "rollout.quantization"
    kkey = "rollout.server_args.kv_cache_dtype" if grouped else "rollout.kv_cache_dtype"
    quant, qsrc = _get(v, qkey, table)
    if not grouped and v.has(qkey):
        quant, qsrc = None, f"{qsrc} (not read: {FLAT_DEFAULTS[qkey][1]})"
    if isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, qsrc)
    elif quant in (None, "null", "None", "") and \
            apart.by_weights(None, v.get("actor.model_name")) is True:
        # SGLang given no quantization serves the checkpoint's quantization_config
        # (rollout_apart); what becomes of it when RL2 syncs the BF16 actor into that engine
        # is not documented (RL2/workers/rollout.py)
        model = str(v.get("actor.model_name"))[:80]
        out["rollout.fp8"] = (Unknown(f"actor.model_name {model!r} is named FP8: SGLang serves "
                                      "it as its quantization_config says, then takes the "
                                      "BF16 actor's weights at each sync"),
                              v.src("actor.model_name"))
    elif quant in (None, "null", "None", ""):
        dtype, dsrc = _get(v, "rollout.dtype" if not grouped else "actor.dtype", table)
        out["rollout.fp8"] = (False, f"{qsrc}; the engine runs in {dtype} ({dsrc})")
    elif str(quant).lower() == "fp8":
        # SGLang's quantization="fp8" on a BF16 checkpoint: online per-tensor FP8 weights
        out["rollout.fp8"] = (True, qsrc)
        out["rollout.recipe"] = ("tensorwise", qsrc)
    else:
        out["rollout.fp8"] = (Unknown(f"SGLang quantization {str(quant)[:40]!r} is not read "
                                      "here"), qsrc)
    kv, ksrc = _get(v, kkey, table)
    if not grouped and v.has(kkey):
        kv, ksrc = None, f"{ksrc} (not read: {FLAT_DEFAULTS[kkey][1]})"
    out["rollout.kv_cache_fp8"] = (apart.kv_fp8(kv), ksrc)
    kvformat.put(out, kv, ksrc)


FRAMEWORK = Framework(
    kind=KIND, title="RL2", formats=("text",), score=score, read=read_yaml,
    derive=derive, precedence=37,
    defaults=tuple(Default(k, str(val), "RL2 flat (3c0e3e65)", s)
                   for k, (val, s) in FLAT_DEFAULTS.items()) +
    tuple(Default(k, str(val), "RL2 grouped (9161ede5)", s)
          for k, (val, s) in GROUPED_DEFAULTS.items()),
    distributions=(), rule_area="",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("actor.model_name",)),),
)
