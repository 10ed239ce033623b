"""AMD GPUs, seen through ROCm's KFD topology in sysfs, when NVML and nvidia-smi see none.

An AMD Instinct node has no NVIDIA driver, so the GPU probe's NVML and nvidia-smi both fail and
every ``gpu.*`` fact was Unknown "no NVIDIA driver is installed here": the rules that ROCm's
Transformer Engine needs (FP8D-HW-0011: MXFP8 needs a gfx950 GPU) could not fire on the machine
that trains, only under ``--assume gpu=MI300X``. The amdgpu driver's KFD publishes every GPU node
with its ISA target: ``/sys/class/kfd/kfd/topology/nodes/N/properties`` holds
``gfx_target_version 90402`` (gfx942: major 9, minor 4, stepping 2, the last two in hex as the
gfx name writes them; CPU nodes have 0). The amdgpu KFD writes the property
(torvalds/linux@v6.8 drivers/gpu/drm/amd/amdkfd/kfd_topology.c, ``gfx_target_version``) from the
value kfd_device.c sets per IP version (9.4.2 -> 90402); ROCm's runtime reads the same file.

Read only after NVML and nvidia-smi found nothing; plain sysfs reads, bounded (at most
:data:`MAX_NODES` nodes of :data:`MAX_BYTES` each), never a child process. The visible GPUs follow
``ROCR_VISIBLE_DEVICES``, then ``HIP_VISIBLE_DEVICES``, then ``CUDA_VISIBLE_DEVICES`` (HIP honours
the last too), as ordinals; UUID forms leave the count Unknown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from preflight.base.bounded import read_bytes
from preflight.base.digits import ascii_int
from preflight.facts import Unknown
from preflight.probes.gpu_table import ROCM_GPUS

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
MAX_NODES = 256
MAX_BYTES = 64 * 1024
VISIBLE_VARS = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def gfx_name(version: int) -> str | None:
    """``90402`` -> ``gfx942``, ``90010`` -> ``gfx90a``, ``110000`` -> ``gfx1100``; None for 0
    (a CPU node) or a value no gfx name spells."""
    major, minor, stepping = version // 10000, version // 100 % 100, version % 100
    if version <= 0 or major <= 0 or minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def read_kfd(root: str = KFD_NODES) -> tuple[str, ...]:
    """The gfx targets of the GPU nodes under ``root``, in node order; () when there is no KFD
    (no amdgpu driver: every NVIDIA machine and laptop) or no GPU node."""
    try:
        names = os.listdir(root)
    except OSError:
        return ()
    nodes = sorted((n for n in (ascii_int(x, 4) for x in names) if n is not None))[:MAX_NODES]
    targets: list[str] = []
    for node in nodes:
        try:
            text = read_bytes(os.path.join(root, str(node), "properties"), MAX_BYTES,
                              partial=True).decode("ascii", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "gfx_target_version":
                gfx = gfx_name(ascii_int(value.strip(), 9) or 0)
                if gfx is not None:
                    targets.append(gfx)
                break
    return tuple(targets)


def amd_facts(targets: tuple[str, ...], nvidia_reason: str,
              env: Mapping[str, str]) -> dict[str, Any]:
    """The ``gpu.*`` facts of a node whose GPUs are AMD (``targets`` non-empty)."""
    visible, note = _visible(len(targets), env)
    count: Any = len(visible) if visible is not None else Unknown(note)
    shown = [targets[i] for i in visible] if visible is not None else list(targets)
    first = shown[0] if shown else targets[0]
    why = Unknown(f"an AMD GPU ({first}, found through ROCm's KFD): it has no CUDA compute "
                  "capability, so the rules that need one are left undetermined")
    other = Unknown("an AMD GPU node (found through ROCm's KFD): NVIDIA's driver and CUDA "
                    "versions do not apply, and KFD's topology gives no memory size")
    names = [_label(t) for t in shown]
    facts: dict[str, Any] = {
        "gpu.source": "kfd", "gpu.nvml_error": nvidia_reason,
        "gpu.host_count": len(targets), "gpu.count": count,
        "gpu.host_names": [_label(t) for t in targets],
        "gpu.visible_indices": list(visible) if visible is not None else Unknown(note),
        "gpu.names": names if visible is not None else Unknown(note),
        "gpu.name": names[0] if names else Unknown("no AMD GPU is visible to this process"),
        "gpu.gfx": first,
        "gpu.heterogeneous": len(set(shown)) > 1,
        "gpu.mig": False,
    }
    for fact in ("gpu.ccs", "gpu.host_ccs", "gpu.cc", "gpu.min_cc", "gpu.max_cc", "gpu.arch"):
        facts[fact] = why
    for fact in ("gpu.driver", "gpu.cuda_driver", "gpu.mem_total_mib"):
        facts[fact] = other
    return facts


def _label(gfx: str) -> str:
    models = [g.name for g in ROCM_GPUS if g.gfx == gfx]
    return f"AMD Instinct {'/'.join(models)} ({gfx})" if models else f"AMD GPU ({gfx})"


def _visible(count: int, env: Mapping[str, str]) -> tuple[tuple[int, ...] | None, str]:
    """The host indices this process sees (None: not decidable, with the reason). ROCr applies
    ``ROCR_VISIBLE_DEVICES`` first; HIP then picks by ordinal among the devices ROCr exposes
    (``HIP_VISIBLE_DEVICES``, else ``CUDA_VISIBLE_DEVICES``): both set, they compose
    (pytorch/pytorch#142292, torch/cuda/__init__.py ``_parse_visible_devices``: "The ROCR env var
    is processed first which then reduces the number of GPUs that HIP can select from")."""
    chosen = tuple(range(count))
    for group in (VISIBLE_VARS[:1], VISIBLE_VARS[1:]):
        var = next((v for v in group if env.get(v) is not None), None)
        if var is None:
            continue
        spec = env[var]
        seen: list[int] = []
        for entry in (e.strip() for e in spec.split(",")):
            if not entry:
                break
            index = ascii_int(entry, 4)
            if index is None:
                return None, (f"{var}={spec[:80]!r} names a GPU by something other than its "
                              "ordinal; the probe reads ordinals only")
            if index >= len(chosen) or index in seen:
                break       # as the runtime does: the list ends at the first bad ordinal
            seen.append(index)
        chosen = tuple(chosen[i] for i in seen)
    return chosen, ""
