"""Unsloth: a Python script that loads its model with ``FastLanguageModel.from_pretrained(...)``
(or ``FastModel`` / ``FastVisionModel`` / ``FastTextModel``), usually trained with a TRL trainer
that unsloth patches (the TRL and HF Trainer readers read its ``GRPOConfig`` / ``SFTConfig``).
The script is parsed, never imported.

FP8 in unsloth is ``load_in_fp8`` (True | ``"block"``), read at unslothai/unsloth tags
November-2025 (7cdad0c7, 2025.11.4, the first release with it), February-2026 (8ee5e62c,
2026.2.1) and March-2026 (880b59a3, 2026.3.5):

- ``unsloth/models/loader.py`` (February-2026 L126-L330): LoRA over frozen FP8 base weights.
  The name is first looked up in unsloth's FP8 mapper (``loader_utils.__get_model_name``
  L109-L130: a pre-quantized ``-FP8`` / ``-FP8-Dynamic`` checkpoint, row-scaled when FBGEMM
  works on the GPU and ``load_in_fp8=True``, else block-scaled); a name not there is quantized on
  the fly with torchao's ``Float8DynamicActivationFloat8WeightConfig`` (PerRow for True,
  PerBlock 1x128 / 128x128 for ``"block"``: unsloth-zoo 95e37ea9 ``vllm_utils._get_torchao_fp8_config``),
  which ``_get_fp8_mode_and_check_settings`` (loader_utils L317-L405) allows only on compute
  capability 9.0+, torch 2.9.0+ and torchao 0.15.0+, never with ``full_finetuning`` or
  ``load_in_4bit`` / ``8bit`` / ``16bit``. From 2026.2.1 (#3717) a name not mapped is handed to
  vLLM >= 0.12.0 as it is (vLLM quantizes it), and those checks run only under an older vLLM.
- ``fast_inference=True`` generates with vLLM from the same FP8 weights (``float8_kv_cache``: an
  FP8 KV cache); until 2026.3.1 ``load_in_fp8`` without it raises NotImplementedError
  (loader.py L265-L269 @ February-2026; lifted by #3904, 3f9e03ff). With it the loader starts
  vLLM itself (``unsloth_zoo.vllm_utils.load_vllm(..., fp8_mode=...)``: ``fp8_mode`` "row" for
  True, "block" for ``"block"``), builds the trained model from vLLM's (FP8) state dict and keeps
  the engine as ``model.vllm_engine`` (models/llama.py L2443-L2490 @ March-2026, 880b59a3);
  unsloth's patched TRL trainers then set ``args.use_vllm = True`` (colocate) whenever the model
  has a ``vllm_engine`` (models/rl.py L1606-L1623 @ March-2026; the same at 7cdad0c7 L1061 and
  February-2026 L1566), so a GRPO/RLOO/online-DPO trainer of the script rolls out on that FP8
  engine whatever its config says of ``use_vllm``. A script that also builds an SFT trainer
  (SFT warm-up, then GRPO: holdout14) still has that rollout: ``config.unsloth.online_rl``.
- Before 2025.11.4 ``load_in_fp8`` is no argument: it goes on in ``**kwargs`` to the model's
  constructor, a TypeError (unsloth issue 3649).
- No ``UNSLOTH_*`` variable switches FP8 on; ``UNSLOTH_HAS_FBGEMM`` (set by
  ``unsloth/kernels/fp8.py`` after probing the GPU) picks row over block scaling.

Facts: ``config.unsloth.<keyword>`` of the loader call at its line, ``config.unsloth.loader``
(the class), ``config.unsloth.fp8_mapped`` (whether the model name is in the FP8 mapper at every
release read, ``preflight/data/unsloth_fp8_models.json``: ``tools/unsloth_fp8_models.py``),
``config.unsloth.checkpoint_quant_method`` (``fp8`` for a Qwen3 FP8 checkpoint of that mapper that
is transformers' FineGrainedFP8: :func:`finegrained_fp8`), ``config.unsloth.peft`` (``get_peft_model`` is called), ``config.unsloth.online_rl`` (a TRL
online RL config or trainer is built: its generation is a rollout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Module
from preflight.reading.types import ReaderOutput

KIND = "unsloth"
PREFIX = f"config.{KIND}"
PY_HINT = re.compile(r"\bunsloth\b")
LOADER = re.compile(r"^unsloth(?:\.models(?:\.\w+)?)?\.(Fast\w*Model)\.from_pretrained$")
PEFT = re.compile(r"^unsloth(?:\.models(?:\.\w+)?)?\.Fast\w*Model\.get_peft_model$")
WATCH = ("load_in_fp8", "fast_inference", "load_in_4bit", "load_in_8bit", "load_in_16bit",
         "full_finetuning", "float8_kv_cache", "model_name")
"""Keywords a ``**mapping`` passed to the loader may set (then Unknown)."""
ONLINE_RL = frozenset({"GRPOConfig", "RLOOConfig", "OnlineDPOConfig", "PPOConfig",
                       "AsyncGRPOConfig", "GRPOWithReplayBufferConfig", "XPOConfig",
                       "NashMDConfig", "GKDConfig"})
"""TRL configs whose trainer generates (the rollout unsloth's ``fast_inference`` serves)."""
ONLINE_TRAINERS = frozenset({c.replace("Config", "Trainer") for c in ONLINE_RL})
"""Their trainers: built without ``args`` they make the config's defaults (trl GRPOTrainer)."""
_SRC = "unslothai/unsloth@February-2026 (8ee5e62c)"
_DATA = Path(__file__).resolve().parents[1] / "data" / "unsloth_fp8_models.json"


@lru_cache(maxsize=1)
def _releases() -> dict[str, frozenset[str]]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return {ver: frozenset(r["names"]) for ver, r in data.get("releases", {}).items()}


def mapped(name: Any) -> bool | Unknown:
    """Whether unsloth maps ``name`` to a pre-quantized FP8 checkpoint (``name.lower()`` in its
    FP8 mapper), alike at every release read; Unknown when they differ or the name is not text."""
    if isinstance(name, Unknown):
        return name
    if not isinstance(name, str):
        return Unknown("the model name is not text the script gives")
    where = {ver: name.lower() in names for ver, names in _releases().items()}
    if len(set(where.values())) == 1:
        return next(iter(where.values()))
    yes = ", ".join(v for v, hit in where.items() if hit)
    return Unknown(f"unsloth maps {name[:80]!r} to a pre-quantized FP8 checkpoint in {yes} "
                   "only: which applies depends on the installed unsloth")


def read_python(module: Module) -> ReaderOutput:
    """``FastLanguageModel.from_pretrained(model_name=..., load_in_fp8=..., ...)`` ->
    ``config.unsloth.*`` at the call's lines; ``get_peft_model(...)`` -> ``config.unsloth.peft``."""
    out = PyOut(module)
    for call, _ in out.calls():
        found = LOADER.match(call.func)
        if found is not None:
            out.put(f"{PREFIX}.loader", found.group(1), call.line)
            if "model_name" not in call.kwargs and call.args:
                out.put(f"{PREFIX}.model_name", call.args[0], call.line)
            out.put_all(PREFIX, call, watch=WATCH)
        elif PEFT.match(call.func):
            out.put(f"{PREFIX}.peft", True, call.line)
        elif _online(module, call.func) is not None:
            # one online RL trainer of several (SFT, then GRPO: holdout14) is a rollout of its
            # own, whatever config_class (Unknown when a script builds two) says
            out.put(f"{PREFIX}.online_rl", True, call.line)
    name = out.facts.get(f"{PREFIX}.model_name")
    if f"{PREFIX}.loader" in out.facts and name is not None:
        line = getattr(out.prov.get(f"{PREFIX}.model_name"), "line", None)
        out.put(f"{PREFIX}.fp8_mapped", mapped(name), line)
        if finegrained_fp8(name):
            out.put(f"{PREFIX}.checkpoint_quant_method", "fp8", line)
    return out.output()


# Qwen's own Qwen3 FP8 releases are transformers FineGrainedFP8 checkpoints (quant_method fp8,
# 128x128 block scales: their model cards, "fine-grained fp8 quantization"), and unsloth's
# FP8 mapper pairs each with an unsloth/ copy under the same name as its block-scaled FP8
# checkpoint (mapper.py __INT_TO_FLOAT_MAPPER "8": (official, block, row) at 8ee5e62c); the
# copy loads as QuantizationMethod.FP8 (transformers issue 37927's error for unsloth/Qwen3-4B-FP8).
# The -FP8-Dynamic (row) copies and other families' FP8 names (RedHatAI's compressed-tensors
# among them) say nothing here.
_FINEGRAINED = re.compile(r"^(?:qwen|unsloth)/qwen3[\w.-]*-fp8$")


def finegrained_fp8(name: Any) -> bool:
    """Whether ``name`` is one of the Qwen3 FP8 checkpoints above, in unsloth's FP8 mapper at
    some release read (so a typo or a private repo of that shape is not taken)."""
    if not isinstance(name, str) or len(name) > 256:
        return False
    low = name.lower()
    return bool(_FINEGRAINED.match(low)) and any(low in names for names in _releases().values())


def _online(module: Module, func: str) -> str | None:
    """The TRL online RL config or trainer class ``func`` is (or a class of this file is built
    on), else None."""
    for name in module.lineage(func):
        last = name.rsplit(".", 1)[-1]
        if name.split(".", 1)[0] == "trl" and (last in ONLINE_RL or last in ONLINE_TRAINERS):
            return last
    return None


def score(data: Any) -> int:
    """Unsloth has no config file: its settings are the loader call's keywords."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("Unsloth is read from the Python script that calls "
                     "FastLanguageModel.from_pretrained (it has no config file)")


def _fp8_value(v: View) -> Any:
    """``load_in_fp8`` as unsloth tests it (``load_in_fp8 != False``): True, "block", Unknown,
    or False (not given: the default). Any other value stops the loader before a model loads:
    ``assert load_in_fp8 in (True, False, "block")`` (loader_utils.py ``__get_model_name``,
    February-2026), so ``None``, ``"False"``, ``""`` or ``"row"`` is no FP8 verdict (redteam7:
    ``"False"`` read as FP8 on, ``None`` as off)."""
    name = f"{PREFIX}.load_in_fp8"
    if name not in v.facts:
        return False
    raw = v.facts[name]
    if isinstance(raw, Unknown):
        return raw
    if raw is True or raw == "block":
        return raw
    if isinstance(raw, (bool, int, float)) and raw == 0:
        return False            # `0 != False` is False: no FP8
    # `1` passes the assert but not _get_fp8_mode_and_check_settings (`load_in_fp8 is True`,
    # else the value must be "row" or "block": ValueError)
    return Unknown(f"load_in_fp8={str(raw)[:40]!r}: unsloth's loader stops with an "
                   "AssertionError or ValueError (it takes True, False or 'block')")


def _recipe(asked: Any, mapped_: Any) -> Any:
    if asked == "block":
        return "blockwise"
    if mapped_ is False:
        return "rowwise"        # on the fly: PerRow (unsloth-zoo _get_torchao_fp8_config)
    if isinstance(mapped_, Unknown):
        return mapped_
    return Unknown("load_in_fp8=True over a pre-quantized checkpoint is row-scaled where FBGEMM "
                   "works on the GPU (UNSLOTH_HAS_FBGEMM, probed at import), else block-scaled")


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    if not v.has("loader"):
        return out.build()
    asked = _fp8_value(v)
    key = "load_in_fp8"
    src = v.src(key, v.src("loader"))
    mapped_ = f.get(f"{PREFIX}.fp8_mapped")
    if asked is False:
        out["fp8"] = (False, v.src(key, f"{_SRC} unsloth/models/loader.py L152 "
                                        "(load_in_fp8=False)"))
    elif isinstance(asked, Unknown):
        out["fp8"] = (asked, src)
    else:
        out["fp8"] = (True, src)
        if mapped_ is False:
            out["backend"] = ("torchao", f"{src} (quantized on the fly with torchao "
                                         "Float8DynamicActivationFloat8WeightConfig)")
        else:
            out["backend"] = (Unknown("a pre-quantized FP8 checkpoint runs on unsloth's own FP8 "
                                      "kernels (unsloth/kernels/fp8.py), neither Transformer "
                                      "Engine nor torchao training") if mapped_ is True
                              else mapped_, src)
        out["recipe"] = (_recipe(asked, mapped_), src)
        out["format"] = ("e4m3", f"{src} (float8_e4m3fn weights and activations)")
    length = v.int("max_seq_length")
    if length:
        out["seq_len"] = (length, v.src("max_seq_length"))
    _rollout(f, v, out, asked)
    return out.build()


def _rollout(f: Mapping[str, Any], v: View, out: IntentOut, asked: Any) -> None:
    """The generation of an online RL trainer (GRPO ...): vLLM with ``fast_inference``, from
    the same weights as training (FP8 with ``load_in_fp8``), else the model's own generate."""
    config = f.get("config.trl.config_class")
    if not (isinstance(config, str) and config in ONLINE_RL) and \
            f.get(f"{PREFIX}.online_rl") is not True:
        return
    fast = f.get(f"{PREFIX}.fast_inference")
    src = v.src("fast_inference", v.src("loader"))
    if isinstance(fast, Unknown):
        out["rollout.engine"] = (fast, src)
    else:
        out["rollout.engine"] = ("vllm" if fast else "hf",
                                 src if fast is not None else f"{_SRC} loader.py L145 "
                                                              "(fast_inference=False)")
    fp8 = out.get("fp8", (False,))[0]
    out["rollout.fp8"] = (fp8, v.src("load_in_fp8", src))
    if fp8 is True:
        out["rollout.recipe"] = out.get("recipe", (Unknown("not known"), src))
    kv = f.get(f"{PREFIX}.float8_kv_cache")
    if fast is True:
        out["rollout.kv_cache_fp8"] = (kv if isinstance(kv, Unknown) else bool(kv),
                                       v.src("float8_kv_cache", f"{_SRC} loader.py L147 "
                                                                "(float8_kv_cache=False)"))


FRAMEWORK = Framework(
    kind=KIND, title="Unsloth", formats=("python",), score=score, read=read, derive=derive,
    precedence=26,
    defaults=(
        Default("load_in_fp8", "False", "unsloth >= 2025.11.4", "unsloth/models/loader.py"),
        Default("fast_inference", "False (no vLLM)", "all", "unsloth/models/loader.py"),
        Default("load_in_4bit", "True (FastLanguageModel)", "all", "unsloth/models/loader.py"),
    ),
    distributions=("unsloth",), rule_area="UNSLOTH", area_title="Unsloth",
    read_python=read_python, python_hint=PY_HINT,
)
