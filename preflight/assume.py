"""``--assume KEY=VALUE``: plan an environment that is not installed.

Keys: ``gpu=NAME`` (a known model: sets every derived ``gpu.*`` fact), ``gpu.count=N`` (1 to
4096 GPUs per node), ``gpu.cc=M.m``, ``pkg.NAME=VERSION`` (``none`` plans it uninstalled; a planned
torch replaces every ``cuda.torch_*`` fact of this machine with what its ``+cu124`` / ``+cpu`` /
``+rocm`` label says, Unknown without one), and any other registered
fact name with the value coerced to the registered type (``cuda.torch_build=12.4``,
``intent.zero_stage=3``). Assumed facts get provenance ``assume``. Bad keys or values raise
:class:`AssumeError` naming the flag and the valid choices.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from preflight.base.builds import SUFFIX as PAIR_SUFFIX
from preflight.base.builds import pairing_facts
from preflight.base.cc import arch_for_cc, format_cc, parse_cc
from preflight.base.versions import version_problem
from preflight.errors import UserInputError
from preflight.facts import Facts, Unknown
from preflight.probes.gpu_table import RocmGPU, known_names, lookup, lookup_rocm
from preflight.probes.packages import TE_PARTS, Installed, normalize, te_facts, version_facts
from preflight.registry import registry

SOURCE = "assume"
_SPECIAL = ("gpu=NAME", "gpu.count=N", "gpu.cc=MAJOR.MINOR", "pkg.NAME=VERSION")
# Hardware facts a planned GPU cannot know unless they are assumed too.
_GPU_UNPLANNED = ("gpu.driver", "gpu.cuda_driver", "gpu.mem_total_mib", "gpu.min_mem_mib")
_GPU_STALE = ("gpu.nvml_error", "gpu.visible_devices_error")


class AssumeError(UserInputError):
    """An ``--assume`` key or value that cannot be used; the message lists valid choices."""


def _flag(key: str, value: str) -> str:
    return f"--assume {key}={value}"


# A planned node holds at most this many GPUs. The bound is far above any real node (8-72) and
# keeps a typo like gpu.count=99999999999999999999999 a user error: the planned lists hold one
# entry per GPU, so an unbounded count would exhaust memory or overflow list(range(count)).
MAX_GPUS_PER_NODE = 4096
_INT64 = 2**63


def _int(key: str, value: str, minimum: int = 0, maximum: int = _INT64 - 1,
         what: str = "") -> int:
    # ASCII digits only: int() also takes "٣" (Arabic-Indic three) and "1_000", which no config
    # or command line means.
    if not re.fullmatch(r"[+-]?[0-9]{1,64}", value):
        raise AssumeError(f"{_flag(key, value)}: expected a whole number")
    number = int(value)
    if number < minimum:
        raise AssumeError(f"{_flag(key, value)}: must be at least {minimum}")
    if number > maximum:
        raise AssumeError(f"{_flag(key, value)}: must be at most {maximum}{what}")
    return number


def _gpu_count(value: str) -> int:
    # A plan of a node with no GPU judges nothing an FP8 job could run on (issue 21 item 10:
    # gpu.count=0 came out as exit 0 or 1, a "result" for an impossible plan): a usage error.
    if re.fullmatch(r"[+-]?0+", value.strip()):
        raise AssumeError(f"{_flag('gpu.count', value)}: a planned node has at least one GPU "
                          "(FP8 trains on GPUs); to judge a machine without one, run fp8-doctor "
                          "on it without --assume gpu.count")
    return _int("gpu.count", value, minimum=1, maximum=MAX_GPUS_PER_NODE,
                what=" (GPUs per node)")


# The newest compute capability any released GPU has: Blackwell 12.x (sm_120 / sm_121). A plan
# for a GPU past it cannot be judged anyway (base.cc has no architecture for it), so 13.0 and
# 99.9 are refused rather than planned as an "unknown" architecture that every rule skips
# (issue 13, item 8).
MAX_CC_MAJOR = 12


def _cc(key: str, value: str) -> str:
    parsed = parse_cc(value)
    if parsed is None or not (1 <= parsed[0] <= MAX_CC_MAJOR and 0 <= parsed[1] <= 9):
        raise AssumeError(f"{_flag(key, value)}: expected a compute capability like 8.9 or "
                          f"10.0, from 1.0 to {MAX_CC_MAJOR}.9")
    return format_cc(*parsed)


def _version(key: str, value: str) -> str:
    # The rule engine's own check, so a planned version is valid exactly when rules can use it.
    if version_problem(value) is not None:
        raise AssumeError(f"{_flag(key, value)}: {value!r} is not a valid version "
                          "(PEP 440, e.g. 2.5.1, 2.5.1+cu124, 2.4.0a0+3bcc3cd.nv24.07)")
    return value


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def coerce(key: str, value: str, fact_type: str) -> Any:
    """``value`` as the registered type of ``key``; AssumeError when it does not fit."""
    if fact_type == "bool":
        low = value.lower()
        if low in _TRUE | _FALSE:
            return low in _TRUE
        raise AssumeError(f"{_flag(key, value)}: expected true or false")
    if fact_type == "int":
        return _int(key, value, minimum=-_INT64)
    if fact_type == "float":
        try:
            number = float(value)
        except ValueError:
            raise AssumeError(f"{_flag(key, value)}: expected a number") from None
        if not math.isfinite(number):
            raise AssumeError(f"{_flag(key, value)}: expected a finite number")
        return number
    if fact_type == "version":
        return _version(key, value)
    if fact_type == "cc":
        return _cc(key, value)
    if fact_type in ("list", "dict", "any"):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if fact_type == "dict":
            if not isinstance(parsed, dict):
                raise AssumeError(f"{_flag(key, value)}: expected a JSON object")
            return parsed
        if fact_type == "list":
            if isinstance(parsed, list):
                return parsed
            if value.lstrip().startswith(("{", "[")):
                raise AssumeError(f"{_flag(key, value)}: expected a JSON list or "
                                  "comma-separated values")
            return [part.strip() for part in value.split(",") if part.strip()]
        return value if parsed is None else parsed
    return value


def _gpu_block(name: str | None, count: int, cc: str | None, *, key: str, value: str
               ) -> dict[str, Any]:
    if name is not None:
        gpu = lookup(name)
        rocm = lookup_rocm(name) if gpu is None else None
        if rocm is not None:
            return _rocm_block(rocm, count)
        if gpu is None:
            raise AssumeError(f"{_flag(key, value)}: unknown GPU {name!r}; known GPUs: "
                              f"{', '.join(known_names())}. Or give the compute capability: "
                              "--assume gpu.cc=9.0")
        cc = cc or gpu.cc
        label = f"NVIDIA {gpu.name}"
    else:
        label = None
    assert cc is not None
    names: Any = [label] * count if label is not None else Unknown(
        "only the compute capability was assumed (--assume gpu.cc); add --assume gpu=NAME for "
        "a model")
    return _planned(count, names, [cc] * count, cc, arch_for_cc(cc))


def _rocm_block(gpu: RocmGPU, count: int) -> dict[str, Any]:
    """A planned AMD Instinct GPU: its name, and Unknown for every CUDA-architecture fact."""
    label = f"AMD Instinct {gpu.name}"
    why = Unknown(f"{label} is a ROCm GPU ({gpu.gfx}): it has no CUDA compute capability, so "
                  "the rules that need one are left undetermined")
    facts = _planned(count, [label] * count, why, why, why)
    # The gfx target is what ROCm's Transformer Engine gates recipes on (FP8D-HW-0011: MXFP8
    # needs gfx95x): ROCm/TransformerEngine@030b7921 transformer_engine/pytorch/quantization.py.
    facts["gpu.gfx"] = gpu.gfx
    return facts


def _planned(count: int, names: Any, ccs: Any, cc: Any, arch: Any) -> dict[str, Any]:
    """The gpu.* facts of ``count`` planned GPUs of one model (``names``/``ccs``: per GPU, or
    Unknown; ``cc``/``arch``: the first GPU's)."""
    facts: dict[str, Any] = {
        "gpu.source": SOURCE, "gpu.count": count, "gpu.host_count": count,
        "gpu.visible_indices": list(range(count)), "gpu.mig": False,
        "gpu.ccs": ccs, "gpu.host_ccs": ccs, "gpu.names": names, "gpu.host_names": names,
    }
    if count:
        facts.update({"gpu.cc": cc, "gpu.min_cc": cc, "gpu.max_cc": cc, "gpu.arch": arch,
                      "gpu.heterogeneous": False,
                      "gpu.name": names[0] if isinstance(names, list) else names})
    for fact in _GPU_UNPLANNED:
        facts[fact] = Unknown(f"not part of the planned GPU; add --assume {fact}=VALUE to set it")
    return facts


def _apply_gpu(values: dict[str, Any], items: dict[str, str]) -> dict[str, Any]:
    """The ``gpu``, ``gpu.count`` and ``gpu.cc`` keys, which derive the other gpu.* facts."""
    name = items.pop("gpu", None)
    count_raw = items.pop("gpu.count", None)
    cc_raw = items.pop("gpu.cc", None)
    if name is None and count_raw is None and cc_raw is None:
        return {}
    count = _gpu_count(count_raw) if count_raw is not None else None
    cc = _cc("gpu.cc", cc_raw) if cc_raw is not None else None
    if name is not None or cc is not None:
        if count is None:
            current = values.get("gpu.count")
            count = current if isinstance(current, int) and current > 0 and name is None else 1
        key, value = ("gpu", name) if name is not None else ("gpu.cc", cc_raw or "")
        return _gpu_block(name, count, cc, key=key, value=value)
    assert count is not None
    out: dict[str, Any] = {"gpu.count": count, "gpu.host_count": count,
                           "gpu.visible_indices": list(range(count))}
    for fact in ("gpu.names", "gpu.ccs", "gpu.mem_total_mib"):  # resize a homogeneous list
        current = values.get(fact)
        if isinstance(current, list) and current and len(set(map(str, current))) == 1:
            out[fact] = [current[0]] * count
    return out


def _drop(values: dict[str, Any], prov: dict[str, str], prefix: str) -> None:
    for stale in [n for n in values if n.startswith(prefix)]:
        del values[stale]
        prov.pop(stale, None)


def _apply_pkg(values: dict[str, Any], prov: dict[str, str], key: str, value: str
               ) -> dict[str, Any]:
    dist = normalize(key[len("pkg."):].removesuffix(".version"))
    if not dist or "." in dist:
        raise AssumeError(f"{_flag(key, value)}: expected pkg.NAME=VERSION, e.g. pkg.torch=2.5.1")
    _drop(values, prov, f"pkg.{dist}.")
    if value.lower() in ("none", "absent", "uninstalled"):
        return {}
    return version_facts(dist, _version(key, value))


def _derived_pkg(values: Mapping[str, Any], touched: set[str]) -> dict[str, Any]:
    """Re-derive pkg.te.* and torch's CUDA build from assumed package versions."""
    out: dict[str, Any] = {}
    if touched & set(TE_PARTS):
        installed = {n: Installed(n, values[f"pkg.{n}.version"], "")
                     for n in TE_PARTS if isinstance(values.get(f"pkg.{n}.version"), str)}
        out.update(te_facts(installed))
    if "torch" in touched and isinstance(values.get("pkg.torch.version"), str):
        out.update(_torch_build(values.get("pkg.torch.local")))
    if touched:
        out.update(pairing_facts(values))
    return out


def _torch_build(local: Any) -> dict[str, Any]:
    """The ``cuda.torch_*`` facts a planned torch's local label says (``+cu124``, ``+cpu``, ...).

    Only the label is evidence: a planned ``2.5.1`` without one may be any build, so what it does
    not say stays Unknown rather than this machine's build (which was dropped).
    """
    label = str(local or "")
    m = re.fullmatch(r"cu(\d+)(\d)", label)
    if m:  # +cu124 -> CUDA 12.4, +cu130 -> 13.0
        return {"cuda.torch_build": f"{m.group(1)}.{m.group(2)}", "cuda.torch_variant": "cuda"}
    if label in ("cpu", "xpu"):
        return {"cuda.torch_variant": label}
    m = re.fullmatch(r"rocm(\d+\.\d+(?:\.\d+)*)", label)
    if m:  # +rocm6.2 -> HIP 6.2
        return {"cuda.torch_variant": "rocm", "cuda.torch_hip": m.group(1)}
    return {name: Unknown(f"not part of the plan: assume {name}={example} to set it")
            for name, example in (("cuda.torch_build", "12.4"), ("cuda.torch_variant", "cuda"))}


def _unknown_key(key: str, value: str) -> AssumeError:
    names = [s.name for s in registry().specs() if not s.is_template]
    choices = sorted(set(names) | {"gpu", "gpu.count", "gpu.cc"})
    import difflib  # only for a mistyped key's suggestions

    close = difflib.get_close_matches(key, choices, n=3)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return AssumeError(f"{_flag(key, value)}: unknown key {key!r}. Valid keys: "
                       f"{', '.join(_SPECIAL)}, or any registered fact name "
                       f"(e.g. cuda.torch_build=12.4, intent.zero_stage=3).{hint}")


def apply_assumptions(facts: Facts, assume: Mapping[str, str]) -> Facts:
    """``facts`` with the planned values layered on top (provenance ``assume``)."""
    values = dict(facts.values)
    prov = dict(facts.provenance)
    items = {str(k).strip(): str(v).strip() for k, v in assume.items()}
    assumed: dict[str, Any] = {}

    gpu = _apply_gpu(values, items)
    if gpu:
        # A planned model replaces the probed one's gfx target (an NVIDIA plan has none).
        for stale in _GPU_STALE + (("gpu.gfx",) if "gpu.ccs" in gpu else ()):
            values.pop(stale, None)
            prov.pop(stale, None)
    assumed.update(gpu)

    touched: set[str] = set()
    generic: dict[str, str] = {}
    for key, value in items.items():
        if key.startswith("pkg.") and key.count(".") == 1 or (
                key.startswith("pkg.") and key.endswith(".version") and key.count(".") == 2):
            for stale in [n for n in assumed if n.startswith(f"pkg.{normalize(key[4:])}.")]:
                del assumed[stale]
            assumed.update(_apply_pkg(values, prov, key, value))
            touched.add(normalize(key[4:].removesuffix(".version")))
        else:
            generic[key] = value
    if touched & set(TE_PARTS):
        _drop(values, prov, "pkg.te.")
        # This machine's other TE parts say nothing about the planned TE: a GPU machine with TE
        # 2.20.2 installed made a plan for TE 2.8.0 look like a mixed install (FP8D-TE-0008).
        for part in set(TE_PARTS) - touched:
            _drop(values, prov, f"pkg.{part}.")
    if "torch" in touched:  # this machine's torch build says nothing about the planned torch
        _drop(values, prov, "cuda.torch_")
    if touched:  # a build's torch pairing depends on its version and torch's: derived again
        for stale in [n for n in values if n.startswith("pkg.") and n.endswith(PAIR_SUFFIX)]:
            del values[stale]
            prov.pop(stale, None)
    merged = {**values, **assumed}
    assumed.update(_derived_pkg(merged, touched))

    for key, value in generic.items():  # explicit facts win over anything derived above
        if key.startswith("smoke."):
            # The smoke step writes every smoke.* fact itself (or smoke.ran=false when it is
            # skipped), so a planned one would be silently replaced.
            raise AssumeError(f"{_flag(key, value)}: smoke.* facts are measured by the smoke "
                              "step, not planned; use --snapshot to replay another run's")
        spec = registry().lookup(key)
        if spec is None:
            raise _unknown_key(key, value)
        assumed[key] = coerce(key, value, spec.type)

    values.update(assumed)
    prov.update({name: SOURCE for name in assumed})
    return Facts(values, prov)
