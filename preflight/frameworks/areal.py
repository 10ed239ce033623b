"""AReaL (inclusionAI/AReaL): its experiment YAML (``experiment_name``, ``trial_name``, ``cluster``,
``actor``, ``rollout``, ...), read at commit 4aef98d8 (2026-04).

AReaL merges the YAML into ``OmegaConf.structured`` of its dataclasses and builds them with
``OmegaConf.to_object`` (areal/api/cli_args.py ``to_structured_cfg`` / ``load_expr_config``,
l.2950-2963), so a quoted ``'true'`` is converted. The actor's engine is the prefix of
``actor.backend`` (``megatron:d4p1t1``, ``fsdp:d4``, ``archon:d2``; required, l.1160-1166):

- ``megatron``: FP8 training is ``actor.megatron.fp8_config`` set (``FP8EngineConfig``, default
  None: off, l.914; ``megatron_engine.py`` l.203-204 ``enable_fp8 = fp8_config is not None``),
  through Megatron-Core and Transformer Engine: ``mode`` e4m3 / hybrid is ``fp8`` (the format),
  ``recipe`` (default ``delayed``), ``param`` the FP8 parameters (l.730-800; copied onto the
  TransformerConfig with the ``fp8_`` prefix, megatron_engine.py l.1154-1176);
- ``archon``: ``actor.archon.fp8_config.mode: blockwise`` (``ArchonFP8Config``, default
  ``disabled``, l.465-535): torchao's blockwise e4m3 matmuls;
- ``fsdp``: no FP8 training (areal/engine/fsdp_engine.py holds no FP8 path at 4aef98d8).

Rollout: ``rollout.backend`` (``sglang:d4p1t1`` / ``vllm:...``) serves ``actor.path``; its
weights are FP8 when the checkpoint is (an ``...-FP8`` name: Qwen/Qwen3-1.7B-FP8), which the
Megatron engine requires for FP8 training (``_validate_fp8_consistency``, megatron_engine.py
l.1186-1200).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.readers import read_plain

KIND = "areal"
PREFIX = f"config.{KIND}"
AT = "inclusionAI/AReaL 4aef98d8 areal/api/cli_args.py"
_MARKERS = frozenset({"experiment_name", "trial_name", "cluster", "actor", "rollout", "gconfig",
                      "ref", "sglang", "vllm", "saver", "recover", "evaluator", "stats_logger",
                      "launcher", "train_dataset", "valid_dataset", "allocation_mode"})
_FP8_NAME = re.compile(r"(?i)(?:^|[-_./])fp8(?:$|[-_./])")
_FORMATS = {"e4m3": "e4m3", "hybrid": "hybrid"}


def score(data: Any) -> int:
    """An AReaL experiment: ``experiment_name`` and ``trial_name`` with an ``actor`` section
    whose ``backend`` names its engine (``megatron:d4``)."""
    top = {str(k) for k in data}
    actor = data.get("actor")
    if not {"experiment_name", "trial_name"} <= top or not isinstance(actor, dict) or \
            not isinstance(actor.get("backend"), str):
        return 0
    return 6 + 2 * len(top & _MARKERS)


read = read_plain(PREFIX)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    backend = v.get("actor.backend")
    engine = backend.split(":", 1)[0].strip().lower() if isinstance(backend, str) else None
    src = v.src("actor.backend", "actor.backend")
    if engine == "megatron":
        out.runs_on = ("megatron",)
        out["distributed"] = ("megatron", src)
        _megatron(v, out)
    elif engine == "archon":
        mode = v.get("actor.archon.fp8_config.mode")
        on = mode is not None and str(mode).lower() != "disabled"
        where = v.src("actor.archon.fp8_config.mode", f"{AT} l.465-535: fp8_config.mode "
                                                       "defaults to disabled")
        out["fp8"] = (True, where) if on else (False, where)
        if on:
            out["backend"] = ("torchao", where)
            out["recipe"] = (str(mode).lower(), where)
            out["format"] = ("e4m3", where)
    elif engine == "fsdp":
        out["distributed"] = ("fsdp2", src)
        out["fp8"] = (False, f"{src} (AReaL's FSDP engine has no FP8 training at 4aef98d8)")
    else:
        out["fp8"] = (Unknown(f"actor.backend {str(backend)[:60]!r}: an engine this reader does "
                              "not know (AReaL has megatron, fsdp and archon)"), src)
    _rollout(v, out)
    return out.build()


def _megatron(v: View, out: IntentOut) -> None:
    key = "actor.megatron.fp8_config"
    if not v.any_prefix(key) or (v.has(key) and v.get(key) is None):
        out["fp8"] = (False, v.src(key, f"{AT} l.914: actor.megatron.fp8_config defaults to "
                                        "None (FP8 off)"))
        return
    where = v.src(f"{key}.mode", v.src(f"{key}.recipe", v.src(key)))
    out["fp8"] = (True, where)
    out["backend"] = ("te", where)
    mode = str(v.get(f"{key}.mode") or "e4m3").lower()
    out["format"] = (_FORMATS.get(mode, Unknown(f"fp8_config.mode {mode[:40]!r}")),
                     v.src(f"{key}.mode", f"{AT} l.738: mode defaults to e4m3"))
    out["recipe"] = (str(v.get(f"{key}.recipe") or "delayed").lower(),
                     v.src(f"{key}.recipe", f"{AT} l.747: recipe defaults to delayed"))
    out["fp8_params"] = (v.truthy(f"{key}.param"),
                         v.src(f"{key}.param", f"{AT} l.754: param defaults to False"))


def _rollout(v: View, out: IntentOut) -> None:
    backend = v.get("rollout.backend")
    engine = backend.split(":", 1)[0].strip().lower() if isinstance(backend, str) else None
    if engine not in ("sglang", "vllm"):
        return
    out["rollout.engine"] = (engine, v.src("rollout.backend"))
    path = v.get("actor.path")
    if isinstance(path, str) and _FP8_NAME.search(path):
        # the rollout serves the actor's checkpoint in its own quantization (FP8 here)
        out["rollout.fp8"] = (True, v.src("actor.path"))
    else:
        out["rollout.fp8"] = (Unknown(f"{engine} serves actor.path {str(path)[:80]!r} in the "
                                      "precision of its quantization_config, not read here"),
                              v.src("actor.path", v.src("rollout.backend")))


FRAMEWORK = Framework(
    kind=KIND, title="AReaL", formats=("yaml",), score=score, read=read, derive=derive,
    precedence=22, distributions=("areal",), rule_area="AREAL", area_title="AReaL",
    # run from a checkout of the repository (examples/math/gsm8k_rl.py with --config)
    from_source=True,
    file_strings="words",
    file_strings_why=(
        "AReaL merges the YAML into OmegaConf.structured of its dataclasses (areal/api/"
        "cli_args.py l.2950-2963 @ 4aef98d8), which converts a string for a bool field"),
    shape_keys=(("model", ("actor.path",)),),
)
