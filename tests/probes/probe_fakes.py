"""Fakes for the probe tests: a fake NVML, fake ``nvidia-smi`` scripts, fake dist-infos.

The fakes stand in for our *interfaces* (the few pynvml calls the GPU probe makes, an executable
on PATH, files on disk); the code under test runs for real against them.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostenv import require_exec

from preflight.registry import registry


class NVMLError(Exception):
    """Base of the fake's errors; subclass names follow pynvml's (``NVMLError_NotSupported``)."""


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801 - pynvml's naming
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class NVMLError_Unknown(NVMLError):  # noqa: N801
    pass


@dataclass
class FakeGPU:
    name: str
    cc: tuple[int, int] | None
    uuid: str
    mem_bytes: int = 80 * 1024**3
    mig: int | None = 0          # None: nvmlDeviceGetMigMode raises NotSupported
    mig_uuids: tuple[str, ...] = ()


@dataclass
class _Mem:
    total: int
    free: int = 0
    used: int = 0


@dataclass
class FakeNVML:
    """The pynvml subset the GPU probe calls. ``as_bytes`` mimics nvidia-ml-py < 11.515."""

    gpus: list[FakeGPU] = field(default_factory=list)
    driver: str = "580.159.04"
    cuda: int = 13000
    init_error: Exception | None = None
    as_bytes: bool = False
    has_v2: bool = True
    calls: list[str] = field(default_factory=list)
    initialized: bool = False

    def _s(self, text: str) -> Any:
        return text.encode() if self.as_bytes else text

    def _need_init(self) -> None:
        if not self.initialized:
            raise NVMLError_Unknown("NVML not initialized")

    def nvmlInit(self) -> None:  # noqa: N802 - pynvml's names
        self.calls.append("init")
        if self.init_error is not None:
            raise self.init_error
        self.initialized = True

    def nvmlShutdown(self) -> None:  # noqa: N802
        self.calls.append("shutdown")
        self.initialized = False

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        self._need_init()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:  # noqa: N802
        self._need_init()
        return ("gpu", index)

    def _gpu(self, handle: Any) -> FakeGPU:
        return self.gpus[handle[1]]

    def nvmlDeviceGetName(self, handle: Any) -> Any:  # noqa: N802
        return self._s(self._gpu(handle).name)

    def nvmlDeviceGetUUID(self, handle: Any) -> Any:  # noqa: N802
        if handle[0] == "mig":
            return self._s(self.gpus[handle[1]].mig_uuids[handle[2]])
        return self._s(self._gpu(handle).uuid)

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]:  # noqa: N802
        cc = self._gpu(handle).cc
        if cc is None:
            raise NVMLError_Unknown("Unknown Error")
        return cc

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> _Mem:  # noqa: N802
        return _Mem(self._gpu(handle).mem_bytes)

    def nvmlDeviceGetMigMode(self, handle: Any) -> list[int]:  # noqa: N802
        mig = self._gpu(handle).mig
        if mig is None:
            raise NVMLError_NotSupported("Not Supported")
        return [mig, mig]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: Any) -> int:  # noqa: N802
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: Any, index: int) -> Any:  # noqa: N802
        if index >= len(self._gpu(handle).mig_uuids):
            raise NVMLError("Not Found")
        return ("mig", handle[1], index)

    def nvmlSystemGetDriverVersion(self) -> Any:  # noqa: N802
        return self._s(self.driver)

    def nvmlSystemGetCudaDriverVersion(self) -> int:  # noqa: N802
        return self.cuda

    def __getattr__(self, name: str) -> Any:
        if name == "nvmlSystemGetCudaDriverVersion_v2" and self.has_v2:
            return lambda: self.cuda
        raise AttributeError(name)


H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-40GB"


def uuid(n: int) -> str:
    return f"GPU-{n:08x}-1111-2222-3333-44445555{n:04x}"


_SMI_CSV = """0, NVIDIA H100 80GB HBM3, GPU-aaaa0000-1111-2222-3333-444455550000, 9.0, 81559, Disabled, 550.54.15
1, NVIDIA H100 80GB HBM3, GPU-bbbb0000-1111-2222-3333-444455550001, 9.0, 81559, [N/A], 550.54.15
"""
_SMI_HEADER = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
+-----------------------------------------------------------------------------------------+
"""

SMI_SCRIPTS: Mapping[str, str] = {
    # Prints real-looking CSV for --query-gpu, the table header otherwise.
    "ok": "#!/bin/sh\nif [ -n \"$1\" ]; then\ncat <<'EOF'\n" + _SMI_CSV + "EOF\nelse\ncat <<'EOF'\n"
          + _SMI_HEADER + "EOF\nfi\n",
    "fail": "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate with the "
            "NVIDIA driver.' >&2\nexit 9\n",
    # A hang through a grandchild (sleep), the way a stuck driver call holds a real nvidia-smi.
    "hang": "#!/bin/sh\nsleep 30\necho never\n",
    "garbage": "#!/bin/sh\necho 'No devices were found, or something else entirely'\n",
    # Megabytes of GPU-shaped lines (a wrapper gone wrong): must not be parsed for minutes.
    "flood": "#!/bin/sh\nyes '0, NVIDIA H100 80GB HBM3, GPU-aaaa, 9.0, 81559, Disabled, 550.54.15' "
             "| head -n 200000\n",
    # Prints forever (issue 13: 6.7 GB buffered in 5 s before the output was capped while read).
    "flood-forever": "#!/bin/sh\nexec yes '0, NVIDIA H100 80GB HBM3, GPU-aaaa, 9.0, 81559, Disabled, "
                     "550.54.15'\n",
    # The same index twice, and a blank compute_cap for an L4 (cc from the GPU table).
    "dupes": "#!/bin/sh\nif [ -n \"$1\" ]; then\ncat <<'EOF'\n0, NVIDIA L4, GPU-dddd0000-1111-2222-3333"
             "-444455550000, [N/A], 23034, [N/A], 550.54.15\n0, NVIDIA L4, GPU-dddd0000-1111-2222-3333-"
             "444455550000, [N/A], 23034, [N/A], 550.54.15\nEOF\nelse\ncat <<'EOF'\n" + _SMI_HEADER
             + "EOF\nfi\n",
    # A pre-R510 driver: rejects the compute_cap field, answers without it.
    "old": "#!/bin/sh\ncase \"$1\" in\n*compute_cap*) echo 'Field \"compute_cap\" is not a valid "
           "field to query.' >&2; exit 2;;\n--query-gpu*) echo '0, Tesla V100-SXM2-32GB, "
           "GPU-cccc0000-1111-2222-3333-444455550000, 32510, [N/A], 470.82.01';;\n"
           "*) echo '| NVIDIA-SMI 470.82.01  Driver Version: 470.82.01  CUDA Version: 11.4 |';;\n"
           "esac\n",
}


def write_smi(folder: Path, kind: str) -> Path:
    """Write a fake ``nvidia-smi`` of ``kind`` (ok | fail | hang | garbage) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    require_exec(folder)
    exe = folder / "nvidia-smi"
    exe.write_text(SMI_SCRIPTS[kind])
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def make_dist(site: Path, name: str, version: str | None, *, metadata: str | None = None,
              files: Mapping[str, str] | None = None) -> Path:
    """Write ``<name>-<version>.dist-info`` into ``site``; ``metadata=""`` leaves METADATA out."""
    folder = site / f"{name.replace('-', '_')}-{version or '0'}.dist-info"
    folder.mkdir(parents=True)
    if metadata is None:
        lines = ["Metadata-Version: 2.1", f"Name: {name}"]
        if version is not None:
            lines.append(f"Version: {version}")
        metadata = "\n".join(lines) + "\nSummary: fake\n\nLong description.\nVersion: 0.0\n"
    if metadata != "":
        (folder / "METADATA").write_text(metadata)
    for rel, text in (files or {}).items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def assert_registered(names: Iterable[str]) -> None:
    """Every fact name a probe produced is in the registry (rules can only name those)."""
    unknown = [n for n in names if registry().lookup(n) is None]
    assert not unknown, f"unregistered fact names: {unknown}"
