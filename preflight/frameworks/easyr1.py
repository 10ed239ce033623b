"""EasyR1 (hiyouga/EasyR1, a verl fork with its own config schema): ``python3 -m
verl.trainer.main config=examples/config.yaml worker.actor.x=y ...`` and its YAML.

EasyR1 keeps verl's package name but not its Hydra tree: ``verl/trainer/main.py`` (read at
b44b311b, 2026-01-29, after v0.3.2) builds ``OmegaConf.structured(PPOConfig())``, merges the
YAML named by the ``config=`` word of the OmegaConf dotlist over it, then the rest of the dotlist
(l.90-101). Its sections are ``data`` / ``algorithm`` / ``worker`` / ``trainer``
(``worker.actor``, ``worker.rollout``, ``worker.ref``), not verl's ``actor_rollout_ref``. verl's
reader (:mod:`.verl`) keys on ``verl.trainer.main_ppo`` and verl's Hydra tree; the module
``verl.trainer.main`` (which verl does not have) and the ``config=`` word tell EasyR1 apart.

Precision at b44b311b: the actor is FSDP (``torch.distributed.fsdp`` FullyShardedDataParallel,
verl/workers/fsdp_workers.py l.30, 278-312) with ``MixedPrecision(param_dtype=mp_param_dtype)``,
``worker.actor.fsdp.mp_param_dtype`` default ``bf16`` (verl/workers/actor/config.py l.85);
the rollout is vLLM's ``LLM(..., dtype=worker.rollout.dtype)`` (default ``bf16``,
verl/workers/rollout/config.py l.31) with no quantization argument
(verl/workers/rollout/vllm_rollout_spmd.py l.127-146). Nothing under ``verl/`` says fp8,
float8 or quantiz: EasyR1 has no FP8 option. A key outside that schema (OmegaConf.structured
refuses it at launch) that names FP8 leaves FP8 Unknown: a fork of EasyR1 may read it.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import ckptname
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View, keys_matching, with_default
from preflight.reading.layered import load_chain
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ReaderOutput

KIND = "easyr1"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|[/.])verl[./]trainer[./]main(?:\.py)?$")
HINT = re.compile(r"\bverl[./]trainer[./]main\b(?![_\w])")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)))
_AT = "hiyouga/EasyR1@b44b311b"
DEFAULTS: dict[str, tuple[Any, str]] = {
    "worker.actor.strategy": ("fsdp", f"{_AT} verl/workers/actor/config.py:98 (strategy: fsdp)"),
    "worker.actor.fsdp.mp_param_dtype": (
        "bf16", f"{_AT} verl/workers/actor/config.py:85 (mp_param_dtype: bf16)"),
    "worker.rollout.name": ("vllm", f"{_AT} verl/workers/rollout/config.py:24 (name: vllm)"),
    "worker.rollout.dtype": ("bf16", f"{_AT} verl/workers/rollout/config.py:31 (dtype: bf16)"),
}
_NO_QUANT = (f"{_AT} verl/workers/rollout/vllm_rollout_spmd.py:127-146 (vLLM LLM(dtype=...) with "
             "no quantization argument)")
_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16",
           "half": "fp16", "fp32": "fp32", "float32": "fp32", "float": "fp32"}
_FP8_WORD = re.compile(r"fp8|float8|quantiz|e4m3|e5m2", re.I)


def score(data: Any) -> int:
    """EasyR1's YAML: ``worker`` holding ``actor`` and ``rollout`` beside ``data`` /
    ``algorithm`` / ``trainer`` (examples/config.yaml at b44b311b)."""
    worker = data.get("worker")
    if not isinstance(worker, dict) or not {"actor", "rollout"} <= set(map(str, worker)):
        return 0
    hits = len({"data", "algorithm", "trainer"} & set(map(str, data)))
    return 20 + hits if hits >= 2 else 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """The YAML as ``OmegaConf.load`` reads it (no defaults list), ``${...}`` resolved."""
    chain = load_chain(path, parsed, style="flat")
    facts, prov = chain.facts(PREFIX, Source(path, 1))
    return ReaderOutput(facts, prov, tuple(chain.problems))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``verl.trainer.main`` launch line: the ``config=`` YAML, then the dotlist in order
    (``OmegaConf.from_cli`` pops ``config``, main.py l.91-99)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    at = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    given = [(ov, src) for ov, src in read.overrides if ov.path == ("config",)]
    read.overrides = [(ov, src) for ov, src in read.overrides if ov.path != ("config",)]
    base: tuple[Any, Source] | None = None
    if given:
        ov, src = given[-1]
        value = ov.value
        if isinstance(value, str) and "$" not in value and read.folder is None:
            # OmegaConf.load opens it from the folder the command runs in: EasyR1's examples
            # are run from the checkout's top (`bash examples/x.sh`), a job root here
            value = locate(value, path) or under_roots(value) or value
        base = (value, src)
    merged = merged_facts(read, KIND, base, style="flat", key="config=")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = read.launch.entry.text, at
    if not given:
        facts[f"{PREFIX}.no_config"], prov[f"{PREFIX}.no_config"] = True, at
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _get(v: View, key: str) -> tuple[Any, str]:
    return with_default(v, key, DEFAULTS, f"{_AT} PPOConfig default")


def derive(f: Any, prov: Any) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    strategy, ssrc = _get(v, "worker.actor.strategy")
    out["distributed"] = (strategy if isinstance(strategy, Unknown) else
                          "fsdp1" if strategy == "fsdp" else
                          Unknown(f"worker.actor.strategy {str(strategy)[:40]!r}"), ssrc)
    dtype, dsrc = _get(v, "worker.actor.fsdp.mp_param_dtype")
    out["precision"] = (dtype if isinstance(dtype, Unknown) else _DTYPES.get(
        str(dtype).lower(), Unknown(f"mp_param_dtype {str(dtype)[:40]!r}")), dsrc)
    odd = keys_matching(v, _FP8_WORD)
    if odd:
        out["fp8"] = (Unknown(f"{odd[0]} is not a key of EasyR1's PPOConfig ({_AT}: "
                              "OmegaConf.structured refuses it at launch); a fork may read it"),
                      v.src(odd[0]))
    else:
        out["fp8"] = (False, f"{dsrc}; EasyR1 has no FP8 option ({_AT}: no fp8 / float8 / "
                             "quantization in verl/)")
    _rollout(v, out, odd)
    gpus, nodes = v.int("trainer.n_gpus_per_node"), v.int("trainer.nnodes")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), v.src("trainer.n_gpus_per_node"))
    return out.build()


def _rollout(v: View, out: IntentOut, odd: list[str]) -> None:
    name, nsrc = _get(v, "worker.rollout.name")
    out["rollout.engine"] = (name if isinstance(name, Unknown) else str(name).lower(), nsrc)
    dtype, dsrc = _get(v, "worker.rollout.dtype")
    model, msrc = _get(v, "worker.actor.model.model_path")
    named = ckptname.says_fp8(model[:4096]) if isinstance(model, str) else None
    if isinstance(dtype, Unknown):
        out["rollout.fp8"] = (dtype, dsrc)
    elif named:
        out["rollout.fp8"] = (Unknown(f"model_path {model[:80]!r} looks like an FP8 checkpoint, "
                                      "whose quantization_config vLLM follows (not read)"), msrc)
    elif odd:
        out["rollout.fp8"] = (Unknown(f"{odd[0]} is not a key of EasyR1's schema"), v.src(odd[0]))
    else:
        out["rollout.fp8"] = (False, f"{dsrc} (dtype {dtype}); {_NO_QUANT}")
    out["rollout.kv_cache_fp8"] = (out["rollout.fp8"][0] if odd else False, _NO_QUANT)


FRAMEWORK = Framework(
    kind=KIND, title="EasyR1", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=38,
    # OmegaConf.load refuses a key given twice
    duplicate_keys="error",
    defaults=tuple(Default(k, str(val), "EasyR1 b44b311b", s) for k, (val, s) in DEFAULTS.items()),
    distributions=(), rule_area="",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("worker.actor.model.model_path",)),),
)
