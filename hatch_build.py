"""Wheel build hook: ship the precomputed rule index next to the bundled rules.

``preflight/_rules_index.json`` holds each rule file's parsed data (without its tests) and its
size and CRC-32 (see preflight/engine/index.py), so a check on an installed wheel loads the rule base
without parsing YAML. It is generated here from the same rules/ the wheel ships, so it can never
describe other files; the loader still checks every file against its entry. Editable installs get no index (they
read the source tree, which may be edited at any time) and parse the YAML as a checkout does.
"""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class RulesIndexHook(BuildHookInterface):  # type: ignore[misc]
    """Adds ``preflight/_rules_index.json`` to the wheel."""

    PLUGIN_NAME = "custom"
    _tmp: str | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        sys.path.insert(0, str(root))
        try:
            from preflight.engine.index import INDEX_NAME, build_index
            from preflight.engine.loader import find_rule_files
        finally:
            sys.path.pop(0)
        rules_dir = root / "rules"
        doc = build_index(rules_dir, find_rule_files([rules_dir]))
        # force_include needs a file that exists until the wheel is written: a private temporary
        # folder, removed in finalize() once the wheel is built, and at the latest when the build
        # backend's process ends (a build that fails between the two never calls finalize).
        # Before, every wheel build left an fp8-doctor-index-* folder in the temp directory.
        self._tmp = tempfile.mkdtemp(prefix="fp8-doctor-index-")
        atexit.register(shutil.rmtree, self._tmp, ignore_errors=True)
        out = Path(self._tmp) / INDEX_NAME
        out.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
        build_data["force_include"][str(out)] = f"preflight/{INDEX_NAME}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
