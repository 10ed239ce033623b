"""``effective.*``: what the job will really run on this machine, from its intent and this machine.

``intent.*`` says what the job's configs ask for; some of what runs is decided only at run time by
the backend, on the GPU it finds (issue 23 items 2 and 3):

- **The recipe.** A job that names no recipe gets Transformer Engine's
  ``get_default_fp8_recipe()``, which depends on the TE version and the GPU (read at every tag
  v1.0 - v2.18: ``DelayedScaling()`` before 2.0; from 2.0 ``MXFP8BlockScaling()`` on compute
  capability >= 10.0; from 2.6 only where ``check_mxfp8_support()`` holds, 10.0 <= cc < 12.0, so
  sm_12x gets ``DelayedScaling()`` on 2.6 and ``Float8CurrentScaling()`` from 2.7). The same job
  trains different numerics on an H100 and a B200. torchao's default (``Float8LinearConfig()``,
  tensorwise) and the frameworks' own choices (accelerate, Megatron, NeMo, Lightning build their
  recipe explicitly) do not depend on the GPU: those are stated in ``intent.recipe``.
- **The token divisibility of a micro-batch.** FP8 GEMMs need the token dimension divisible per
  rank (Transformer Engine: ``assert_dim_for_fp8_exec`` 8 before the sequence-parallel all-gather
  and cuBLAS 16 after it for per-tensor recipes; 32 for MXFP8, ``MXFP8Quantizer``; 128 for block
  scaling, ``Float8BlockQuantizer`` and the frameworks' padding: NeMo-RL PR 1884, ms-swift
  ``get_padding_to``; 128 for NVFP4, ``get_align_size_for_quantization``). A packed job's token
  count changes every step, so only its padding multiple can guarantee it.

Computed right after ``intent.*`` (``apply``: ``api.collect_facts`` and the plan's
``rederive``), never inside it: intent is what the configs say, these depend on the machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from preflight.base.cc import parse_cc
from preflight.base.versions import comparison_key
from preflight.facts import Facts, Unknown

_TE = "pkg.transformer-engine.version"
_V2_0, _V2_6, _V2_7 = Version("2.0"), Version("2.6"), Version("2.7")
NEWEST_READ = "2.18"   # the newest tag get_default_fp8_recipe was read at; later: the same code

# Per-rank token multiple of a Transformer Engine recipe, before the sequence-parallel gather
# (per-tensor: 8 there and 16 after it, see token_align_needed).
_TE_ALIGN = {"mxfp8": 32, "blockwise": 128, "nvfp4": 128}
_PER_TENSOR = ("delayed", "current", "tensorwise")
_NAMES = ("effective.te_default_recipe", "effective.recipe", "effective.recipe_source",
          "effective.token_align_needed", "effective.token_align_ok")


def te_default_recipe(version: str, cc: tuple[int, int]) -> str | None:
    """The recipe ``get_default_fp8_recipe()`` of Transformer Engine ``version`` returns on a GPU
    of compute capability ``cc``, in intent's vocabulary; None if ``version`` does not parse."""
    key = comparison_key(version)
    if key is None:
        return None
    release = Version(".".join(str(p) for p in key.release))   # 2.7.0rc1 is 2.7's code
    if release < _V2_0:
        return "delayed"                   # v1.x fp8.py: return DelayedScaling()
    if release < _V2_6:
        return "mxfp8" if cc >= (10, 0) else "delayed"    # cc >= (10, 0): MXFP8BlockScaling()
    if (10, 0) <= cc < (12, 0):
        return "mxfp8"                     # check_mxfp8_support() holds
    if cc >= (12, 0):
        # 2.6: the Float8BlockScaling branch sits under check_mxfp8_support(), False on sm_12x
        return "current" if release >= _V2_7 else "delayed"
    return "delayed"


def token_align_needed(recipe: str, tp: int, sequence_parallel: bool, cp: int) -> int | None:
    """The multiple a micro-batch's token count (before the SP / CP split) must be for the FP8
    GEMMs of a Transformer Engine ``recipe``; None for a recipe TE does not run."""
    split = tp if sequence_parallel and tp > 1 else 1
    cp = max(cp, 1)
    if recipe in _PER_TENSOR:
        return cp * math.lcm(16, 8 * split)
    align = _TE_ALIGN.get(recipe)
    return None if align is None else align * split * cp


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _te_default(facts: Mapping[str, Any]) -> tuple[Any, str]:
    version, cc_raw = facts.get(_TE), facts.get("gpu.cc")
    if isinstance(version, Unknown):
        return Unknown(f"transformer-engine version: {version.reason}"), _TE
    if version is None:
        return Unknown("transformer-engine is not installed here: its default recipe depends on "
                       "its version (--assume pkg.transformer-engine=V)"), _TE
    if isinstance(cc_raw, Unknown):
        return Unknown(f"GPU compute capability: {cc_raw.reason}"), "gpu.cc"
    cc = parse_cc(cc_raw)
    if cc is None:
        return Unknown("no GPU compute capability: Transformer Engine picks its default recipe "
                       "by the GPU it runs on (--assume gpu=H100)"), "gpu.cc"
    recipe = te_default_recipe(str(version), cc)
    if recipe is None:
        return Unknown(f"transformer-engine version {str(version)[:40]!r} does not parse"), _TE
    later = "" if (comparison_key(str(version)) or Version("0")) <= Version(NEWEST_READ + ".99") \
        else f"; as read at v{NEWEST_READ}, the newest tag read"
    return recipe, (f"Transformer Engine {version} get_default_fp8_recipe() on compute "
                    f"capability {cc[0]}.{cc[1]}{later}")


def apply(facts: Facts) -> Facts:
    """``facts`` with the ``effective.*`` facts computed from its ``intent.*`` and machine facts
    (what ``check`` and the plan's re-derivation call right after intent; a value the user
    assumed with ``--assume`` is kept)."""
    values, prov = derive(facts, {})
    keep = {n for n in _NAMES if facts.source(n) == "assume"}
    # A replayed snapshot's own effective.* describe its job: recomputed here, never kept.
    base = Facts({k: v for k, v in facts.values.items() if k not in _NAMES or k in keep},
                 {k: s for k, s in facts.provenance.items() if k not in _NAMES or k in keep})
    return base.merged({k: v for k, v in values.items() if k not in keep}, prov,
                       source="effective")


def derive(facts: Mapping[str, Any], intent: Mapping[str, Any]
           ) -> tuple[dict[str, Any], dict[str, str]]:
    """``(values, provenance)`` of the ``effective.*`` facts; ``intent`` may hold ``intent.*``
    values that win over those in ``facts``."""
    def get(name: str) -> Any:
        return intent[name] if name in intent else facts.get(name)

    values: dict[str, Any] = {}
    prov: dict[str, str] = {}
    if get("intent.fp8") is not True:
        return values, prov
    backend = get("intent.backend")
    if backend == "te":
        values["effective.te_default_recipe"], prov["effective.te_default_recipe"] = \
            _te_default(facts)
    recipe = get("intent.recipe")
    if isinstance(recipe, str):
        values["effective.recipe"], values["effective.recipe_source"] = recipe, "job"
        prov["effective.recipe"] = prov["effective.recipe_source"] = "intent.recipe"
    elif backend == "te" and get("intent.recipe_by_backend") is True:
        values["effective.recipe"] = values["effective.te_default_recipe"]
        values["effective.recipe_source"] = "te_default"
        prov["effective.recipe"] = prov["effective.te_default_recipe"]
        prov["effective.recipe_source"] = "intent.recipe_by_backend"
    else:
        values["effective.recipe"] = recipe if isinstance(recipe, Unknown) else Unknown(
            "the configs read do not say the FP8 recipe")
        prov["effective.recipe"] = "intent.recipe"
    if backend == "te":
        _alignment(get, values, prov)
    return values, prov


def _alignment(get: Any, values: dict[str, Any], prov: dict[str, str]) -> None:
    recipe = values.get("effective.recipe")
    tp, sp, cp = get("intent.tp"), get("intent.sequence_parallel"), get("intent.cp")
    unknown = next((v for v in (tp, cp) if isinstance(v, Unknown)), None)
    if unknown is None and isinstance(sp, Unknown) and _int(tp) and tp > 1:
        unknown = sp
    layout = (tp if _int(tp) and tp > 0 else 1, sp is True, cp if _int(cp) and cp > 0 else 1)
    if unknown is None and isinstance(recipe, Unknown):
        # The recipe is not known, the layout is: every TE recipe needs a multiple of the
        # per-tensor one, and block scaling's is a multiple of every other (token_align_needed)
        values["effective.token_align_needed"] = Unknown(recipe.reason)
        prov["effective.token_align_needed"] = "effective.recipe, intent.tp, intent.cp"
        _packed_ok(get, (token_align_needed("delayed", *layout) or 16,
                         token_align_needed("blockwise", *layout) or 128), recipe, values, prov)
        return
    unknown = unknown or (recipe if isinstance(recipe, Unknown) else None)
    if unknown is not None:
        needed: Any = Unknown(unknown.reason)
    else:
        needed = token_align_needed(str(recipe), *layout)
        if needed is None:
            return
    values["effective.token_align_needed"] = needed
    prov["effective.token_align_needed"] = "effective.recipe, intent.tp, intent.cp"
    if get("intent.packing") is not True:
        return   # static shapes: intent.shapes.tokens_align and FP8D-TE-0012
    pad = get("intent.pad_multiple")
    if isinstance(needed, Unknown):
        ok: Any = needed
    elif isinstance(pad, Unknown):
        ok = Unknown(f"pad multiple: {pad.reason}")
    elif not _int(pad) or pad < 1:
        ok = Unknown("the job packs samples but the configs read do not say to what multiple a "
                     "packed micro-batch is padded")
    else:
        ok = pad % needed == 0
    values["effective.token_align_ok"] = ok
    prov["effective.token_align_ok"] = "intent.pad_multiple, effective.token_align_needed"


def _packed_ok(get: Any, bounds: tuple[int, int], recipe: Unknown, values: dict[str, Any],
               prov: dict[str, str]) -> None:
    """``effective.token_align_ok`` of a packed job whose recipe is not known: false where its
    pad multiple misses what every recipe needs (``bounds[0]``), true where it meets what every
    recipe needs (``bounds[1]``), else Unknown with the recipe's reason."""
    if get("intent.packing") is not True:
        return
    pad = get("intent.pad_multiple")
    low, high = bounds
    if isinstance(pad, Unknown):
        ok: Any = Unknown(f"pad multiple: {pad.reason}")
    elif not _int(pad) or pad < 1:
        ok = Unknown(recipe.reason)
    elif pad % low:
        ok = False
    else:
        ok = True if pad % high == 0 else Unknown(recipe.reason)
    values["effective.token_align_ok"] = ok
    prov["effective.token_align_ok"] = ("intent.pad_multiple, intent.tp, intent.cp (any TE recipe "
                                        f"needs a multiple of {low}, block scaling {high})")
