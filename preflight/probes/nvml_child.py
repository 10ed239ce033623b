"""NVML, read in a child process: run as a script, it prints the host's GPUs as one JSON line.

Issue 13 item 3: NVML is a native library; an ``nvmlInit`` that segfaults, aborts or calls
``_exit`` ended fp8-doctor with no report (exit 139 / 134 / 42). :mod:`preflight.probes.gpu` runs
this file as ``python nvml_child.py`` through :mod:`preflight.base.proc` (timeout, capped
output), so such a crash ends only this child and becomes a finding. The same :func:`read`
serves the in-process path for test fakes of the pynvml interface.

Only the standard library is imported here, never ``preflight``: the child's start-up is what
the static check pays, and it runs while the other probes do. It is started with ``python -S``
(no ``site``: no ``.pth`` files, no site-packages) and loads ``site`` only once
``libnvidia-ml.so.1`` has loaded, since pynvml lives in site-packages: on a machine without the
NVIDIA driver the child costs an interpreter start and one failed ``dlopen``.

Output: ``{"ok": true, "gpus": [...], "driver": ..., "cuda_driver": ...}`` where a value NVML
could not give is ``{"unknown": reason}``; or ``{"ok": false, "reason": ..., "stage": ...}``.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.path and sys.path[0] and \
        os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    # Run by path, Python put this folder (preflight/probes) first on sys.path: drop it, so no
    # module here can shadow one that pynvml or the standard library imports.
    del sys.path[0]

# typing.TYPE_CHECKING without importing typing: that import alone is ~14 ms of CPU, half of
# this child's start-up on a driverless machine (mypy reads any TYPE_CHECKING name this way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MIB = 1024 * 1024
NVML_HINTS = {
    "LibraryNotFound": "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is "
                       "installed here, or it is not mounted into this container",
    "DriverNotLoaded": "the NVIDIA kernel driver is not loaded",
    "NoPermission": "no permission to talk to the NVIDIA driver",
}


def text(value: Any) -> str:
    """nvidia-ml-py returns bytes before 11.515 and str after; accept both."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def err(exc: BaseException) -> str:
    msg = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {msg}" if type(exc).__name__ not in msg else msg


def nvml_reason(exc: BaseException) -> str:
    for key, hint in NVML_HINTS.items():
        if key in type(exc).__name__:
            return f"NVML: {hint} ({err(exc)})"
    return f"NVML: {err(exc)}"


def _cc(major: int, minor: int) -> str:
    return f"{major}.{minor}"  # base.cc.format_cc, without importing preflight


def _mig(nvml: Any, handle: Any) -> tuple[bool | None, list[str]]:
    try:
        current, _pending = nvml.nvmlDeviceGetMigMode(handle)
    except Exception as exc:  # noqa: BLE001 - NOT_SUPPORTED on GPUs without MIG means "off"
        return (False if "NotSupported" in type(exc).__name__ else None), []
    if not current:
        return False, []
    uuids: list[str] = []
    try:
        for i in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
            try:
                mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, i)
            except Exception:  # noqa: BLE001 - an unpopulated slot
                continue
            uuids.append(text(nvml.nvmlDeviceGetUUID(mig)))
    except Exception:  # noqa: BLE001 - MIG enumeration is best effort
        pass
    return True, uuids


def _gpu(nvml: Any, index: int) -> dict[str, Any]:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    try:
        cc: str | None = _cc(*nvml.nvmlDeviceGetCudaComputeCapability(handle))
    except Exception:  # noqa: BLE001 - reported as an Unknown cc by the parent
        cc = None
    try:
        uuid = text(nvml.nvmlDeviceGetUUID(handle))
    except Exception:  # noqa: BLE001
        uuid = ""
    try:
        mem: int | None = int(nvml.nvmlDeviceGetMemoryInfo(handle).total) // _MIB
    except Exception:  # noqa: BLE001
        mem = None
    mig, mig_uuids = _mig(nvml, handle)
    return {"index": index, "name": text(nvml.nvmlDeviceGetName(handle)), "cc": cc,
            "uuid": uuid, "mem_total_mib": mem, "mig": mig, "mig_uuids": mig_uuids}


def read(nvml: Any) -> dict[str, Any]:
    """The host view through an NVML module (pynvml or a fake); raises if NVML fails."""
    nvml.nvmlInit()
    try:
        gpus = [_gpu(nvml, i) for i in range(int(nvml.nvmlDeviceGetCount()))]
        driver: Any
        try:
            driver = text(nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:  # noqa: BLE001
            driver = {"unknown": f"NVML: {err(exc)}"}
        cuda: Any
        try:
            getter = getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None) or \
                nvml.nvmlSystemGetCudaDriverVersion
            raw = int(getter())
            cuda = f"{raw // 1000}.{(raw % 1000) // 10}"  # NVML's 12040 -> "12.4"
        except Exception as exc:  # noqa: BLE001
            cuda = {"unknown": f"NVML: {err(exc)}"}
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down is best effort
            pass
    return {"ok": True, "gpus": gpus, "driver": driver, "cuda_driver": cuda}


def load() -> Any:
    """pynvml, once the library it wraps is known to load; a dict says why it could not.

    On Linux pynvml does nothing but ``CDLL("libnvidia-ml.so.1")``; trying that first costs a
    failed dlopen on a machine without a driver and saves importing pynvml's ~5,000 lines.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as exc:
            return {"ok": False, "stage": "load",
                    "reason": f"NVML: {NVML_HINTS['LibraryNotFound']} ({exc})"}
    if "site" not in sys.modules:  # started with -S: site-packages (pynvml) only now
        import site

        site.main()
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as exc:
        return {"ok": False, "stage": "import", "reason": f"nvidia-ml-py is not installed ({exc})"}
    except Exception as exc:  # noqa: BLE001 - a broken pynvml install is a fact too
        return {"ok": False, "stage": "import",
                "reason": f"pynvml could not be loaded: {type(exc).__name__}: {exc}"}
    return pynvml


def _escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters past the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dumps(value: Any) -> str:
    """JSON for the document's values (str, int, bool, None, list, dict). Not ``json``: importing
    it (with ``re`` and ``enum``) would be a third of this child's start-up on a driverless
    machine. The parent reads it with ``json.loads``."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):  # ASCII out, whatever this child's stdout encoding is
        return '"' + "".join(c if " " <= c <= "~" and c not in '"\\' else _escape(ord(c))
                             for c in value) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    return dumps(str(value))


def main() -> int:
    nvml = load()
    if isinstance(nvml, dict):
        doc = nvml
    else:
        try:
            doc = read(nvml)
        except Exception as exc:  # noqa: BLE001 - no driver / an NVML error is a fact
            doc = {"ok": False, "stage": "nvml", "reason": nvml_reason(exc)}
    sys.stdout.write(dumps(doc) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
