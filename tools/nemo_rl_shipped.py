"""Regenerate ``preflight/data/nemo_rl_shipped.json`` from a NeMo-RL checkout.

Usage: ``python tools/nemo_rl_shipped.py /path/to/NVIDIA-NeMo/RL REF [REF ...]``

A NeMo-RL recipe names its base with ``defaults: ../../grpo_math_1B.yaml``; a job folder often
holds only the recipe. For the shipped configs a recipe stands on (every top-level
``examples/configs/*.yaml`` and every file another shipped config names in ``defaults:``), this
reads each at every REF (``git show``, never run), merges its ``defaults:`` chain as NeMo-RL
does (fp8-doctor's own :func:`preflight.reading.layered.load_chain`) and keeps, for each setting
of :data:`preflight.frameworks.nemo_rl.BASE_DECIDES`, the value when it is the same at every REF
holding the file (absent counts as its own value, ``${...}`` kept as written). A setting that
changed between REFs is left out, so fp8-doctor keeps it undetermined.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight.frameworks.nemo_rl import BASE_DECIDES  # noqa: E402
from preflight.reading.layered import load_chain  # noqa: E402
from preflight.reading.parse import parse_yaml, read_text  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "preflight" / "data" / "nemo_rl_shipped.json"
ABSENT = "<absent>"
# what NeMo-RL reads when a setting is absent, where that equals a value a file can write:
# fp8_cfg missing or without `enabled` is FP8 off (nemo_rl/models/policy/lm_policy.py l.233-234
# at v0.4.0: `megatron_cfg.get("fp8_cfg", None) ... .get("enabled", False)`; models/megatron/
# setup.py l.576 at v0.7.0), so a file that gained `fp8_cfg: {enabled: false}` did not change
AS_ABSENT = {"policy.megatron_cfg.fp8_cfg.enabled": False}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def _values(root: str, rel: str) -> dict[str, Any] | None:
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return None
    chain = load_chain(path, parse_yaml(read_text(path)), style="paths")
    if chain.unread or chain.problems:
        return None
    raw = dict(chain.config.facts("x")[0])   # before ${...}: an interpolation stays as written
    chain.config.resolve()
    done, _ = chain.config.facts("x")
    out = {}
    for key in BASE_DECIDES:
        value = raw.get(f"x.{key}", ABSENT)
        out[key] = value if isinstance(value, str) and "${" in value else \
            done.get(f"x.{key}", AS_ABSENT.get(key, ABSENT))
    return out


def _bases(root: str) -> set[str]:
    """Top-level configs and every file a shipped config names in ``defaults:``."""
    configs = Path(root, "examples/configs")
    found = {str(p.relative_to(root)) for p in configs.glob("*.yaml")}
    for path in configs.rglob("*.yaml"):
        try:
            data = parse_yaml(read_text(str(path))).data
        except Exception:       # a file that does not parse names nothing
            continue
        parent = data.get("defaults") if isinstance(data, dict) else None
        if isinstance(parent, str) and parent.endswith((".yaml", ".yml")):
            target = os.path.normpath(os.path.join(path.parent, parent))
            if os.path.isfile(target):
                found.add(os.path.relpath(target, root))
    return found


def main(repo: str, refs: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        roots = {}
        for ref in refs:
            root = os.path.join(tmp, ref)
            os.makedirs(root)
            tar = subprocess.run(["git", "-C", repo, "archive", ref, "examples/configs"],
                                 check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", root], input=tar, check=True)
            roots[ref] = root
        commits = {ref: _git(repo, "rev-parse", ref).strip()[:10] for ref in refs}
        files = sorted(set().union(*(_bases(r) for r in roots.values())))
        table: dict[str, Any] = {}
        for rel in files:
            seen = {ref: v for ref in refs if (v := _values(roots[ref], rel)) is not None}
            if not seen:
                continue
            stable = {k: vals[0] for k in BASE_DECIDES
                      if len({json.dumps(v[k]) for v in seen.values()}) == 1
                      for vals in [[v[k] for v in seen.values()]]}
            table[rel] = {"read_at": [f"{ref} ({commits[ref]})" for ref in seen],
                          "values": {k: v for k, v in stable.items()}}
    doc = {"source": "NVIDIA-NeMo/RL examples/configs, read by tools/nemo_rl_shipped.py",
           "absent": ABSENT, "configs": table}
    # one line per config: small, and a diff shows which config changed
    lines = [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in table.items()]
    text = ("{\n" + f' "absent": {json.dumps(ABSENT)},\n "source": {json.dumps(doc["source"])},\n'
            ' "configs": {\n' + ",\n".join(lines) + "\n }\n}\n")
    assert json.loads(text) == doc
    OUT.write_text(text, "utf-8")
    print(f"{len(table)} shipped configs -> {OUT}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
