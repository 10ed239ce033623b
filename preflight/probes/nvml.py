"""NVML through a child process: start it, collect its answer, turn a crash into a reason.

Issue 13 item 3: an NVML whose ``nvmlInit`` segfaults, aborts or calls ``_exit`` used to end
fp8-doctor with no report (exit 139 / 134 / 42), the one probe that was not isolated. The reading
itself is :mod:`preflight.probes.nvml_child` (standard library only), run as a script under
:mod:`preflight.base.proc` (timeout :data:`NVML_TIMEOUT_S`, output capped at
:data:`NVML_MAX_BYTES`). When it works the facts are the same as in-process NVML gave.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.base import isolate, proc

if TYPE_CHECKING:
    from preflight.facts import Unknown

# Imported by collect_all before anything else, to start the child early: what is only needed
# once the answer is read (json, preflight.facts, the child module itself) is imported then.
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvml_child.py")

NVML_TIMEOUT_S = 10.0
"""How long NVML may take to answer. A GPU that has fallen off the bus or a wedged driver can make
``nvmlInit``/``nvmlDeviceGet*`` block (DCGM diag treats that as a failed check, not a hang)."""
NVML_MAX_BYTES = 1024 * 1024
"""The NVML child prints one JSON line (~300 bytes a GPU); more is not an answer."""


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


def _unknown(value: Any) -> str | Unknown:
    """A value of the NVML child's document: a string, or ``{"unknown": reason}``."""
    from preflight.facts import Unknown

    if isinstance(value, dict):
        return Unknown(str(value.get("unknown", "NVML gave no value")))
    return str(value)


def host_from_doc(doc: Mapping[str, Any]) -> HostView:
    """The host view from :func:`preflight.probes.nvml_child.read`'s document."""
    gpus = tuple(HostGPU(int(g["index"]), str(g["name"]), g.get("cc"), str(g.get("uuid") or ""),
                         g.get("mem_total_mib"), g.get("mig"), tuple(g.get("mig_uuids") or ()))
                 for g in doc["gpus"])
    return HostView(gpus, _unknown(doc["driver"]), _unknown(doc["cuda_driver"]), "nvml")


def read_nvml(nvml: Any) -> HostView:
    """The host view through an NVML module (``pynvml`` or a fake); raises if NVML fails."""
    from preflight.probes import nvml_child

    return host_from_doc(nvml_child.read(nvml))


def within(seconds: float, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a daemon thread; TimeoutError if it has not returned after ``seconds``.

    Only for NVML fakes handed to :func:`probe_gpu` in-process (tests); the real NVML runs in a
    child process (:func:`start_nvml`), which a crash or a hang cannot take down with us.
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


LIBRARY = "libnvidia-ml.so.1"
LD_CACHE = "/etc/ld.so.cache"
_CACHE_MAGIC = (b"glibc-ld.so.cache", b"ld.so-1.7.0")


def library_absent(env: Mapping[str, str] | None = None, cache: str = LD_CACHE) -> str | None:
    """Why ``libnvidia-ml.so.1`` certainly cannot load here, or None when it may.

    Looked up the way glibc's loader does, without loading anything: ``LD_LIBRARY_PATH``, the
    ``ld.so.cache`` that ``ldconfig`` writes (the driver installer and the NVIDIA container
    toolkit both run it), the system folders and this Python's own ``lib`` (a conda RPATH). Only
    on glibc Linux with a readable cache; anywhere else, or when in doubt, None, and the child
    looks for itself. Saves a driverless machine the child (~15 ms of CPU of a 0.2 s check).
    """
    if not sys.platform.startswith("linux"):
        return None
    env = os.environ if env is None else env
    from preflight.base import bounded

    try:
        data = bounded.read_bytes(cache, 64 * 1024 * 1024)
    except OSError:
        return None  # musl, a container without a cache: let the child try
    if not data.startswith(_CACHE_MAGIC) or LIBRARY.encode() + b"\0" in data:
        return None
    raw = env.get("LD_LIBRARY_PATH")
    folders = [p or "." for p in raw.split(":")] if raw else []  # glibc: "" is the cwd
    folders += ["/lib", "/usr/lib", "/lib64", "/usr/lib64",
                os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib")]
    if any(os.path.lexists(os.path.join(folder, LIBRARY)) for folder in folders):
        return None
    from preflight.probes.nvml_child import NVML_HINTS

    return (f"NVML: {NVML_HINTS['LibraryNotFound']} ({LIBRARY} is in no folder of "
            f"LD_LIBRARY_PATH, {cache} or the system library folders)")


def start_nvml(timeout: float = NVML_TIMEOUT_S) -> proc.Child | str:
    """Start the NVML child (``nvml_child.py``) now; :func:`probe_gpu` collects it.

    Started first by :func:`preflight.probes.collect_all`, so its start-up overlaps the other
    probes. It inherits this process's environment (``LD_LIBRARY_PATH``, ``PYTHONPATH``). A
    string instead of a child: the library is certainly absent (:func:`library_absent`).
    """
    absent = library_absent()
    if absent:
        return absent
    # -S: the child adds site-packages itself once the library loads (see nvml_child).
    return proc.start(isolate.python_argv("-S", CHILD), timeout, env=isolate.python_env(),
                      max_bytes=NVML_MAX_BYTES)


class NVMLCrash(Exception):
    """The NVML child died (a signal, ``_exit``) instead of answering."""


def collect_nvml(child: proc.Child | str, timeout: float) -> HostView | str:
    """The host view from a started NVML child; a string says why NVML could not be used.

    Raises :class:`NVMLCrash` when the child died: a native crash, not a missing driver.
    """
    if isinstance(child, str):  # never started: the library is not on this machine
        return child
    import json

    from preflight.probes import nvml_child

    res = proc.collect(child)
    if res.timed_out:
        return (f"NVML did not answer within {timeout:g} s (a GPU that fell off the bus or a "
                "wedged driver?); `nvidia-smi -q` shows more")
    if res.error:
        return f"NVML child could not be started: {res.error}"
    if res.overflowed:
        raise NVMLCrash(f"the NVML child printed too much ({res.overflow_reason})")
    line = res.stdout.strip().splitlines()[-1:] if res.stdout.strip() else []
    try:
        doc = json.loads(line[0]) if line else None
    except ValueError:
        doc = None
    if res.returncode != 0 or not isinstance(doc, dict):
        rc = res.returncode
        how = (f"killed by {_signal_name(-rc)}" if rc is not None and rc < 0
               else f"exited with code {rc}")
        last = proc.error_line(res.stderr, 300)
        raise NVMLCrash(f"NVML crashed its child process ({how})" + (f": {last}" if last else ""))
    if not doc.get("ok"):
        return str(doc.get("reason") or "NVML: no reason given")
    try:
        return host_from_doc(doc)
    except (KeyError, TypeError, ValueError) as exc:
        why = nvml_child.err(exc)
        raise NVMLCrash(f"the NVML child answered in an unexpected form ({why})") from None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
