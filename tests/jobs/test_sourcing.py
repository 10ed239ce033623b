"""A file a launch script sources that does not exist where the script says (jobs/sourcing.py):
a warning at the ``source`` line, saying whether ``set -e`` stops the job there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from preflight.jobs.read import read_paths

SLIME = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "slime"


def _refs(path: Path) -> list[tuple[str, int | None, str, str]]:
    read = read_paths([str(path)])
    return [(Path(p.path).name, p.line, p.level, p.message) for p in read.problems
            if p.code == "reference"]


def test_slime_low_precision_script_at_its_upstream_place_names_a_missing_model_script(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # upstream (THUDM/slime v0.3.1) the script is scripts/low_precision/run-qwen3-4b-fp8.sh and
    # sources ${SCRIPT_DIR}/../scripts/models/qwen3-4B.sh, i.e. scripts/scripts/models/
    (tmp_path / "scripts" / "low_precision").mkdir(parents=True)
    shutil.copytree(SLIME / "scripts" / "models", tmp_path / "scripts" / "models")
    script = tmp_path / "scripts" / "low_precision" / "run-qwen3-4b-fp8.sh"
    shutil.copy(SLIME / "low_precision" / "run-qwen3-4b-fp8.sh", script)
    monkeypatch.chdir(tmp_path)
    [(name, line, level, message)] = _refs(script)
    assert (name, line, level) == ("run-qwen3-4b-fp8.sh", 27, "warning")
    assert "scripts/scripts/models/qwen3-4B.sh" in message
    assert "set -e` (line 13)" in message and "would not start" in message


def test_where_the_path_resolves_nothing_is_reported() -> None:
    # the fixture keeps the script beside scripts/, where the path means what its authors meant
    assert _refs(SLIME / "low_precision" / "run-qwen3-4b-fp8.sh") == []


@pytest.mark.parametrize(("prelude", "stops"), [
    ("set -euo pipefail\n", True), ("set -o errexit\n", True), ("set -x\n", False),
    ("set -e\nset +e\n", False), ("", False)])
def test_set_e_decides_what_a_missing_source_does(tmp_path: Path, prelude: str,
                                                  stops: bool) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n" + prelude +
                   'SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"\n'
                   'source "${SCRIPT_DIR}/models/llama.sh"\n'
                   "torchrun pretrain_gpt.py --fp8-format hybrid --num-layers 2\n")
    [(_, line, _, message)] = _refs(run)
    assert line == prelude.count("\n") + 3
    assert ("would not start" in message) is stops
    assert ("bash goes on without it" in message) is not stops


def test_paths_whose_meaning_depends_on_the_node_are_not_reported(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nset -e\nsource /opt/conda/etc/profile.d/conda.sh\n"
                   "source env/common.sh\nsource $HOME/.bashrc\n"
                   "torchrun pretrain_gpt.py --fp8-format hybrid --num-layers 2\n")
    assert _refs(run) == []


@pytest.mark.parametrize(("folder", "shown"), [
    ('"$(dirname "${BASH_SOURCE[0]}")"', "<the script's folder>"),
    ('"$(cd "$(dirname "$0")" && pwd -P)"', "$(dirname $0)"),
    ('"$(dirname "$0")"', "$(dirname $0)")])
def test_a_missing_source_under_the_script_folder_is_named_without_markers(
        tmp_path: Path, folder: str, shown: str) -> None:
    # the folder markers are control characters of the shell reader (reading/shelldir.py); the
    # Megatron-MoE-ModelZoo wrapper (holdout21) showed '\x01run-folder\x01P/cluster_configs/...'
    run = tmp_path / "run.sh"
    run.write_text(f"#!/bin/bash\nset -e\nsource {folder}/conf/missing.conf\n"
                   "torchrun pretrain_gpt.py --fp8-format hybrid\n")
    [(_, line, _, message)] = _refs(run)
    assert line == 3
    assert not any(ord(c) < 32 for c in message)
    assert f"{shown}/conf/missing.conf" in message
