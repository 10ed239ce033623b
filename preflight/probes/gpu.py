"""GPU probe: what GPUs the host has (NVML, else ``nvidia-smi``) and which this process sees.

NVML (nvidia-ml-py, no CUDA context) reports the *host* view, read in a child process
(:mod:`preflight.probes.nvml`: a native crash in NVML ends the child, not the run); the *process*
view is what CUDA will expose after ``CUDA_VISIBLE_DEVICES`` (indices, ``GPU-`` UUIDs or
``MIG-`` UUIDs; an empty string hides every GPU; CUDA stops at the first entry it cannot
resolve). ``torch.utils.collect_env`` mixes the two views (it lists an ``nvidia-smi`` GPU and says
"CUDA available: False" with ``CUDA_VISIBLE_DEVICES=``); we report both, separately.

``nvidia-smi`` is only a fallback, run with a timeout (it hangs on sick nodes). Without NVML and
``nvidia-smi`` every ``gpu.*`` fact is ``Unknown`` with the reason, never a crash or a hang.

Index caveat: CUDA orders devices fastest-first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, NVML by
PCI bus; on a host mixing GPU models an index in ``CUDA_VISIBLE_DEVICES`` may name another GPU
than NVML's index (``env.CUDA_DEVICE_ORDER`` is collected so rules can say so).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.base import proc
from preflight.base.cc import arch_for_cc, cc_key
from preflight.base.digits import ascii_int
from preflight.base.which import which
from preflight.facts import Unknown
from preflight.probes import nvml_child, rocm
from preflight.probes.base import ProbeResult, ProbeStatus
from preflight.probes.gpu_table import lookup
from preflight.probes.nvml import (
    NVML_TIMEOUT_S,
    HostGPU,
    HostView,
    NVMLCrash,
    collect_nvml,
    read_nvml,
    start_nvml,
    within,
)

__all__ = ["HostGPU", "HostView", "probe_gpu", "read_nvml", "read_smi", "resolve_visible",
           "start_nvml"]

SMI_TIMEOUT_S = 5.0
SMI_MAX_BYTES = 256 * 1024
"""More nvidia-smi output than this is not a GPU list (~150 bytes a GPU) and is not parsed."""


@dataclass(frozen=True)
class Visible:
    """One device this process would see: the host GPU behind it, and whether it is a MIG slice."""

    gpu: HostGPU
    mig_slice: bool = False


_SMI_FIELDS: tuple[str, ...] = ("index", "name", "uuid", "compute_cap", "memory.total",
                               "mig.mode.current", "driver_version")


def _smi_int(text: str) -> int | None:
    return ascii_int(text.strip())


def read_smi(executable: str, timeout: float = SMI_TIMEOUT_S) -> HostView | str:
    """The host view from ``nvidia-smi`` CSV; a string says why it could not be had.

    MIG slice UUIDs are not read here (only ``nvidia-smi -L`` lists them), so a ``MIG-`` entry in
    CUDA_VISIBLE_DEVICES resolves only through NVML.
    """
    fields = _SMI_FIELDS
    res = proc.run([executable, f"--query-gpu={','.join(fields)}",
                    "--format=csv,noheader,nounits"], timeout, max_bytes=SMI_MAX_BYTES)
    if res.overflowed:
        # One CSV line per GPU is ~150 bytes; more means something else is answering (a wrapper
        # script, a broken driver spewing). Read no further: issue 13 saw 6.7 GB buffered.
        return (f"nvidia-smi printed more than {SMI_MAX_BYTES:,} bytes, far more than a GPU "
                f"list; not parsed ({res.overflow_reason})")
    if not res.ok and not res.timed_out and "compute_cap" in res.stdout + res.stderr:
        # Drivers before R510 reject the compute_cap field: ask again without it and take the
        # compute capability from the GPU table by product name.
        fields = tuple(f for f in _SMI_FIELDS if f != "compute_cap")
        res = proc.run([executable, f"--query-gpu={','.join(fields)}",
                        "--format=csv,noheader,nounits"], timeout, max_bytes=SMI_MAX_BYTES)
    if res.timed_out:
        return f"nvidia-smi did not answer within {timeout:g} s (killed)"
    if not res.ok:
        detail = (res.stderr or res.stdout).strip().splitlines()
        why = res.error or f"exit code {res.returncode}" + (f": {detail[0]}" if detail else "")
        return f"nvidia-smi failed ({why})"
    if res.overflowed:
        return (f"nvidia-smi printed more than {SMI_MAX_BYTES:,} bytes, far more than a GPU "
                f"list; not parsed ({res.overflow_reason})")
    gpus = []
    seen: set[int] = set()
    driver = ""
    for line in res.stdout.splitlines():
        values = [c.strip() for c in line.split(",")]
        index = ascii_int(values[0]) if len(values) == len(fields) else None
        if index is None or index in seen:
            continue  # not a GPU line, or the same index again
        seen.add(index)
        col = dict(zip(fields, values, strict=True))
        cc_text = col.get("compute_cap", "")
        if re.fullmatch(r"\d+\.\d+", cc_text):
            cc: str | None = cc_text
        else:
            # No compute_cap field (drivers before R510) or "[N/A]" in it: the GPU table knows
            # the compute capability of every named product.
            known = lookup(col["name"])
            cc = known.cc if known else None
        # "[N/A]" / "[Not Supported]": a GPU without MIG, the same as NVML's NOT_SUPPORTED
        mode = col["mig.mode.current"]
        mig = {"Enabled": True, "Disabled": False}.get(mode, False if "N" in mode else None)
        gpus.append(HostGPU(int(values[0]), col["name"], cc, col["uuid"],
                            _smi_int(col["memory.total"]), mig))
        driver = driver or col["driver_version"]
    if not gpus and res.stdout.strip():
        shown = res.stdout.strip()[:80]
        return f"nvidia-smi printed output that is not the expected CSV: {shown!r}"
    cuda_driver: str | Unknown = Unknown("nvidia-smi did not report a CUDA version")
    if gpus:  # the max CUDA version is only in the plain header ("CUDA Version: 12.4")
        head = proc.run([executable], timeout, max_bytes=SMI_MAX_BYTES)
        m = re.search(r"CUDA Version:\s*(\d+\.\d+)", head.stdout)
        if m:
            cuda_driver = m.group(1)
    return HostView(tuple(gpus), driver or Unknown("nvidia-smi gave no driver version"),
                    cuda_driver, "nvidia-smi")


def resolve_visible(spec: str | None, gpus: Sequence[HostGPU]) -> tuple[list[Visible], str]:
    """Apply ``CUDA_VISIBLE_DEVICES`` to the host GPUs, as CUDA does.

    Returns the visible devices in CUDA order and a note naming the first entry CUDA would stop
    at ("" when every entry resolved). Unset means every GPU; "" means none.
    """
    if spec is None:
        return [Visible(g) for g in gpus], ""
    out: list[Visible] = []
    seen: set[tuple[int, str]] = set()
    for raw in spec.split(","):
        entry = raw.strip()
        if not entry and spec.strip() == "":
            break
        found = _resolve_entry(entry, gpus)
        # A repeated device is treated like an unresolvable entry (CUDA rejects duplicates;
        # not verified against every driver).
        key = None if found is None else (found.gpu.index,
                                          entry.upper() if found.mig_slice else "")
        if found is None or key is None or key in seen:
            return out, (f"CUDA_VISIBLE_DEVICES entry {entry!r} matches no unique device; "
                         "CUDA ignores it and every entry after it")
        seen.add(key)
        out.append(found)
    return out, ""


def _resolve_entry(entry: str, gpus: Sequence[HostGPU]) -> Visible | None:
    if re.fullmatch(r"[0-9]+", entry):
        # ASCII digits only, as the driver's C parsing reads them (`\d` took `٣` for 3); an
        # index past any host's GPUs is none, never int() of 5,000 digits (ValueError, redteam4)
        digits = entry.lstrip("0") or "0"
        index = int(digits) if len(digits) <= 9 else len(gpus)
        return Visible(gpus[index]) if index < len(gpus) else None
    upper = entry.upper()
    if upper.startswith("MIG-GPU-"):  # pre-R470 form MIG-GPU-<uuid>/<gi>/<ci>
        parent = entry[4:].split("/", 1)[0]
        hits = [g for g in gpus if g.uuid.upper() == parent.upper()]
        return Visible(hits[0], mig_slice=True) if len(hits) == 1 else None
    if upper.startswith("MIG-"):
        hits = [g for g in gpus for u in g.mig_uuids if u.upper().startswith(upper)]
        return Visible(hits[0], mig_slice=True) if len(hits) == 1 else None
    if upper.startswith("GPU-"):  # CUDA accepts any unique prefix of the UUID
        hits = [g for g in gpus if g.uuid.upper().startswith(upper)]
        return Visible(hits[0]) if len(hits) == 1 else None
    return None


def _device_facts(host: HostView, spec: str | None) -> dict[str, Any]:
    gpus = host.gpus
    visible, note = resolve_visible(spec, gpus)
    facts: dict[str, Any] = {
        "gpu.source": host.source,
        "gpu.host_count": len(gpus),
        "gpu.host_names": [g.name for g in gpus],
        "gpu.count": len(visible),
        "gpu.visible_indices": [v.gpu.index for v in visible],
        "gpu.names": [v.gpu.name for v in visible],
        "gpu.driver": host.driver,
        "gpu.cuda_driver": host.cuda_driver,
    }
    missing_cc = [g.index for g in gpus if g.cc is None]
    facts["gpu.host_ccs"] = ([g.cc for g in gpus] if not missing_cc else Unknown(
        f"{host.source} gave no compute capability for GPU {missing_cc}"))
    if note:
        facts["gpu.visible_devices_error"] = note
    mems = [v.gpu.mem_total_mib for v in visible]
    facts["gpu.mem_total_mib"] = mems if None not in mems else Unknown(
        f"{host.source} gave no memory size for some GPUs")
    migs = [True if v.mig_slice else v.gpu.mig for v in visible]
    facts["gpu.mig"] = (True if True in migs else
                        False if None not in migs else Unknown(f"{host.source} gave no MIG mode"))
    if not visible:
        return facts
    ccs = [v.gpu.cc for v in visible]
    names = facts["gpu.names"]
    facts["gpu.name"] = names[0]
    if None in ccs:
        why = Unknown(f"{host.source} gave no compute capability for a visible GPU")
        for name in ("gpu.ccs", "gpu.cc", "gpu.min_cc", "gpu.max_cc", "gpu.arch"):
            facts[name] = why
        facts["gpu.heterogeneous"] = len(set(names)) > 1 or why
    else:
        known = [c for c in ccs if c is not None]
        facts["gpu.ccs"] = known
        facts["gpu.cc"] = known[0]
        facts["gpu.min_cc"] = min(known, key=cc_key)
        facts["gpu.max_cc"] = max(known, key=cc_key)
        facts["gpu.arch"] = arch_for_cc(known[0])
        facts["gpu.heterogeneous"] = len(set(names)) > 1 or len(set(known)) > 1
    if None not in mems:
        facts["gpu.min_mem_mib"] = min(m for m in mems if m is not None)
    return facts


_ALL_GPU_FACTS = ("gpu.host_count", "gpu.count", "gpu.host_names", "gpu.host_ccs", "gpu.names",
                  "gpu.name", "gpu.ccs", "gpu.cc", "gpu.min_cc", "gpu.max_cc", "gpu.arch",
                  "gpu.heterogeneous", "gpu.driver", "gpu.cuda_driver", "gpu.mem_total_mib",
                  "gpu.mig", "gpu.visible_indices")


def probe_gpu(*, nvml: Any = None, env: Mapping[str, str] | None = None,
              smi: str = "nvidia-smi", smi_timeout: float = SMI_TIMEOUT_S,
              nvml_timeout: float = NVML_TIMEOUT_S,
              nvml_started: proc.Child | str | None = None,
              kfd: str = rocm.KFD_NODES) -> ProbeResult:
    """The ``gpu.*`` facts.

    NVML is read in a child process (``nvml_started``, from :func:`start_nvml`, or one started
    here). ``nvml`` (an object with the pynvml calls used) is read in-process instead: for tests.
    A child that crashes makes this a CRASHED result naming the crash, with every fact Unknown.
    Where neither NVML nor nvidia-smi answers, AMD GPUs are read from ROCm's KFD topology under
    ``kfd`` (:mod:`preflight.probes.rocm`).
    """
    env = os.environ if env is None else env
    spec = env.get("CUDA_VISIBLE_DEVICES")
    host: HostView | str
    if nvml is not None:
        if isinstance(nvml_started, proc.Child) and nvml_started.proc is not None:
            proc.kill_group(nvml_started.proc)  # a fake replaces it: do not wait for it
            proc.collect(nvml_started)
        try:
            host = within(nvml_timeout, read_nvml, nvml)
        except TimeoutError:
            host = (f"NVML did not answer within {nvml_timeout:g} s (a GPU that fell off the "
                    "bus or a wedged driver?); `nvidia-smi -q` shows more")
        except Exception as exc:  # noqa: BLE001 - no driver / NVML error is a fact
            host = nvml_child.nvml_reason(exc)
    else:
        try:
            host = collect_nvml(nvml_started or start_nvml(nvml_timeout), nvml_timeout)
        except NVMLCrash as exc:
            return _crashed(str(exc), spec)
    if isinstance(host, HostView):
        facts = _device_facts(host, spec)
        return ProbeResult("gpu", facts, {n: "nvml" for n in facts})
    nvml_error = host

    exe = which(smi, path=env.get("PATH")) if os.sep not in smi else smi
    if exe is None:
        reason = f"{nvml_error}; nvidia-smi not found on PATH"
    else:
        smi_host = read_smi(exe, smi_timeout)
        if isinstance(smi_host, HostView):
            facts = _device_facts(smi_host, spec)
            facts["gpu.nvml_error"] = nvml_error
            return ProbeResult("gpu", facts, {n: "nvidia-smi" for n in facts})
        reason = f"{nvml_error}; {smi_host}"
    amd = rocm.read_kfd(kfd)
    if amd:  # an AMD node: NVML and nvidia-smi had nothing to see
        facts = rocm.amd_facts(amd, reason, env)
        return ProbeResult("gpu", facts, {n: "kfd" for n in facts})
    facts, prov = _unknown_facts(reason, nvml_error, spec)
    return ProbeResult("gpu", facts, prov, status=ProbeStatus.SKIPPED, reason=reason)


def _unknown_facts(reason: str, nvml_error: str,
                   spec: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    facts: dict[str, Any] = {name: Unknown(reason) for name in _ALL_GPU_FACTS}
    facts["gpu.source"] = "none"
    facts["gpu.nvml_error"] = nvml_error
    prov = {n: "nvml" for n in facts}
    if spec is not None and spec.strip() == "":
        facts["gpu.count"] = 0  # CUDA_VISIBLE_DEVICES="" hides every GPU, whatever the host has
        prov["gpu.count"] = "runtime"
    return facts, prov


def _crashed(why: str, spec: str | None) -> ProbeResult:
    """NVML took its child down: the probe crashed (a finding), its facts are unknown.

    nvidia-smi is not tried: it loads the same library, and a report that says the GPU facts
    are unknown because NVML crashes is more useful than one guessed around the crash.
    """
    facts, prov = _unknown_facts(f"the gpu probe crashed: {why}", why, spec)
    return ProbeResult("gpu", facts, prov, status=ProbeStatus.CRASHED, reason=why)
