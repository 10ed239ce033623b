"""No child of fp8-doctor loads a library from the job (redteam4, issue 21).

The smoke child's driver thread (``smoke/cudawarm.py``) loads ``libcuda.so.1`` by name, as torch
does, so the dynamic loader searches ``LD_LIBRARY_PATH`` first: with an entry inside the job
(``LD_LIBRARY_PATH=$PWD/lib`` in a cloned repository) the job's own ``libcuda.so.1`` ran its
constructor in the child. ``LD_PRELOAD`` / ``LD_AUDIT`` load a named file into every child, and
Transformer Engine loads cuDNN / NVRTC / cuRAND from ``CUDA_HOME``, ``CUDNN_PATH``, ... The
entries inside the job or the current folder are now left out, as PYTHONPATH's are."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.base import isolate
from tests.hostenv import require_exec

PLANTED = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen(getenv("FP8D_PLANTED_MARK"), "a");
    if (f) { fputs("loaded\n", f); fclose(f); }
}
int cuInit(unsigned int flags) { (void)flags; return 100; }
"""


def test_loader_entries_inside_the_job_are_left_out(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    job, cwd = tmp_path / "job", tmp_path / "cwd"
    (job / "lib").mkdir(parents=True)
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    isolate.add_job_roots([str(job)])
    env = {"LD_LIBRARY_PATH": f"/usr/lib;{job}/lib::{cwd}:/opt/cuda/lib64",
           "LD_PRELOAD": f"libjemalloc.so.2 {job}/lib/x.so:./y.so /opt/z.so",
           "LD_AUDIT": f"{job}/a.so", "OTHER": "kept"}
    got = isolate.loader_env(env)
    assert got is not None
    assert got["LD_LIBRARY_PATH"] == "/usr/lib:/opt/cuda/lib64"
    assert got["LD_PRELOAD"] == "libjemalloc.so.2 /opt/z.so"
    assert "LD_AUDIT" not in got and got["OTHER"] == "kept"
    assert isolate.loader_env({"LD_LIBRARY_PATH": "/usr/lib:/opt/x", "PATH": "/bin"}) is None
    # Transformer Engine loads cuDNN / NVRTC / cuRAND from these folders (v2.18
    # _load_cuda_library_from_system): one inside the job is left out, another kept
    got = isolate.loader_env({"CUDA_HOME": f"{job}/cuda", "CUDNN_PATH": "/opt/cudnn",
                              "NVRTC_HOME": str(cwd)})
    assert got == {"CUDNN_PATH": "/opt/cudnn"}


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build the library")
def test_the_smoke_child_never_loads_a_libcuda_from_the_job(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    from preflight.smoke import runner

    require_exec(tmp_path)
    job = tmp_path / "job"
    (job / "lib").mkdir(parents=True)
    (job / "planted.c").write_text(PLANTED)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(job / "lib" / "libcuda.so.1"),
                    str(job / "planted.c")], check=True, timeout=120)
    mark = tmp_path / "mark"
    monkeypatch.setenv("FP8D_PLANTED_MARK", str(mark))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(job / "lib"))
    # the library works: a process given that path loads it (so the test can fail)
    subprocess.run(["python3", "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"],
                   timeout=60, check=False)
    assert mark.exists()
    mark.unlink()
    isolate.add_job_roots([str(job)])
    runs = runner.run_children([{"device": "cuda", "backends": ["scaled_mm"],
                                 "gemm_only": True}], 120)
    assert runs[0].doc.get("torch_version"), runs[0]       # the child ran, past its imports
    assert not mark.exists()
