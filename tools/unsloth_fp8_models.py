"""Regenerate preflight/data/unsloth_fp8_models.json: the model names unsloth maps to a
pre-quantized FP8 checkpoint when ``load_in_fp8`` is set, per release.

unsloth's ``unsloth/models/mapper.py`` holds ``__INT_TO_FLOAT_MAPPER`` as a literal dict; each
entry whose value is a dict with an ``"8"`` list (official, block, row) makes every name of its
``"16"`` and ``"8"`` lists and its key a key of ``FLOAT_TO_FP8_BLOCK_MAPPER`` /
``FLOAT_TO_FP8_ROW_MAPPER`` (lower-cased; the loop after the dict, L1262-L1291 at tag
February-2026). ``loader_utils.__get_model_name`` looks ``model_name.lower()`` up there first;
a name not found is quantized on the fly (``_get_fp8_mode_and_check_settings``). The file is
parsed with ``ast`` (never imported or run).

Usage: python tools/unsloth_fp8_models.py GIT_DIR TAG [TAG ...] > preflight/data/unsloth_fp8_models.json
(GIT_DIR: a clone of unslothai/unsloth; the JSON committed was made from the tags November-2025,
February-2026 and v0.1.801-beta).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys


def _show(git_dir: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", git_dir, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def fp8_names(source: str) -> set[str]:
    """The lower-cased keys of the FP8 mappers mapper.py builds."""
    tree = ast.parse(source)
    table = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__INT_TO_FLOAT_MAPPER" for t in node.targets):
            table = ast.literal_eval(node.value)
    if not isinstance(table, dict):
        raise SystemExit("no literal __INT_TO_FLOAT_MAPPER in mapper.py")
    names: set[str] = set()
    for key, values in table.items():
        if not (isinstance(values, dict) and "8" in values):
            continue
        official = values["8"][0]
        names.update({key.lower(), official.lower() + "-dynamic", values["16"][0].lower()})
        names.update(k.lower() for k in values["8"])
        names.update(k.lower() for k in values["16"])
    return names


def version(git_dir: str, tag: str) -> str:
    for path in ("unsloth/_version.py", "unsloth/models/_utils.py"):
        try:
            found = re.search(r'^__version__ = "([^"]+)"', _show(git_dir, tag, path), re.M)
        except subprocess.CalledProcessError:
            continue
        if found:
            return found.group(1)
    raise SystemExit(f"no __version__ at {tag}")


def main(argv: list[str]) -> int:
    git_dir, tags = argv[0], argv[1:]
    releases = {}
    for tag in tags:
        commit = subprocess.run(["git", "-C", git_dir, "rev-parse", f"{tag}^{{commit}}"],
                                check=True, capture_output=True, text=True).stdout.strip()
        names = fp8_names(_show(git_dir, tag, "unsloth/models/mapper.py"))
        releases[version(git_dir, tag)] = {"tag": tag, "commit": commit, "names": sorted(names)}
    json.dump({"source": "unslothai/unsloth unsloth/models/mapper.py", "releases": releases},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
