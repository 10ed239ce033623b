"""Refresh ``preflight/data/releases.json``: the release lists ``fp8-doctor plan`` chooses from.

fp8-doctor never reaches the network at run time, so the plan picks versions from this shipped
list; this script is how it is refreshed (before a release). It asks pip (``pip index versions``,
final releases only), so it works wherever pip reaches the package index, a mirror included.

    python tools/refresh_releases.py            # rewrite preflight/data/releases.json
    python tools/refresh_releases.py --check    # exit 1 when the file is older than 90 days
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

# The FP8 stack whose versions the rules test (pkg.<dist>.version), PEP 503 names.
PACKAGES = ("torch", "transformer-engine", "torchao", "accelerate", "deepspeed", "megatron-core",
            "transformers", "lightning", "pytorch-lightning", "llm-foundry", "mosaicml",
            "flash-attn", "torchtitan", "nvidia-ml-py", "peft", "triton")
OUT = Path(__file__).resolve().parents[1] / "preflight" / "data" / "releases.json"
MAX_AGE_DAYS = 90


def versions(name: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name],
                          capture_output=True, text=True, timeout=120, check=False)
    m = re.search(r"^Available versions: (.+)$", proc.stdout, re.M)
    if not m:
        raise SystemExit(f"{name}: pip index versions gave no list: {proc.stderr.strip()[:200]}")
    # A local build on this machine's own index ("2.13.0+cpu") is no public release.
    return [v.strip() for v in m.group(1).split(",") if v.strip() and "+" not in v]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check the file's age")
    args = ap.parse_args()
    if args.check:
        data = json.loads(OUT.read_text())
        age = (dt.date.today() - dt.date.fromisoformat(data["generated"])).days
        print(f"{OUT.name}: generated {data['generated']} ({age} days ago)")
        return 1 if age > MAX_AGE_DAYS else 0
    packages = {name: versions(name) for name in PACKAGES}
    doc = {"generated": dt.date.today().isoformat(), "source": "PyPI, final releases (pip index versions)",
           "packages": packages}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in packages.items())
    head = json.dumps({k: v for k, v in doc.items() if k != "packages"})[:-1]
    OUT.write_text(f'{head}, "packages": {{\n{body}\n}}}}\n')
    print(f"wrote {OUT} ({sum(map(len, packages.values()))} releases of {len(packages)} packages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
