"""Refresh ``preflight/data/releases.json``: the releases ``fp8-doctor plan`` chooses from, and
what each one requires of the others.

fp8-doctor never reaches the network at run time, so the plan picks versions from this shipped
file; this script is the one way it is refreshed (before a release). For each package of the FP8
stack it reads the registry's JSON API (``https://pypi.org/pypi/<name>/json``): the final,
not-yanked releases, newest first; and, for each release, the ``Requires-Dist`` lines of its
wheel's METADATA that name another package of the stack (issue 24, item 4: ``plan`` proposed
llm-foundry 0.22.0, whose wheel requires torch 2.7 and mosaicml 0.32, on a torch 2.4 job). The
METADATA is read with HTTP range requests on the wheel (its zip directory, then that one member),
so a 700 MB torch wheel costs a few kilobytes. Releases without a wheel record no requirements
(``plan`` then says it could not check them).

    python tools/refresh_releases.py            # rewrite preflight/data/releases.json
    python tools/refresh_releases.py --check    # exit 1 when the file is older than 90 days
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import sys
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from email.parser import HeaderParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

# The FP8 stack whose versions the rules test (pkg.<dist>.version), PEP 503 names.
PACKAGES = ("torch", "transformer-engine", "torchao", "accelerate", "deepspeed", "megatron-core",
            "transformers", "lightning", "pytorch-lightning", "llm-foundry", "mosaicml",
            "flash-attn", "torchtitan", "nvidia-ml-py", "peft", "triton")
OUT = Path(__file__).resolve().parents[1] / "preflight" / "data" / "releases.json"
MAX_AGE_DAYS = 90
OLDEST = Version("0.0")
"""Releases older than this per package are left out (none today: the rules name old bounds)."""
API = "https://pypi.org/pypi/{name}/json"
TIMEOUT = 60


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "fp8-doctor-refresh", **(
        headers or {})})
    with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 - https only
        return bytes(resp.read())


class RangeFile(io.RawIOBase):
    """A read-only file over HTTP range requests (what zipfile needs to read one member)."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0
        self.cache: dict[tuple[int, int], bytes] = {}

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else \
            self.size + offset
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        start = self.pos
        if start >= self.size - 65536:             # the directory: fetch the whole tail once
            tail = max(0, self.size - 65536)
            block = self.cache.get((tail, self.size))
            if block is None:
                block = _get(self.url, {"Range": f"bytes={tail}-{self.size - 1}"})
                self.cache[(tail, self.size)] = block
            data = block[start - tail:end - tail]
        else:
            data = _get(self.url, {"Range": f"bytes={start}-{end - 1}"})
        self.pos += len(data)
        return data

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)


def _wheel(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The wheel whose METADATA stands for the release (pure Python, else Linux x86_64)."""
    wheels = [f for f in files if f.get("filename", "").endswith(".whl") and not f.get("yanked")]
    for pick in ("-none-any.whl", "-cp311-cp311-manylinux", "-cp312-cp312-manylinux",
                 "-cp310-cp310-manylinux", "manylinux", "linux_x86_64"):
        hit = [f for f in wheels if pick in f["filename"] and ("x86_64" in f["filename"]
                                                                  or "-none-any" in f["filename"])]
        if hit:
            return sorted(hit, key=lambda f: f["filename"])[-1]
    return wheels[0] if wheels else None


def requires_of(wheel: dict[str, Any], stack: set[str]) -> list[str]:
    """The wheel's ``Requires-Dist`` entries that name a package of ``stack`` (outside an
    optional extra), each as ``name specifier[; marker]`` (extras dropped from the name)."""
    with zipfile.ZipFile(RangeFile(wheel["url"], int(wheel["size"]))) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode("utf-8", "replace")
    out = []
    for line in HeaderParser().parsestr(text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if req.marker is not None and "extra" in str(req.marker):
            continue            # an optional extra: pip installs it only when asked
        if name in stack:
            out.append(f"{name}{req.specifier}" + (f"; {req.marker}" if req.marker else ""))
    return sorted(set(out))


def releases(name: str) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Final, not-yanked releases newest first, and the wheel chosen for each."""
    doc = json.loads(_get(API.format(name=name)))
    keyed = []
    wheels = {}
    for ver, files in doc.get("releases", {}).items():
        try:
            v = Version(ver)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or v.local or v < OLDEST:
            continue
        if not files or all(f.get("yanked") for f in files):
            continue
        keyed.append((v, ver))
        wheel = _wheel(files)
        if wheel is not None:
            # a mirror may give the file's address relative to the API's
            wheels[ver] = {**wheel, "url": urljoin(API.format(name=name), wheel["url"])}
    keyed.sort(reverse=True)
    return [ver for _, ver in keyed], wheels


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check the file's age")
    ap.add_argument("--jobs", type=int, default=8, help="parallel metadata reads")
    args = ap.parse_args()
    if args.check:
        data = json.loads(OUT.read_text())
        age = (dt.date.today() - dt.date.fromisoformat(data["generated"])).days
        print(f"{OUT.name}: generated {data['generated']} ({age} days ago)")
        return 1 if age > MAX_AGE_DAYS else 0
    stack = set(PACKAGES)
    packages: dict[str, list[str]] = {}
    todo: list[tuple[str, str, dict[str, Any]]] = []
    for name in PACKAGES:
        versions, wheels = releases(name)
        packages[name] = versions
        todo += [(name, v, wheels[v]) for v in versions if v in wheels]
        print(f"{name}: {len(versions)} releases, {len(wheels)} wheels", file=sys.stderr)

    def one(item: tuple[str, str, dict[str, Any]]) -> tuple[str, str, list[str] | None]:
        name, ver, wheel = item
        try:
            return name, ver, requires_of(wheel, stack - {name})
        except Exception as exc:  # noqa: BLE001 - one unreadable wheel is a gap, not a stop
            print(f"  {name} {ver}: metadata not read ({type(exc).__name__})", file=sys.stderr)
            return name, ver, None

    requires: dict[str, dict[str, list[str]]] = {}
    with ThreadPoolExecutor(args.jobs) as pool:
        for name, ver, reqs in pool.map(one, todo):
            if reqs is not None:
                requires.setdefault(name, {})[ver] = reqs
    doc = {"generated": dt.date.today().isoformat(),
           "source": "PyPI JSON API: final, not-yanked releases; Requires-Dist from each "
                     "release's wheel METADATA (names of this stack only)"}
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in packages.items())
    reqs = ",\n".join(f"  {json.dumps(k)}: {json.dumps(requires[k], sort_keys=True)}"
                      for k in PACKAGES if k in requires)
    head = json.dumps(doc)[:-1]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(f'{head}, "packages": {{\n{body}\n}}, "requires": {{\n{reqs}\n}}}}\n')
    n = sum(len(v) for v in requires.values())
    print(f"wrote {OUT} ({sum(map(len, packages.values()))} releases of {len(packages)} "
          f"packages; requirements of {n} releases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
