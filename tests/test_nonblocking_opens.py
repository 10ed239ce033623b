"""Every open of a user path is non-blocking and checked again on the open file (issue 21 item 4):
a FIFO swapped in for a config, a pyproject.toml, a baseline, a snapshot or a model config
between the ``stat`` that said "regular file" and the ``open`` hung the run forever.

Each reader runs in a child process in which the file is really replaced by a FIFO (no writer)
right after its first (or second) ``stat``, the moment the race opens. Before, the child blocked
in ``open`` until its timeout; now it refuses the FIFO at once, naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import os, sys
target, after, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
real_stat, seen = os.stat, [0]

def stat(path, *args, **kwargs):
    result = real_stat(path, *args, **kwargs)
    if isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)) == target:
        seen[0] += 1
        if seen[0] == after:                      # the race: a FIFO takes the file's place
            os.unlink(target)
            os.mkfifo(target)
    return result

os.stat = stat
try:
    if which == "config":
        from preflight.reading.parse import read_text
        read_text(target)
    elif which == "pyproject":
        from preflight.projectconfig import load_project_config
        load_project_config(target)
    elif which == "baseline":
        from preflight.baseline import read_baseline
        read_baseline(target)
    elif which == "snapshot":
        from preflight.snapshot import load
        load(target)
    elif which == "model-config":
        from preflight.speedup.shapes import read_hf_config
        read_hf_config(target)
    print("READ")
except Exception as exc:
    print("REFUSED", type(exc).__name__, exc)
"""

CONTENT = {
    "config": ("ds.json", '{"train_batch_size": 8}'),
    "pyproject": ("pyproject.toml", '[tool.fp8-doctor]\nfail-on = "warning"\n'),
    "baseline": ("b.json", '{"schema": "fp8-doctor-baseline/1", "findings": []}'),
    "snapshot": ("s.json", json.dumps({"schema_version": "1.0", "facts": {}})),
    "model-config": ("config.json", json.dumps({
        "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_hidden_layers": 2})),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("after", [1, 2])
@pytest.mark.parametrize("which", sorted(CONTENT))
def test_a_fifo_swapped_in_after_the_stat_is_refused_not_waited_on(tmp_path: Path, which: str,
                                                                   after: int) -> None:
    name, text = CONTENT[which]
    target = tmp_path / name
    target.write_text(text)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(target), str(after), which],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    if target.is_fifo():                          # the swap happened before the read
        assert out.startswith("REFUSED") and ("FIFO" in out or "regular file" in out), out
    else:
        assert out == "READ"
