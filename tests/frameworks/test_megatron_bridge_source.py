"""The recipe preset read from a Megatron-Bridge checkout in the job
(frameworks/megatron_bridge_source.py) is worked out once per check, never across checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.frameworks import megatron_bridge_source as source
from preflight.jobs.read import read_paths

# the shape of NVIDIA-NeMo/Megatron-Bridge @ 0dae7282 src/megatron/bridge/recipes/nemotronh/
# nemotron_3_super.py:102 (reduced; as tests/frameworks/test_holdout8_classes.py)
RECIPE = '''def nemotron_3_super_pretrain_config():
    cfg = _common()
    cfg.mixed_precision = "{preset}"
    return cfg
'''
LAUNCH = ("#!/bin/bash\nuv run --no-sync python scripts/training/run_recipe.py "
          "--recipe nemotron_3_super_pretrain_config\n")


def _job(tmp_path: Path, preset: str, launches: int = 1) -> tuple[Path, list[Path]]:
    (tmp_path / ".git").mkdir(exist_ok=True)     # a checkout: its root is the job's
    recipes = tmp_path / "src/megatron/bridge/recipes/nemotronh"
    recipes.mkdir(parents=True, exist_ok=True)
    (recipes / "nemotron_3_super.py").write_text(RECIPE.format(preset=preset))
    scripts = []
    for n in range(launches):
        script = tmp_path / f"examples/pretrain_{n}.sh"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(LAUNCH)
        scripts.append(script)
    return recipes / "nemotron_3_super.py", scripts


def test_a_second_check_sees_a_changed_recipe(tmp_path: Path) -> None:
    recipe, (script,) = _job(tmp_path, "nemotron_3_super_bf16_with_nvfp4_mixed")
    read = read_paths([str(script)])
    assert read.facts["config.megatron_bridge.recipe_preset"] == \
        "nemotron_3_super_bf16_with_nvfp4_mixed"
    recipe.write_text(RECIPE.format(preset="bf16_with_mxfp8_mixed"))
    read = read_paths([str(script)])                 # the same process, a new check
    assert read.facts["config.megatron_bridge.recipe_preset"] == "bf16_with_mxfp8_mixed"


def test_the_recipe_folder_is_searched_once_per_check(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _, scripts = _job(tmp_path, "bf16_with_mxfp8_mixed", launches=3)
    searched: list[str] = []
    search = source._search

    def counting(folder: str, recipe: str) -> tuple[str, str, int] | None:
        searched.append(recipe)
        return search(folder, recipe)

    monkeypatch.setattr(source, "_search", counting)
    read = read_paths([str(s) for s in scripts])
    assert read.facts["config.megatron_bridge.recipe_preset"] == "bf16_with_mxfp8_mixed"
    assert searched == ["nemotron_3_super_pretrain_config"]
    read_paths([str(scripts[0])])
    assert len(searched) == 2                        # a new check searches again


def test_outside_a_check_every_call_reads_the_source(tmp_path: Path) -> None:
    recipe, (script,) = _job(tmp_path, "bf16_with_mxfp8_mixed")
    got = source.recipe_preset(str(script), "nemotron_3_super_pretrain_config")
    assert got is not None and got[0] == "bf16_with_mxfp8_mixed"
    recipe.write_text(RECIPE.format(preset="bf16_mixed"))
    got = source.recipe_preset(str(script), "nemotron_3_super_pretrain_config")
    assert got is not None and got[0] == "bf16_mixed"
