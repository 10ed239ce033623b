"""Known GPUs: NVIDIA product name -> compute capability and architecture; AMD Instinct names.

Used by ``--assume gpu=NAME`` (plan an environment that is not installed) and to name the
architecture of a compute capability the probe read from NVML. Compute capabilities are from
NVIDIA's table (https://developer.nvidia.com/cuda-gpus and .../cuda-legacy-gpus): sm_100 for
B200/GB200, sm_103 for B300/GB300, sm_120 for RTX 50xx and RTX PRO Blackwell, sm_121 for the
DGX Spark GB10. H20/H800 are Hopper export parts (sm_90); B100 is sm_100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownGPU:
    """One GPU model: the canonical name users type, its compute capability and architecture."""

    name: str
    cc: str
    arch: str
    aliases: tuple[str, ...] = ()


KNOWN_GPUS: tuple[KnownGPU, ...] = (
    KnownGPU("V100", "7.0", "volta", ("Tesla V100",)),
    KnownGPU("T4", "7.5", "turing", ("Tesla T4",)),
    KnownGPU("A100", "8.0", "ampere", ("A100-SXM4", "A100-PCIE", "A800")),
    KnownGPU("A30", "8.0", "ampere"),
    KnownGPU("A10", "8.6", "ampere"),
    KnownGPU("A10G", "8.6", "ampere"),
    KnownGPU("A40", "8.6", "ampere"),
    KnownGPU("RTX A6000", "8.6", "ampere", ("A6000",)),
    KnownGPU("A2", "8.6", "ampere"),
    KnownGPU("A16", "8.6", "ampere"),
    KnownGPU("RTX A5000", "8.6", "ampere", ("A5000",)),
    KnownGPU("RTX 3080", "8.6", "ampere", ("GeForce RTX 3080",)),
    KnownGPU("RTX 3090", "8.6", "ampere", ("GeForce RTX 3090", "RTX 3090 Ti")),
    KnownGPU("RTX 3060", "8.6", "ampere", ("RTX 3060 Ti",)),
    KnownGPU("RTX 3070", "8.6", "ampere", ("RTX 3070 Ti",)),
    KnownGPU("L4", "8.9", "ada"),
    KnownGPU("L40", "8.9", "ada"),
    KnownGPU("L40S", "8.9", "ada"),
    KnownGPU("RTX 4090", "8.9", "ada", ("GeForce RTX 4090",)),
    KnownGPU("RTX 4080", "8.9", "ada", ("GeForce RTX 4080", "RTX 4080 SUPER")),
    KnownGPU("RTX 4070", "8.9", "ada", ("RTX 4070 SUPER", "RTX 4070 Ti", "RTX 4070 Ti SUPER")),
    KnownGPU("RTX 4060", "8.9", "ada", ("RTX 4060 Ti",)),
    KnownGPU("L20", "8.9", "ada"),
    KnownGPU("L2", "8.9", "ada"),
    KnownGPU("RTX 2000 Ada", "8.9", "ada", ("RTX 2000 Ada Generation",)),
    KnownGPU("RTX 4000 Ada", "8.9", "ada", ("RTX 4000 Ada Generation",
                                            "RTX 4000 SFF Ada Generation")),
    KnownGPU("RTX 4500 Ada", "8.9", "ada", ("RTX 4500 Ada Generation",)),
    KnownGPU("RTX 5000 Ada", "8.9", "ada", ("RTX 5000 Ada Generation",)),
    KnownGPU("RTX 6000 Ada", "8.9", "ada", ("RTX 6000 Ada Generation",)),
    KnownGPU("H100", "9.0", "hopper", ("H100 SXM", "H100 PCIe", "H100 NVL")),
    KnownGPU("H800", "9.0", "hopper"),
    KnownGPU("H20", "9.0", "hopper"),
    KnownGPU("H200", "9.0", "hopper", ("H200 NVL",)),
    KnownGPU("GH200", "9.0", "hopper"),
    KnownGPU("B100", "10.0", "blackwell"),
    KnownGPU("B200", "10.0", "blackwell"),
    KnownGPU("GB200", "10.0", "blackwell"),
    KnownGPU("B300", "10.3", "blackwell"),
    KnownGPU("GB300", "10.3", "blackwell"),
    KnownGPU("RTX 5090", "12.0", "blackwell", ("GeForce RTX 5090",)),
    KnownGPU("RTX 5080", "12.0", "blackwell", ("GeForce RTX 5080",)),
    KnownGPU("RTX 5070", "12.0", "blackwell", ("RTX 5070 Ti",)),
    KnownGPU("RTX 5060", "12.0", "blackwell", ("RTX 5060 Ti",)),
    KnownGPU("RTX PRO 5000 Blackwell", "12.0", "blackwell", ("RTX PRO 5000",)),
    KnownGPU("RTX PRO 4500 Blackwell", "12.0", "blackwell", ("RTX PRO 4500",)),
    KnownGPU("RTX PRO 4000 Blackwell", "12.0", "blackwell", ("RTX PRO 4000",)),
    KnownGPU("RTX PRO 6000 Blackwell", "12.0", "blackwell", ("RTX PRO 6000",)),
    KnownGPU("GB10", "12.1", "blackwell", ("DGX Spark", "DGX Spark GB10")),
)


def _key(name: str) -> str:
    """Normalize a GPU name for lookup: case, vendor prefixes and separators do not matter."""
    text = name.lower()
    text = re.sub(r"\b(nvidia|geforce|tesla)\b", " ", text)
    return re.sub(r"[\s_\-]+", "", text)


_BY_KEY: dict[str, KnownGPU] = {}
for _gpu in KNOWN_GPUS:
    for _alias in (_gpu.name, *_gpu.aliases):
        _BY_KEY[_key(_alias)] = _gpu


def lookup(name: str) -> KnownGPU | None:
    """The known GPU called ``name``, or None.

    Accepts the short names (``"H100"``, ``"nvidia h100"``, ``"RTX-4090"``) and full product names
    as NVML prints them (``"NVIDIA H100 80GB HBM3"``, ``"NVIDIA A100-SXM4-40GB"``): the longest
    run of whole words that is a known name wins, so ``"RTX 4080"`` never matches ``"T4"``.
    """
    exact = _BY_KEY.get(_key(name))
    if exact is not None:
        return exact
    words = [w for w in re.split(r"[\s_\-]+", name.lower())
             if w not in ("", "nvidia", "geforce", "tesla")]
    best: KnownGPU | None = None
    best_len = 0
    for i in range(len(words)):
        for j in range(i + 1, len(words) + 1):
            key = "".join(words[i:j])
            if key in _BY_KEY and len(key) > best_len:
                best, best_len = _BY_KEY[key], len(key)
    return best


def known_names() -> list[str]:
    """Canonical names accepted by ``--assume gpu=NAME``, in table order (NVIDIA, then AMD)."""
    return [g.name for g in KNOWN_GPUS] + [g.name for g in ROCM_GPUS]


@dataclass(frozen=True)
class RocmGPU:
    """An AMD Instinct GPU: ROCm, no CUDA compute capability (its ISA is a gfx target)."""

    name: str
    gfx: str


# AMD's ROCm hardware table (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html):
# CDNA 3 (gfx942) runs FP8 as e4m3fnuz/e5m2fnuz, CDNA 4 (gfx950) the OCP formats and MX types.
# Planning such a job must not stop at "unknown GPU" (holdout21's Primus jobs): the name is kept,
# and every CUDA-architecture fact is Unknown, as on an AMD machine where NVML finds no GPU.
ROCM_GPUS: tuple[RocmGPU, ...] = (
    RocmGPU("MI300X", "gfx942"),
    RocmGPU("MI300A", "gfx942"),
    RocmGPU("MI308X", "gfx942"),
    RocmGPU("MI325X", "gfx942"),
    RocmGPU("MI350X", "gfx950"),
    RocmGPU("MI355X", "gfx950"),
)


def _rocm_key(name: str) -> str:
    return re.sub(r"\b(amd|instinct)\b|[\s_\-]+", "", name.lower())


_ROCM_BY_KEY: dict[str, RocmGPU] = {_rocm_key(g.name): g for g in ROCM_GPUS}


def lookup_rocm(name: str) -> RocmGPU | None:
    """The AMD Instinct GPU called ``name`` (``"MI300X"``, ``"AMD Instinct MI355X"``), or None."""
    return _ROCM_BY_KEY.get(_rocm_key(name))
