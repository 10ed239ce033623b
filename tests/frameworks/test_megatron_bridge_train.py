"""Megatron-Bridge's training launcher (``scripts/training/train.sh`` -> ``setup_experiment.py``
-> ``run_recipe.py --recipe NAME``; fixtures/configs/megatron_bridge_train, v0.6.0 / 067f987d):
train.sh's ``"$@"`` reaches setup_experiment.py, whose own Slurm options are dropped and whose
other words are run_recipe.py's; the recipe's precision comes from the job's own recipe source
(``cfg.mixed_precision = bf16_with_mxfp8_mixed()``) or the release table (holdout12). Hostile:
a recipe that does not exist, a ``$(...)/setup_experiment.py`` that is not the script's own
folder, a setup_experiment.py that forwards nothing, a decoy preset call, a dry run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.frameworks.megatron_bridge_source import recipe_preset
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "megatron_bridge_train"
RECIPE = "qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config"
RECIPE_FILE = Path("src/megatron/bridge/recipes/qwen/gb200/qwen3_moe.py")


def _read(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, body: str | None = None) -> Path:
    job = tmp_path / "job"
    shutil.copytree(FIX, job, dirs_exist_ok=True)
    (job / ".git").mkdir(exist_ok=True)             # a clone: the job root (read boundary)
    if body is not None:
        (job / "launch.sh").write_text("#!/bin/bash\n" + body + "\n")
    return job / "launch.sh"


def test_card_command_is_mxfp8_from_the_jobs_recipe(tmp_path: Path) -> None:
    intent, read = _read(_job(tmp_path))
    assert intent["fp8"][0] is True
    assert intent["recipe"][0] == "mxfp8"
    assert intent["format"][0] == "e4m3"
    assert intent["fp8_params"][0] is True               # bf16_with_mxfp8_mixed @ v0.6.0
    assert intent["stack"][0] == ["megatron_bridge", "megatron"]
    assert str(RECIPE_FILE) + ":39" in intent["fp8"][1]  # cfg.mixed_precision = ...() line
    assert intent["seq_len"][0] == 4096
    facts = read.facts
    assert facts["config.megatron_bridge.recipe"] == RECIPE
    assert facts["config.megatron_bridge.launcher.nodes"] == 2
    assert facts["config.megatron_bridge.launcher.gpus_per_node"] == 4
    assert facts["config.megatron_bridge.model.moe_router_force_load_balancing"] is False
    # the launcher's own options are not run_recipe.py's
    assert not any(k.startswith("config.megatron_bridge.nodes") for k in facts)


def test_setup_experiment_run_directly(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, "uv run python scripts/training/setup_experiment.py "
                                     f"--account acct --partition batch --recipe {RECIPE}"))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"


def test_override_after_the_recipe_wins(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, f"./scripts/training/train.sh --recipe {RECIPE} "
                                     "mixed_precision=bf16_mixed"))
    assert intent["fp8"][0] is False


def test_recipe_that_does_not_exist_is_unknown(tmp_path: Path) -> None:
    intent, read = _read(_job(tmp_path, "./scripts/training/train.sh --recipe no_such_config"))
    assert read.facts["config.megatron_bridge.recipe"] == "no_such_config"
    assert isinstance(intent["fp8"][0], Unknown)


def test_table_decides_a_recipe_the_job_does_not_hold(tmp_path: Path) -> None:
    path = _job(tmp_path)
    shutil.rmtree(path.parent / "src")
    intent, _ = _read(path)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert "v0.6.0" in intent["fp8"][1]                  # the release table's


def test_bad_node_count_is_unknown(tmp_path: Path) -> None:
    _, read = _read(_job(tmp_path, f"./scripts/training/train.sh --nodes two --recipe {RECIPE}"))
    assert isinstance(read.facts["config.megatron_bridge.launcher.nodes"], Unknown)


def test_dry_run_is_a_warning(tmp_path: Path) -> None:
    _, read = _read(_job(tmp_path, f"./scripts/training/train.sh --dry-run --recipe {RECIPE}"))
    hits = [p for p in read.problems if "--dry-run" in p.message]
    assert hits and hits[0].level == "warning"


def test_substituted_folder_not_the_scripts_own_is_not_the_launcher(tmp_path: Path) -> None:
    path = _job(tmp_path)
    train = path.parent / "scripts" / "training" / "train.sh"
    train.write_text(train.read_text().replace('"${SCRIPT_DIR}/setup_experiment.py"',
                                               '"$(find_tool)/setup_experiment.py"'))
    intent, read = _read(path)
    assert "config.megatron_bridge.recipe" not in read.facts
    assert intent["fp8"][0] is not True


def test_setup_experiment_that_forwards_nothing_is_not_the_launcher(tmp_path: Path) -> None:
    path = _job(tmp_path)
    (path.parent / "scripts" / "training" / "setup_experiment.py").write_text(
        "import argparse\nargparse.ArgumentParser().parse_args()\n")
    _, read = _read(path)
    assert "config.megatron_bridge.recipe" not in read.facts


def test_preset_call_forms(tmp_path: Path) -> None:
    def preset(body: str) -> Any:
        folder = tmp_path / body.__hash__().__str__()
        recipes = folder / "src" / "megatron" / "bridge" / "recipes"
        recipes.mkdir(parents=True)
        (recipes / "r.py").write_text(
            "from megatron.bridge.training import mixed_precision as mp\n"
            "from megatron.bridge.training.mixed_precision import bf16_with_mxfp8_mixed\n"
            f"def r_config():\n    cfg = base()\n{body}    return cfg\n")
        (folder / "run.sh").write_text("")
        got = recipe_preset(str(folder / "run.sh"), "r_config")
        return got and got[0]
    assert preset("    cfg.mixed_precision = bf16_with_mxfp8_mixed()\n") == "bf16_with_mxfp8_mixed"
    assert preset("    cfg.mixed_precision = mp.bf16_with_fp8_current_scaling_mixed()\n") == \
        "bf16_with_fp8_current_scaling_mixed"
    # a decoy preset whose result is not the recipe's precision
    assert preset("    x = bf16_with_mxfp8_mixed()\n    cfg.mixed_precision = 'bf16_mixed'\n") == \
        "bf16_mixed"
    assert preset("    x = bf16_with_mxfp8_mixed()\n") is None
    # under a condition, or with arguments (no preset function takes any): not decided here
    assert preset("    if fast:\n        cfg.mixed_precision = bf16_with_mxfp8_mixed()\n") is None
    assert preset("    cfg.mixed_precision = bf16_with_mxfp8_mixed(1)\n") is None
    assert preset("    cfg.mixed_precision = bf16_with_mxfp8_mixed()\n"
                  "    cfg.mixed_precision = 'bf16_mixed'\n") is None
