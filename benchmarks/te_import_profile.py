"""GPU image: which modules make the smoke child's imports (torch, then TE) slow (issue 26).

    python3 benchmarks/te_import_profile.py OUT_DIR [-n 3]     (real TE importable)

Each run is a fresh process importing as the smoke child does (the garbage collector paused,
``torch``, then ``transformer_engine.pytorch`` without its JAX side: ``te_check._without_te_jax``)
under ``python -X importtime``, with bytecode cached in a prefix warmed by one untimed run (an
install that has its bytecode). From the median run (by total) it writes the costliest imports
by cumulative time, and the self time summed per package (two dotted levels), to
OUT_DIR/te_import_profile.txt, and every run's totals to OUT_DIR/te_import_profile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import gc, time
gc.disable()
t = time.perf_counter()
import torch
t1 = time.perf_counter()
from preflight.smoke import te_check
with te_check._without_te_jax():
    import transformer_engine.pytorch
t2 = time.perf_counter()
print(f"TOTALS {t1 - t:.3f} {t2 - t1:.3f}")
"""


def parse(stderr: str) -> list[tuple[str, int, int, int]]:
    """importtime lines -> (module, self us, cumulative us, depth)."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        try:
            _, rest = line.split(":", 1)
            own, cum, name = rest.split("|")
            depth = (len(name) - len(name.lstrip(" "))) // 2
            rows.append((name.strip(), int(own), int(cum), depth))
        except ValueError:
            continue
    return rows


def _run(prefix: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH", ""), ROOT) if p))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    p = subprocess.run([sys.executable, "-X", "importtime", "-X", f"pycache_prefix={prefix}",
                        "-c", _CHILD], capture_output=True, text=True, timeout=180,
                       cwd=tempfile.gettempdir(), env=env)
    torch_s = te_s = None
    for line in p.stdout.splitlines():
        if line.startswith("TOTALS"):
            torch_s, te_s = (float(x) for x in line.split()[1:3])
    return {"rc": p.returncode, "torch_s": torch_s, "te_s": te_s, "rows": parse(p.stderr),
            "tail": p.stderr[-800:] if p.returncode else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    prefix = tempfile.mkdtemp(prefix="te-import-pyc-")
    _run(prefix)   # fills the bytecode prefix
    runs = [_run(prefix) for _ in range(args.n)]
    ok = [r for r in runs if r["torch_s"] is not None]
    doc = {"runs": [{k: v for k, v in r.items() if k != "rows"} for r in runs]}
    lines = [json.dumps(doc["runs"])]
    if ok:
        med = sorted(ok, key=lambda r: r["torch_s"] + r["te_s"])[len(ok) // 2]
        doc["median_torch_s"] = statistics.median(r["torch_s"] for r in ok)
        doc["median_te_s"] = statistics.median(r["te_s"] for r in ok)
        rows = med["rows"]
        lines.append("== costliest imports by cumulative time (median run), ms ==")
        for name, own, cum, depth in sorted(rows, key=lambda r: -r[2])[:70]:
            lines.append(f"{cum / 1000:9.1f} {own / 1000:8.1f}  {'  ' * depth}{name}")
        per: dict[str, int] = defaultdict(int)
        for name, own, _, _ in rows:
            per[".".join(name.split(".")[:2])] += own
        lines.append("== self time per package (two levels), ms ==")
        for name, own in sorted(per.items(), key=lambda kv: -kv[1])[:50]:
            lines.append(f"{own / 1000:9.1f}  {name}")
    with open(os.path.join(args.out, "te_import_profile.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(args.out, "te_import_profile.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
