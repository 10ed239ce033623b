"""How long a child that imported torch takes to *exit* after its work is done.

    python benchmarks/child_exit.py [-r 5] [--imports torch torchao.float8] [--cuda]

The smoke child writes its result and then returns from ``main``; the parent waits for the exit
(issue 26: the TE child is the critical path of ``check``). This times, for each exit style, the
span from the child's last act (a timestamp written to a file) to the parent's ``wait`` returning:

- ``sys.exit``: the interpreter's normal teardown (module finalisation, atexit hooks, C++ static
  destructors, the CUDA runtime's own teardown when ``--cuda`` made a context);
- ``os._exit``: what ``preflight/smoke/child.py`` does since 2026-11-27 once RESULT.json is
  written.

Medians over ``-r`` runs of each, interleaved. A measurement, asserted nowhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CODE = """
import os, sys, time
{imports}
import torch
x = torch.randn(256, 256{device})
y = (x @ x).sum().item()
with open({stamp!r}, "w") as fh:
    fh.write(repr(time.time()))
sys.stdout.flush()
{leave}
"""


def once(imports: list[str], cuda: bool, leave: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        stamp = os.path.join(tmp, "stamp")
        code = CODE.format(imports="\n".join(f"import {m}" for m in imports),
                           device=", device='cuda'" if cuda else "", stamp=stamp,
                           leave="os._exit(0)" if leave == "os._exit" else "sys.exit(0)")
        subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=600, check=True)
        end = time.time()
        with open(stamp, encoding="utf-8") as fh:
            return end - float(fh.read())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--repeat", type=int, default=5)
    ap.add_argument("--imports", nargs="*", default=["torch"])
    ap.add_argument("--cuda", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    runs: dict[str, list[float]] = {"sys.exit": [], "os._exit": []}
    for _ in range(args.repeat):
        for leave in runs:
            runs[leave].append(round(once(args.imports, args.cuda, leave), 3))
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "imports": args.imports,
           "cuda": args.cuda, "cpus": os.cpu_count(), "load": os.getloadavg(), "runs": runs,
           "median_s": {k: statistics.median(v) for k, v in runs.items()}}
    print(json.dumps(doc))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
