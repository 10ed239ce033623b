"""base.proc imports subprocess only when a child starts (issue 26 item 4): a check on a machine
without an NVIDIA driver starts no child, and subprocess (with locale and selectors) was ~3 ms
of its start-up. What is asserted is ``sys.modules`` in a fresh interpreter, never a timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from preflight.base import proc

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code + "; import sys; "
                          "print('subprocess' in sys.modules)"], capture_output=True, text=True,
                         timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.strip()


def test_the_default_pipe_is_subprocess_pipe() -> None:
    assert proc.PIPE == subprocess.PIPE


def test_importing_proc_does_not_import_subprocess() -> None:
    assert _modules_after("import preflight.base.proc, preflight.probes.nvml, "
                          "preflight.probes.gpu") == "False"


def test_starting_a_child_does() -> None:
    code = ("from preflight.base import proc; "
            "r = proc.run([__import__('sys').executable, '-c', 'print(1)'], 30); "
            "assert r.returncode == 0 and r.stdout.strip() == '1', r")
    assert _modules_after(code) == "True"
