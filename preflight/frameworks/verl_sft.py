"""verl's SFT trainer: ``torchrun -m verl.trainer.sft_trainer engine=<x> engine.<key>=...``
(``sft_trainer_ray`` the same), for :mod:`.verl`.

Read at verl v0.9.0 (483b8a00): ``@hydra.main(config_path="config",
config_name="sft_trainer_engine")`` (verl/trainer/sft_trainer.py l.460), whose ``defaults:``
take ``engine@engine: fsdp``; ``engine=<name>`` on the command line picks another
``config/engine/<name>.yaml`` (fsdp, megatron, automodel, veomni, torchtitan, mindspeed). No
rollout runs. FP8, by engine:

- ``megatron``: ``engine.override_transformer_config.fp8`` (``hybrid`` | ``e4m3``) and
  ``fp8_recipe`` reach Megatron's TransformerConfig, as on the PPO Megatron engine
  (docs/low_precision/fp8.md): Transformer Engine FP8.
- ``automodel``: ``engine.enable_fp8`` (engine/automodel.yaml l.28-29, ``AutomodelEngineConfig``
  verl/workers/config/engine.py l.634) is the only FP8 switch, and
  verl/workers/engine/automodel/utils.py l.144-147 hands NeMo-Automodel ``FP8Config()``, whose
  ``enabled`` defaults to False (nemo_automodel/components/quantization/fp8.py l.31, l.58 at
  v0.4.0, v0.5.0 and main 36044ad3): ``apply_fp8_to_model`` returns the model unchanged ("FP8
  quantization is disabled", l.184-187). The switch is asked and dropped: the model trains in
  BF16 (``Derived.overrides_fp8``, FP8D-VERL-0009); verl main 1dda039b (2026-08-22) is the same.
- the others (fsdp, veomni, torchtitan, mindspeed) have no FP8 setting in their engine config.
"""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import base_unread

KIND = "verl"
CONFIG = "sft_trainer_engine"
ENGINE = "engine"
TFC = f"{ENGINE}.override_transformer_config"
_SRC = "verl v0.9.0 verl/trainer/config"
DROPPED = ("verl v0.9.0 verl/workers/engine/automodel/utils.py l.144-147 passes FP8Config(), "
           "whose enabled defaults to False (nemo_automodel components/quantization/fp8.py "
           "l.31): apply_fp8_to_model returns the model unchanged")
_NO_FP8 = ("fsdp", "veomni", "torchtitan", "mindspeed")
_DISTRIBUTED = {"fsdp": "fsdp1", "fsdp2": "fsdp2", "ddp": "ddp", "megatron": "megatron"}


def is_sft(v: View) -> bool:
    """The job runs verl's SFT trainer: its entry point, or a config over sft_trainer_engine."""
    entry = str(v.get("entry", ""))
    packaged = v.get("defaults_packaged")
    return v.get("packaged_config") == CONFIG or \
        entry.removesuffix(".py").replace("/", ".").endswith(("trainer.sft_trainer",
                                                               "trainer.sft_trainer_ray")) or \
        (isinstance(packaged, list) and any(CONFIG in str(p) for p in packaged))


def _engine(v: View) -> tuple[Any, str]:
    """The engine group (``engine=<name>``, else the ``strategy`` a job's config states, else
    sft_trainer_engine.yaml's ``engine@engine: fsdp``)."""
    for key in ("engine_group", ENGINE):      # the launch line's group choice, a YAML's
        name = v.unknown(key) or v.get(key)
        if isinstance(name, (str, Unknown)) and not v.has(f"{ENGINE}.strategy"):
            return name, v.src(key)
    if v.has(f"{ENGINE}.strategy"):
        return v.get(f"{ENGINE}.strategy"), v.src(f"{ENGINE}.strategy")
    unread = base_unread(v.facts, KIND)
    if unread is not None:
        return unread, v.src("base_config")
    return "fsdp", f"{_SRC}/sft_trainer_engine.yaml (defaults: engine@engine: fsdp)"


def derive(v: View) -> Derived:
    out = IntentOut()
    engine, src = _engine(v)
    if isinstance(engine, Unknown):
        out["fp8"] = (engine, src)
        out["distributed"] = (engine, src)
        return out.build()
    name = str(engine).lower()
    if name == "automodel":
        _automodel(v, out)
    elif name == "megatron":
        _megatron(v, out)
    elif name in _NO_FP8:
        out["fp8"] = (False, f"{src} (verl's {name} engine has no FP8 setting: "
                             f"{_SRC}/engine/{name}.yaml)")
        out["distributed"] = (Unknown(f"verl's {name} engine") if name not in _DISTRIBUTED
                              else _DISTRIBUTED[name], src)
        out["precision"] = ("bf16", v.src(f"{ENGINE}.dtype", f"{_SRC}/engine/{name}.yaml"))
    else:
        out["fp8"] = (Unknown(f"engine={name[:40]!r} is no engine verl v0.9.0 ships"), src)
    return out.build()


def _automodel(v: View, out: IntentOut) -> None:
    key = f"{ENGINE}.enable_fp8"
    strategy = v.get(f"{ENGINE}.distributed_strategy", "fsdp2")
    out["distributed"] = (_DISTRIBUTED.get(str(strategy), Unknown(
        f"automodel distributed_strategy {str(strategy)[:40]!r}")),
        v.src(f"{ENGINE}.distributed_strategy", f"{_SRC}/engine/automodel.yaml"))
    sizes: tuple[tuple[Stated, str], ...] = (("tp", "tp_size"), ("cp", "cp_size"),
                                             ("ep", "ep_size"))
    for name, field in sizes:
        value = v.int(f"{ENGINE}.{field}") if v.has(f"{ENGINE}.{field}") else 1
        out[name] = (value if value is not None else Unknown(f"{field} is not a number"),
                     v.src(f"{ENGINE}.{field}", f"{_SRC}/engine/automodel.yaml"))
    out["precision"] = ("bf16", v.src(f"{ENGINE}.mp_param_dtype",
                                      f"{_SRC}/engine/automodel.yaml (mp_param_dtype: bf16)"))
    asked = v.unknown(key) or v.truthy(key)
    if isinstance(asked, Unknown):
        out["fp8"] = (False, f"{v.src(key)} ({DROPPED}, whatever the value)")
    elif asked:
        out["fp8"] = (True, v.src(key))
        out["backend"] = ("torchao", v.src(key))
        out["recipe"] = ("tensorwise", f"{v.src(key)} (FP8Config() recipe_name None)")
        out.overrides_fp8 = (True, f"{v.src(key)}: {DROPPED}")
    else:
        out["fp8"] = (False, v.src(key, f"{_SRC}/engine/automodel.yaml (enable_fp8: false)"))


def _megatron(v: View, out: IntentOut) -> None:
    out.runs_on = ("megatron",)
    out["distributed"] = ("megatron", v.src(ENGINE))
    fmt = v.unknown(f"{TFC}.fp8") or v.get(f"{TFC}.fp8")
    tp = v.int(f"{ENGINE}.tensor_model_parallel_size") if \
        v.has(f"{ENGINE}.tensor_model_parallel_size") else 1
    out["tp"] = (tp if tp is not None else Unknown("tensor_model_parallel_size is not a number"),
                 v.src(f"{ENGINE}.tensor_model_parallel_size", f"{_SRC}/engine/megatron.yaml"))
    out["precision"] = ("bf16", v.src(f"{ENGINE}.dtype", f"{_SRC}/engine/megatron.yaml"))
    if isinstance(fmt, Unknown):
        out["fp8"] = (fmt, v.src(f"{TFC}.fp8"))
    elif isinstance(fmt, str) and fmt.lower() in {"hybrid", "e4m3", "e5m2"}:
        src = v.src(f"{TFC}.fp8")
        out["fp8"] = (True, src)
        out["format"] = (fmt.lower(), src)
        out["backend"] = ("te", src)
        recipe = v.get(f"{TFC}.fp8_recipe")
        out["recipe"] = (recipe, v.src(f"{TFC}.fp8_recipe")) if recipe is not None else \
            ("delayed", "Megatron TransformerConfig default (fp8_recipe delayed)")
        param = v.unknown(f"{TFC}.fp8_param") or v.truthy(f"{TFC}.fp8_param")
        out["fp8_params"] = (param, v.src(f"{TFC}.fp8_param", "TransformerConfig default"))
    else:
        out["fp8"] = (False, v.src(f"{TFC}.fp8", f"{_SRC}/engine/megatron.yaml "
                                                  "(override_transformer_config: no fp8)"))
