"""OLMo-core (allenai/OLMo-core): its training scripts are Python (``src/scripts/train/*.py``,
the model ``ladder`` scripts) that build a ``TransformerTrainModuleConfig``; the script is
parsed, never imported, and neither is olmo_core.

FP8 is ``TransformerTrainModuleConfig(float8_config=Float8Config(...))``, read at
allenai/OLMo-core v2.2.0 (2025-08-26), v2.4.0 (2025-11-20) and v2.5.0 (2026-04-02,
``src/olmo_core/float8/__init__.py``, ``float8/ao.py``, ``train/train_module/transformer/
config.py`` l.303, ``common.py`` l.60-63, ``nn/transformer/model.py`` l.576-594):

- ``float8_config`` defaults to None (no FP8); ``Float8Config.enabled`` defaults to True, and
  ``enabled=False`` makes it a no-op (the official scripts ship ``Float8Config(enabled=False)`` and
  switch it on from the command line: ``--train_module.float8_config.enabled=true``,
  ``Config.merge`` with each value through ``yaml.safe_load``, config.py l.197-225, l.352-362).
- torchao does the work: ``ao`` (an ``AOFloat8LinearConfig``, ``.recommended()`` = FSDP float8
  all-gather + power-of-2 scales) or ``ao_recipe`` (``tensorwise`` | ``rowwise`` |
  ``rowwise_with_gw_hp``) go to ``convert_to_float8_training``; neither given is torchao's default
  ``Float8LinearConfig()`` (tensorwise). ``ao_mx`` (an ``AOMXLinearConfig``, from v2.5.0, PR 510)
  goes to ``quantize_(model, MXLinearConfig)``: MXFP8, and "MX format training is only supported on
  SM100 or later" (RuntimeError below compute capability 10.0). The three are mutually exclusive.
- Which modules: every ``nn.Linear`` but the LM head (``lm_head.w_out`` always ignored) and
  ``modules_to_ignore``; the float8 path also skips a Linear with a dimension not divisible by 16.
- ``compile_model`` (default False), ``dp_config=TransformerDataParallelConfig(name=fsdp|hsdp|ddp)``
  (FSDP2's ``fully_shard``).

Facts: ``config.olmo_core.train_module`` (the class), ``config.olmo_core.float8_config`` (
``Float8Config``, None, or Unknown) with ``.enabled``, ``.ao_mx`` (the constructor: ``AOMXLinearConfig``
or ``mxfp8_cublas_rceil``) and ``.ao_mx.<field>``, ``.ao_recipe``, ``.ao`` and ``.ao.<field>``,
``.modules_to_ignore``; ``config.olmo_core.compile_model``, ``.max_sequence_length``,
``.dp_config.name``; a launch line's ``--train_module.<path>=<value>`` words replace the script's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.types import ReaderOutput

KIND = "olmo_core"
PREFIX = f"config.{KIND}"
PY_HINT = re.compile(r"\bolmo_core\b")
TRAIN_MODULE = re.compile(r"^olmo_core\.[\w.]*\bTransformer(?:Pipeline)?TrainModuleConfig$")
FLOAT8 = re.compile(r"^olmo_core\.float8(?:\.\w+)*\.Float8Config$")
MX = re.compile(r"^olmo_core\.float8(?:\.\w+)*\.AOMXLinearConfig(?:\.(\w+))?$")
COOKBOOK = re.compile(r"^olmo_core\.internal\.cookbook\.configure_train_module$")
AO = re.compile(r"^olmo_core\.float8(?:\.\w+)*\.AOFloat8LinearConfig(?:\.(\w+))?$")
PRESETS: dict[str, dict[str, Any]] = {
    # float8/ao.py @ v2.5.0 l.226-233: "standard mxfp8 recipe predefined in torchao" (which also
    # sets kernel_preference=AUTO there; OLMo-core does not)
    "mxfp8_cublas_rceil": {"mxfp8_cast_kernel_choice": "cuda", "scale_calculation_mode": "rceil"},
    # float8/ao.py l.193-200
    "recommended": {"enable_fsdp_float8_all_gather": True,
                    "force_recompute_fp8_weight_in_bwd": True,
                    "round_scales_to_power_of_2": True},
}
TRAIN_KEYS = ("compile_model", "max_sequence_length", "rank_microbatch_size")
OLD_FLOAT8 = ("scaling_type_input", "scaling_type_weight", "scaling_type_grad_output", "compile")
"""Float8Config's fields up to v2.0.1, replaced by ``ao`` / ``ao_recipe`` in v2.1.0 (PR 228)."""
_SRC = "allenai/OLMo-core@v2.5.0"
_MAX_ARGS = 256


def _word(value: Any) -> Any:
    """An enum member or a string as OLMo-core's StrEnum compares it (``DType.bfloat16`` ->
    ``bfloat16``, ``AOFloat8LinearRecipe.rowwise`` -> ``rowwise``)."""
    if isinstance(value, Ref):
        return value.last
    return value


def read_python(module: Module) -> ReaderOutput:
    """``TransformerTrainModuleConfig(..., float8_config=Float8Config(...))`` ->
    ``config.olmo_core.*`` at the calls' lines, then the launch line's ``--train_module.*``."""
    out = PyOut(module)
    built: list[Call] = []       # Float8Config calls, to tell one no train module takes
    taken: set[int] = set()
    for call, _ in out.calls():
        if FLOAT8.match(call.func):
            built.append(call)
        elif COOKBOOK.match(call.func):
            _cookbook(out, call)
        elif TRAIN_MODULE.match(call.func):
            out.put(f"{PREFIX}.train_module", call.name, call.line)
            for key in TRAIN_KEYS:
                if key in call.kwargs:
                    out.put(f"{PREFIX}.{key}", call.kwargs[key], call.lines.get(key, call.line))
            dp = call.kwargs.get("dp_config")
            if isinstance(dp, Call):
                out.put(f"{PREFIX}.dp_config.name", _word(dp.value("name", Unresolved(
                    "TransformerDataParallelConfig(name=) not given"))), dp.line)
            elif "dp_config" in call.kwargs:
                out.put(f"{PREFIX}.dp_config.name", dp, call.lines.get("dp_config", call.line))
            value = call.value("float8_config")
            line = call.lines.get("float8_config", call.line)
            if isinstance(value, Call) and FLOAT8.match(value.func):
                taken.add(value.line)
                _float8(out, value)
            else:
                # None or not given (the default): a second train module config of the file
                # that differs (one in a function OLMo-core may call) makes it Unknown
                out.put(f"{PREFIX}.float8_config", value, line)
    for call in built:
        if call.line not in taken and f"{PREFIX}.train_module" not in out.facts:
            # built here, taken by a train module config this file does not build (a helper's)
            out.put(f"{PREFIX}.float8_config", Unresolved(
                f"a Float8Config is built at line {call.line}, but no TransformerTrainModuleConfig "
                "in this file takes it: whether the job uses it is not known"), call.line)
    if f"{PREFIX}.train_module" in out.facts or f"{PREFIX}.float8_config" in out.facts:
        _overrides(module, out)
    return out.output()


def _cookbook(out: PyOut, call: Call) -> None:
    """``cookbook.configure_train_module(..., float8_enabled=True)`` (internal/cookbook.py
    l.44-90 @ v2.5.0, alike at v2.4.0): a TransformerTrainModuleConfig with compile_model=True,
    HSDP, and Float8Config(enabled=float8_enabled (default False), ao=recommended)."""
    out.put(f"{PREFIX}.train_module", "TransformerTrainModuleConfig", call.line)
    for key in ("max_sequence_length", "rank_microbatch_size"):
        if key in call.kwargs:
            out.put(f"{PREFIX}.{key}", call.kwargs[key], call.lines.get(key, call.line))
    out.put(f"{PREFIX}.compile_model", True, call.line)
    out.put(f"{PREFIX}.dp_config.name", "hsdp", call.line)
    out.put(f"{PREFIX}.float8_config", "Float8Config", call.line)
    out.put(f"{PREFIX}.float8_config.enabled", call.value("float8_enabled", False),
            call.lines.get("float8_enabled", call.line))
    out.put(f"{PREFIX}.float8_config.ao", "recommended", call.line)
    for field, value in PRESETS["recommended"].items():
        out.put(f"{PREFIX}.float8_config.ao.{field}", value, call.line)


def _float8(out: PyOut, call: Call) -> None:
    out.put(f"{PREFIX}.float8_config", "Float8Config", call.line)
    for key in ("enabled", "modules_to_ignore", *OLD_FLOAT8):
        if key in call.kwargs or (call.star is not None and key == "enabled"):
            out.put(f"{PREFIX}.float8_config.{key}", _word(call.value(key)),
                    call.lines.get(key, call.line))
    if "ao_recipe" in call.kwargs:
        out.put(f"{PREFIX}.float8_config.ao_recipe", _word(call.kwargs["ao_recipe"]),
                call.lines.get("ao_recipe", call.line))
    for key, pattern in (("ao_mx", MX), ("ao", AO)):
        if key not in call.kwargs:
            continue
        value, line = call.kwargs[key], call.lines.get(key, call.line)
        hit = pattern.match(value.func) if isinstance(value, Call) else None
        if not isinstance(value, Call) or hit is None:
            out.put(f"{PREFIX}.float8_config.{key}", value, line)
            continue
        name = hit.group(1) or value.name
        if hit.group(1) is not None and hit.group(1) not in PRESETS:
            out.put(f"{PREFIX}.float8_config.{key}", Unresolved(
                f"{value.name}() is no constructor OLMo-core v2.5.0 has"), line)
            continue
        out.put(f"{PREFIX}.float8_config.{key}", name, line)
        fields = {**PRESETS.get(hit.group(1) or "", {}),
                  **{k: _word(v) for k, v in value.kwargs.items() if isinstance(k, str)}}
        for field, given in fields.items():
            if not isinstance(given, (Call, dict)):
                out.put(f"{PREFIX}.float8_config.{key}.{field}", given,
                        value.lines.get(field, value.line))
            else:
                out.put(f"{PREFIX}.float8_config.{key}.{field}", "given",
                        value.lines.get(field, value.line))


def _overrides(module: Module, out: PyOut) -> None:
    """``--train_module.float8_config.enabled=true`` words of the launch line (the experiment
    and ladder CLIs hand them to ``Config.merge``; a word without ``=`` is ``true``): they
    replace what the script builds. A field under a ``float8_config`` the script leaves None
    cannot be set (``_set_nested(None, ...)`` raises ValueError, config.py l.330-345)."""
    argv = module.argv or ()
    if any("float8" in w for w in argv[_MAX_ARGS:]):
        out.facts[f"{PREFIX}.float8_config.enabled"] = Unknown(
            f"the launch line gives more than {_MAX_ARGS} words after the script and sets "
            "float8_config past them, which were not read")
        out.prov[f"{PREFIX}.float8_config.enabled"] = out.where(None)
    for word in argv[:_MAX_ARGS]:
        if not word.startswith("-"):
            continue
        name, eq, raw = word.partition("=")
        name = name.strip(" -").replace("-", "_")
        if not name.startswith("train_module."):
            continue
        key = name.removeprefix("train_module.")
        value: Any = _yaml_word(raw, key) if eq else True
        if "$" in raw or "`" in raw:
            # a variable the launch line does not expand here (the environment, `$(...)`)
            value = Unknown(f"{word[:80]} is known only when the launch script runs")
        fact = f"{PREFIX}.{key}"
        where = out.where(None)
        if key.startswith("float8_config.") and out.facts.get(f"{PREFIX}.float8_config") is None \
                and f"{PREFIX}.train_module" in out.facts:
            value = Unknown(f"{word[:80]} sets a field of float8_config, which the script leaves "
                            "None: OLMo-core's Config.merge raises ValueError (\"Can't set value\")")
        out.facts[fact] = value
        out.prov[fact] = where


def _yaml_word(raw: str, key: str = "") -> Any:
    """A value as OLMo-core's ``_clean_opt`` makes it (config.py l.352-362 @ v2.5.0): blank is
    ``""``, else ``yaml.safe_load`` of the word (after the shell removed its quotes); what it
    refuses stops the run (Unknown). redteam8: a hand-made YAML 1.1 table took ``n`` and
    ``fAlSe`` (strings, so on) for false, ``0.0`` / ``[]`` / ``!!bool false`` and the shell's
    ``'false'`` for on. ``float8_config.enabled`` is stated as Python's truth of it (Float8Config
    tests ``if not self.enabled``, float8/__init__.py l.77); another key's mapping or list is
    Unknown."""
    import shlex

    import yaml

    if len(raw) > 4096:
        return Unknown(f"a {len(raw):,}-character value is no setting read here")
    try:
        words = shlex.split(raw) if raw.strip() else [""]
    except ValueError:
        return Unknown(f"{raw[:60]!r} is no complete shell word")
    word = "".join(words)
    if not word or word.isspace():
        value: Any = ""
    else:
        try:
            value = yaml.safe_load(word)
        except yaml.YAMLError:
            return Unknown(f"OLMo-core's yaml.safe_load refuses {word[:60]!r}: the run stops")
    if key == "float8_config.enabled":
        return bool(value)
    if isinstance(value, (list, dict)):
        return Unknown(f"{word[:60]!r} is a YAML {type(value).__name__}")
    return value


def score(data: Any) -> int:
    """OLMo-core has no config file of its own: its settings are the script's Python."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("OLMo-core is read from the Python training script that builds its "
                     "TransformerTrainModuleConfig (it has no config file)")


def _fp8(v: View) -> tuple[Any, str]:
    if not v.has("float8_config") and not v.unknown("float8_config"):
        return False, v.src("train_module", "") + (
            f" ({_SRC} train/train_module/transformer/config.py l.303: float8_config=None)")
    fc = v.facts.get(f"{PREFIX}.float8_config")
    enabled = v.facts.get(f"{PREFIX}.float8_config.enabled", True)
    if isinstance(fc, Unknown):
        return fc, v.src("float8_config")
    if fc != "Float8Config":
        if isinstance(enabled, Unknown):        # a launch line's override the merge refuses
            return enabled, v.src("float8_config.enabled")
        return False, v.src("float8_config")
    src = v.src("float8_config.enabled", v.src("float8_config") + " (Float8Config.enabled "
                                                                  "defaults to True)")
    if isinstance(enabled, Unknown):
        return enabled, src
    return bool(enabled), src


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    if not (v.has("train_module") or v.has("float8_config") or v.unknown("float8_config")):
        return out.build()
    fp8, src = _fp8(v)
    out["fp8"] = (fp8, src)
    if fp8 is not False:
        out["backend"] = ("torchao", src)
        out["recipe"] = _recipe(v)
        if v.has("float8_config.ao_mx"):
            out["format"] = ("e4m3", v.src("float8_config.ao_mx") + " (MXLinearConfig elem_dtype "
                                                                   "float8_e4m3fn)")
        out["precision"] = ("bf16", src)
    compile_ = v.facts.get(f"{PREFIX}.compile_model")
    out["compile"] = (compile_ if compile_ is not None else False,
                      v.src("compile_model", f"{_SRC} TransformerTrainModuleConfig "
                                             "compile_model=False"))
    name = v.facts.get(f"{PREFIX}.dp_config.name")
    if isinstance(name, Unknown):
        out["distributed"] = (name, v.src("dp_config.name"))
    elif isinstance(name, str):
        dist = {"fsdp": "fsdp2", "hsdp": "fsdp2", "ddp": "ddp"}.get(name.lower())
        out["distributed"] = (dist if dist is not None else Unknown(
            f"dp_config name {name[:40]!r} is no DataParallelType"), v.src("dp_config.name"))
    elif v.has("train_module"):
        out["distributed"] = ("none", v.src("train_module", "") + " (no dp_config)")
    length = v.int("max_sequence_length")
    if length:
        out["seq_len"] = (length, v.src("max_sequence_length"))
    return out.build()


def _recipe(v: View) -> tuple[Any, str]:
    if v.has("float8_config.ao_mx"):
        elem = str(v.facts.get(f"{PREFIX}.float8_config.ao_mx.elem_dtype", "float8_e4m3fn"))
        if "float4" in elem:
            return Unknown("ao_mx with a float4 element dtype is MXFP4, not FP8"), \
                v.src("float8_config.ao_mx.elem_dtype")
        return "mxfp8", v.src("float8_config.ao_mx")
    if v.has("float8_config.ao_recipe"):
        recipe = v.facts.get(f"{PREFIX}.float8_config.ao_recipe")
        return recipe, v.src("float8_config.ao_recipe")
    casts = [k for k in v.facts if k.startswith(f"{PREFIX}.float8_config.ao.cast_config")]
    if casts:
        return Unknown("AOFloat8LinearConfig with its own cast configs: the scaling is what "
                       "they say, not read here"), v.src(casts[0][len(PREFIX) + 1:])
    return "tensorwise", v.src("float8_config.ao", v.src("float8_config") +
                               " (torchao Float8LinearConfig() default: tensorwise)")


FRAMEWORK = Framework(
    kind=KIND, title="OLMo-core", formats=("python",), score=score, read=read, derive=derive,
    precedence=27,
    defaults=(
        Default("float8_config", "None (no FP8)", "ai2-olmo-core 2.x",
                "src/olmo_core/train/train_module/transformer/config.py"),
        Default("float8_config.enabled", "True", "ai2-olmo-core 2.x",
                "src/olmo_core/float8/__init__.py"),
        Default("compile_model", "False", "ai2-olmo-core 2.x",
                "src/olmo_core/train/train_module/transformer/config.py"),
    ),
    distributions=("ai2-olmo-core",), from_source=True,
    rule_area="OLMO", area_title="OLMo-core",
    read_python=read_python, python_hint=PY_HINT,
)
