"""A Megatron-Bridge recipe's preset read from the job's own source (frameworks/
megatron_bridge_source.py) against a hostile checkout (issue 21, redteam5). The reader took the
first ``def`` of the recipe in the first file (name order) that had one, and any preset string in
its body: a BF16 decoy defined first in the module (Python binds the last ``def``), in another
module (``a_decoy.py``), under ``if False:`` or in a conditional expression made the job's FP8
recipe BF16, FP8 "no". Folders were walked without a bound (only files were counted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.frameworks import megatron_bridge_source as mbs
from preflight.intent import derive
from preflight.jobs.read import read_paths

NAME = "nemotron_3_super_pretrain_config"
FP8 = "nemotron_3_super_bf16_with_nvfp4_mixed"
RECIPES = "src/megatron/bridge/recipes/nemotronh"


def _recipe(preset: str, body: str = "") -> str:
    return (f"def {NAME}():\n    cfg = _common()\n{body}"
            f'    cfg.mixed_precision = "{preset}"\n    return cfg\n')


def _job(tmp_path: Path, files: dict[str, str]) -> str:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        path = tmp_path / RECIPES / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    script = tmp_path / "examples/run.sh"
    script.parent.mkdir(parents=True)
    script.write_text(f"python scripts/training/run_recipe.py --recipe {NAME}\n")
    return str(script)


def _read(script: str) -> tuple[Any, Any]:
    read = read_paths([script])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read.facts.get("config.megatron_bridge.recipe_preset"), values["intent.fp8"]


def test_python_binds_the_last_definition(tmp_path: Path) -> None:
    script = _job(tmp_path, {"n.py": _recipe("bf16_mixed") + "\n\n" + _recipe(FP8)})
    assert _read(script) == (FP8, True)


@pytest.mark.parametrize("files", [
    {"a_decoy.py": _recipe("bf16_mixed"), "n.py": _recipe(FP8)},     # two modules define it
    {"n.py": f"def {NAME}():\n    cfg = _fp8_common()\n    if False:\n"
             '        cfg.mixed_precision = "bf16_mixed"\n    return cfg\n'},
    {"n.py": f"def {NAME}():\n    cfg = _fp8_common()\n"
             '    cfg.mixed_precision = "bf16_mixed" if DEBUG else cfg.mixed_precision\n'
             "    return cfg\n"},
    {"n.py": f"def {NAME}():\n    cfg = _fp8_common()\n    for _ in ():\n"
             '        cfg.mixed_precision = "bf16_mixed"\n    return cfg\n'},
])
def test_a_decoy_never_makes_the_recipe_bf16(tmp_path: Path, files: dict[str, str]) -> None:
    preset, fp8 = _read(_job(tmp_path, files))
    assert preset is None and fp8 is not False


def test_the_plain_recipe_is_still_read(tmp_path: Path) -> None:
    assert _read(_job(tmp_path, {"n.py": _recipe(FP8)})) == (FP8, True)


def test_the_folder_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mbs, "MAX_DIRS", 50)
    script = _job(tmp_path, {"z/n.py": _recipe(FP8)})
    for i in range(60):
        (tmp_path / RECIPES / "a" / f"d{i}").mkdir(parents=True)
    assert mbs.recipe_preset(script, NAME) is None
