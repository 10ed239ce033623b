"""Megatron-Bridge scripts that call an imported recipe function (frameworks/megatron_bridge_py.py):
the shape of examples/quantization/pretrain_quantized_llama3_8b.py at NVIDIA-NeMo/Megatron-Bridge
067f987d (lines 75, 99-121, 150-195; held-out set 6), reduced: the recipe resolved through its
``as`` alias to the one the recipe table knows (v0.6.0 51885cf1), the script's edits on ``cfg``,
and the ``key=value`` words of the torchrun line that runs it, which win."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_SCRIPT = """\
import argparse
from megatron.bridge.recipes.llama import {recipe} as pretrain_config
from megatron.bridge.training.mixed_precision import bf16_with_mxfp8_mixed
from megatron.bridge.training.pretrain import pretrain
from megatron.bridge.training.utils.omegaconf_utils import apply_overrides, parse_hydra_overrides
from omegaconf import OmegaConf


def parse_cli_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", type=str, default=None)
    parser.add_argument("--hf-path", type=str, default=None)
    parser.add_argument("--debug", action="store_true")
    args, cli_dotlist_overrides = parser.parse_known_args()
    return args, cli_dotlist_overrides


def main() -> None:
    args, cli_overrides = parse_cli_args()
    cfg = pretrain_config()
{edits}
    merged = OmegaConf.structured(cfg)
    if cli_overrides:
        merged = parse_hydra_overrides(merged, cli_overrides)
    apply_overrides(cfg, OmegaConf.to_container(merged, resolve=True), set())
    pretrain(config=cfg)


if __name__ == "__main__":
    main()
"""
_RUN = "torchrun --nproc_per_node=8 examples/quantization/pretrain.py \\\n" \
       "    --hf-path meta-llama/Meta-Llama-3-8B \\\n    model.tensor_model_parallel_size=4 {more}\n"


def _intent(tmp_path: Path, recipe: str = "llama3_8b_pretrain_config", edits: str = "",
            more: str = "") -> dict[str, Any]:
    folder = tmp_path / "examples" / "quantization"
    folder.mkdir(parents=True)
    (folder / "pretrain.py").write_text(_SCRIPT.format(recipe=recipe, edits=edits or "    pass"))
    (tmp_path / "run.sh").write_text(_RUN.format(more=more))
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert ("run.sh" in read.files[0][0]) and read.files[0][1] == "megatron_bridge"
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()} | {
        k: v for k, v in read.facts.items() if k.startswith("config.")}


def test_the_aliased_library_recipe_is_bf16(tmp_path: Path) -> None:
    intent = _intent(tmp_path)
    assert intent["config.megatron_bridge.recipe"] == "llama3_8b_pretrain_config"
    assert intent["fp8"] is False and intent["precision"] == "bf16"
    assert intent["tp"] == 4                      # the torchrun line's override


def test_an_fp8_recipe_by_its_alias(tmp_path: Path) -> None:
    intent = _intent(tmp_path, "llama3_8b_pretrain_2gpu_h100_fp8mx_config")
    assert intent["fp8"] is True and intent["recipe"] == "mxfp8"


@pytest.mark.parametrize("edit", ['    cfg.mixed_precision = "bf16_with_mxfp8_mixed"',
                                  "    cfg.mixed_precision = bf16_with_mxfp8_mixed()"])
def test_the_scripts_edit_on_cfg(tmp_path: Path, edit: str) -> None:
    intent = _intent(tmp_path, edits=edit)
    assert intent["fp8"] is True and intent["recipe"] == "mxfp8"


def test_the_launch_lines_override_wins_over_the_script(tmp_path: Path) -> None:
    intent = _intent(tmp_path, edits='    cfg.mixed_precision = "bf16_with_mxfp8_mixed"',
                     more="mixed_precision=bf16_mixed")
    assert intent["fp8"] is False


def test_a_recipe_chosen_by_an_undecided_condition_is_unknown(tmp_path: Path) -> None:
    edits = ("    import os\n    if os.environ.get('FP8'):\n"
             "        cfg = pretrain_config_fp8()\n")
    script = _SCRIPT.replace("from omegaconf", "from megatron.bridge.recipes.llama import "
                             "llama3_8b_pretrain_2gpu_h100_fp8mx_config as pretrain_config_fp8\n"
                             "from omegaconf")
    folder = tmp_path / "examples" / "quantization"
    folder.mkdir(parents=True)
    (folder / "pretrain.py").write_text(script.format(recipe="llama3_8b_pretrain_config",
                                                      edits=edits))
    # FP8 given a value only the run knows (an unset FP8 now takes the lookup's default:
    # reading/pyenviron.py)
    (tmp_path / "run.sh").write_text("FP8=$1 " + _RUN.format(more=""))
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
