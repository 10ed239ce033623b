"""Regenerate ``preflight/data/torchtune_shipped.json`` from a torchtune checkout.

Usage: ``python tools/torchtune_shipped.py /path/to/meta-pytorch/torchtune REF [REF ...]``

``tune run RECIPE --config llama3_1/8B_full`` takes the config from the installed package when
the name is one of its recipe registry's (``torchtune/_cli/run.py`` ``_get_config``); a job folder
then holds no YAML. For every config name of ``torchtune/_recipe_registry.py`` at every REF
(``git show``, never run), this reads the file and keeps each setting of
:data:`preflight.frameworks.torchtune_shipped.KEYS` whose value is the same at every REF holding
the name (absent counts as its own value); a setting that changed between REFs is listed under
``differs`` so fp8-doctor keeps it undetermined. A name whose file differs between recipes is left
out.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight.frameworks.torchtune_shipped import ABSENT, KEYS  # noqa: E402
from preflight.reading.parse import parse_yaml  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "preflight" / "data" / "torchtune_shipped.json"
_CONFIG = re.compile(r'Config\(\s*name="([^"]+)",\s*file_path="([^"]+)"')


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def _get(data: Any, key: str) -> Any:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return ABSENT
        data = data[part]
    return data


def _at(repo: str, ref: str) -> dict[str, dict[str, Any]]:
    names: dict[str, set[str]] = {}
    for name, path in _CONFIG.findall(_git(repo, "show", f"{ref}:torchtune/_recipe_registry.py")):
        names.setdefault(name, set()).add(path)
    out = {}
    for name, paths in sorted(names.items()):
        if len(paths) != 1:
            continue
        try:
            text = _git(repo, "show", f"{ref}:recipes/configs/{next(iter(paths))}")
        except subprocess.CalledProcessError:
            continue            # the registry names a file the ref does not hold
        data = parse_yaml(text).data
        out[name] = {"file": f"recipes/configs/{next(iter(paths))}",
                     "values": {k: _get(data, k) for k in KEYS}}
    return out


def main(repo: str, refs: list[str]) -> None:
    per = {ref: _at(repo, ref) for ref in refs}
    configs: dict[str, Any] = {}
    for name in sorted({n for got in per.values() for n in got}):
        held = [(ref, got[name]) for ref, got in per.items() if name in got]
        if len({h["file"] for _, h in held}) != 1:
            continue
        values, differs = {}, []
        for key in KEYS:
            seen = [json.dumps(h["values"][key], sort_keys=True) for _, h in held]
            if len(set(seen)) == 1:
                if held[0][1]["values"][key] != ABSENT:
                    values[key] = held[0][1]["values"][key]
            else:
                differs.append(key)
        configs[name] = {"file": held[0][1]["file"], "read_at": [r for r, _ in held],
                         "values": values, "differs": differs}
    source = {ref: _git(repo, "rev-parse", ref).strip() for ref in refs}
    OUT.write_text(json.dumps({"source": source, "configs": configs}, indent=1,
                              sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
