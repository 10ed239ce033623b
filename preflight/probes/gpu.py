"""GPU probe: what GPUs the host has (NVML, else ``nvidia-smi``) and which this process sees.

NVML (nvidia-ml-py, in-process, ~0.1 s, no CUDA context) reports the *host* view; the *process*
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
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.probes import proc
from preflight.probes.base import ProbeResult, ProbeStatus
from preflight.probes.gpu_table import arch_for_cc, cc_key, format_cc, lookup

SMI_TIMEOUT_S = 5.0
SMI_MAX_BYTES = 256 * 1024
"""More nvidia-smi output than this is not a GPU list (~150 bytes a GPU) and is not parsed."""
NVML_TIMEOUT_S = 10.0
"""How long NVML may take to answer. A GPU that has fallen off the bus or a wedged driver can make
``nvmlInit``/``nvmlDeviceGet*`` block (DCGM diag treats that as a failed check, not a hang)."""
_MIB = 1024 * 1024


@dataclass(frozen=True)
class HostGPU:
    """One physical GPU as NVML / nvidia-smi sees it (host index order)."""

    index: int
    name: str
    cc: str | None
    uuid: str = ""
    mem_total_mib: int | None = None
    mig: bool | None = None
    mig_uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostView:
    """Every GPU on the host plus driver facts, and which tool said so."""

    gpus: tuple[HostGPU, ...]
    driver: str | Unknown
    cuda_driver: str | Unknown
    source: str


@dataclass(frozen=True)
class Visible:
    """One device this process would see: the host GPU behind it, and whether it is a MIG slice."""

    gpu: HostGPU
    mig_slice: bool = False


def _text(value: Any) -> str:
    """nvidia-ml-py returns bytes before 11.515 and str after; accept both."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _err(exc: BaseException) -> str:
    msg = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {msg}" if type(exc).__name__ not in msg else msg


_NVML_HINTS = {
    "LibraryNotFound": "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is "
                       "installed here, or it is not mounted into this container",
    "DriverNotLoaded": "the NVIDIA kernel driver is not loaded",
    "NoPermission": "no permission to talk to the NVIDIA driver",
}


def _nvml_reason(exc: BaseException) -> str:
    for key, hint in _NVML_HINTS.items():
        if key in type(exc).__name__:
            return f"NVML: {hint} ({_err(exc)})"
    return f"NVML: {_err(exc)}"


def _cuda_version(raw: int) -> str:
    """NVML's 12040 -> "12.4"."""
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _nvml_mig(nvml: Any, handle: Any) -> tuple[bool | None, tuple[str, ...]]:
    try:
        current, _pending = nvml.nvmlDeviceGetMigMode(handle)
    except Exception as exc:  # noqa: BLE001 - NOT_SUPPORTED on GPUs without MIG means "off"
        return (False if "NotSupported" in type(exc).__name__ else None), ()
    if not current:
        return False, ()
    uuids: list[str] = []
    try:
        for i in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, i)
            except Exception:  # noqa: BLE001 - an unpopulated slot
                continue
            uuids.append(_text(nvml.nvmlDeviceGetUUID(mig)))
    except Exception:  # noqa: BLE001 - MIG enumeration is best effort
        pass
    return True, tuple(uuids)


def read_nvml(nvml: Any) -> HostView:
    """The host view through an NVML module (``pynvml`` or a fake); raises if NVML fails."""
    nvml.nvmlInit()
    try:
        gpus = []
        for index in range(int(nvml.nvmlDeviceGetCount())):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            try:
                cc: str | None = format_cc(*nvml.nvmlDeviceGetCudaComputeCapability(handle))
            except Exception:  # noqa: BLE001 - reported as an Unknown cc below
                cc = None
            try:
                uuid = _text(nvml.nvmlDeviceGetUUID(handle))
            except Exception:  # noqa: BLE001
                uuid = ""
            try:
                mem: int | None = int(nvml.nvmlDeviceGetMemoryInfo(handle).total) // _MIB
            except Exception:  # noqa: BLE001
                mem = None
            mig, mig_uuids = _nvml_mig(nvml, handle)
            gpus.append(HostGPU(index, _text(nvml.nvmlDeviceGetName(handle)), cc, uuid, mem,
                                mig, mig_uuids))
        driver: str | Unknown
        try:
            driver = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:  # noqa: BLE001
            driver = Unknown(f"NVML: {_err(exc)}")
        cuda_driver: str | Unknown
        try:
            getter = getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None) or \
                nvml.nvmlSystemGetCudaDriverVersion
            cuda_driver = _cuda_version(int(getter()))
        except Exception as exc:  # noqa: BLE001
            cuda_driver = Unknown(f"NVML: {_err(exc)}")
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down is best effort
            pass
    return HostView(tuple(gpus), driver, cuda_driver, "nvml")


_SMI_FIELDS: tuple[str, ...] = ("index", "name", "uuid", "compute_cap", "memory.total",
                               "mig.mode.current", "driver_version")


def _smi_int(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


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
        if len(values) != len(fields) or not values[0].isdigit() or int(values[0]) in seen:
            continue  # not a GPU line, or the same index again
        seen.add(int(values[0]))
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
    if re.fullmatch(r"\d+", entry):
        index = int(entry)
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


class _NoNVML(Exception):
    """The NVML library is not on this machine (checked before importing pynvml)."""


def _load_pynvml() -> Any:
    """pynvml, once the library it wraps is known to load.

    On Linux pynvml does nothing but ``CDLL("libnvidia-ml.so.1")``; trying that first costs a
    failed dlopen on a machine without a driver and saves importing pynvml's ~5,000 lines.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as exc:
            raise _NoNVML(f"NVML: {_NVML_HINTS['LibraryNotFound']} ({exc})") from None
    import pynvml  # nvidia-ml-py

    return pynvml


def _within(seconds: float, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a daemon thread; TimeoutError if it has not returned after ``seconds``.

    NVML is reached through ctypes, which releases the GIL during the call, so a call that blocks
    in the driver only blocks its own thread. The thread is abandoned (a daemon: it does not keep
    the process alive), which is the best a process can do with a call that never returns.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="fp8-doctor-nvml", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"no answer within {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def probe_gpu(*, nvml: Any = None, env: Mapping[str, str] | None = None,
              smi: str = "nvidia-smi", smi_timeout: float = SMI_TIMEOUT_S,
              nvml_timeout: float = NVML_TIMEOUT_S) -> ProbeResult:
    """The ``gpu.*`` facts. ``nvml`` (an object with the pynvml calls used) is for tests."""
    env = os.environ if env is None else env
    spec = env.get("CUDA_VISIBLE_DEVICES")
    nvml_error = ""
    if nvml is None:
        try:
            nvml = _load_pynvml()
        except _NoNVML as exc:
            nvml_error = str(exc)
        except ImportError as exc:
            nvml_error = f"nvidia-ml-py is not installed ({exc})"
        except Exception as exc:  # noqa: BLE001 - a broken pynvml install is a fact too
            nvml_error = f"pynvml could not be loaded: {type(exc).__name__}: {exc}"
    host: HostView | None = None
    if nvml is not None:
        try:
            host = _within(nvml_timeout, read_nvml, nvml)
        except TimeoutError:
            nvml_error = (f"NVML did not answer within {nvml_timeout:g} s (a GPU that fell off the "
                          "bus or a wedged driver?); `nvidia-smi -q` shows more")
        except Exception as exc:  # noqa: BLE001 - no driver / NVML error is a fact
            nvml_error = _nvml_reason(exc)
    if host is not None:
        facts = _device_facts(host, spec)
        return ProbeResult("gpu", facts, {n: "nvml" for n in facts})

    exe = shutil.which(smi, path=env.get("PATH")) if os.sep not in smi else smi
    if exe is None:
        reason = f"{nvml_error}; nvidia-smi not found on PATH"
    else:
        smi_host = read_smi(exe, smi_timeout)
        if isinstance(smi_host, HostView):
            facts = _device_facts(smi_host, spec)
            facts["gpu.nvml_error"] = nvml_error
            return ProbeResult("gpu", facts, {n: "nvidia-smi" for n in facts})
        reason = f"{nvml_error}; {smi_host}"
    facts = {name: Unknown(reason) for name in _ALL_GPU_FACTS}
    facts["gpu.source"] = "none"
    facts["gpu.nvml_error"] = nvml_error
    prov = {n: "nvml" for n in facts}
    if spec is not None and spec.strip() == "":
        facts["gpu.count"] = 0  # CUDA_VISIBLE_DEVICES="" hides every GPU, whatever the host has
        prov["gpu.count"] = "runtime"
    return ProbeResult("gpu", facts, prov, status=ProbeStatus.SKIPPED, reason=reason)
