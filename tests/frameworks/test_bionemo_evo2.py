"""BioNeMo's train_evo2 (NVIDIA/bionemo-framework: the Megatron-Bridge trainer of
bionemo-recipes/recipes/evo2_megatron at 7caf18c0 - 3a9d005b, and the NeMo 2 one of
sub-packages/bionemo-evo2 at v2.7.1): ``--mixed-precision-recipe`` names a Megatron-Bridge preset
(holdout25, Megatron-Bridge issue 1707's command), NeMo 2's ``--fp8`` / ``--fp8-recipe``; the
default is BF16; argparse prefixes resolved; hostile lines never give a confident answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ISSUE_1707 = ("torchrun --nproc-per-node 1 --no-python   train_evo2   --hf-tokenizer-model-path "
              "tokenizers/nucleotide_fast_tokenizer_256   --model-size striped_hyena_1b_nv_parallel "
              "--max-steps 110 --seq-length 1024   --tensor-model-parallel 1   "
              "--use-precision-aware-optimizer --mock-data {extra}\n")


def _intent(tmp_path: Path, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "run.sh"
    path.write_text(text)
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, dict(read.facts)


@pytest.mark.parametrize(("extra", "recipe", "params"), [
    ("--mixed-precision-recipe bf16-with-fp8-current-scaling-mixed", "tensorwise", True),
    ("--mixed-precision-recipe bf16_with_fp8_delayed_scaling_mixed", "delayed", True),
    ("--mixed-precision-recipe bf16_with_mxfp8_mixed --no-fp8-param-gather", "mxfp8", False),
    ("--mixed-precision-recipe=nemotron_h_bf16_with_fp8_current_scaling_mixed", "tensorwise",
     True),
])
def test_the_recipe_names_a_megatron_bridge_fp8_preset(tmp_path: Path, extra: str, recipe: str,
                                                       params: bool) -> None:
    intent, facts = _intent(tmp_path, ISSUE_1707.format(extra=extra))
    assert facts["config.kinds"] == ["bionemo_evo2"]
    assert intent["fp8"][0] is True
    assert intent["fp8"][1].endswith("run.sh:1")
    assert intent["backend"][0] == "te"
    assert intent["recipe"][0] == recipe
    assert intent["fp8_params"][0] is params
    assert intent["tp"][0] == 1                  # --tensor-model-parallel: argparse's prefix
    assert intent["num_gpus"][0] == 1
    assert "megatron_bridge" in intent["stack"][0]


@pytest.mark.parametrize("extra", ["", "--mixed-precision-recipe bf16-mixed",
                                   "--mixed-precision-recipe bf16_mixed --no-fp8-wgrad"])
def test_bf16_by_default_and_by_name(tmp_path: Path, extra: str) -> None:
    intent, _ = _intent(tmp_path, ISSUE_1707.format(extra=extra))
    assert intent["fp8"][0] is False
    assert intent["precision"][0] == "bf16"


def test_nemo2_train_evo2_fp8_flag(tmp_path: Path) -> None:
    intent, _ = _intent(tmp_path, "train_evo2 -d cfg.yaml --devices 8 --fp8 --fp8-recipe "
                                  "tensorwise --seq-length 8192\n")
    assert intent["fp8"][0] is True
    assert intent["recipe"][0] == "tensorwise"
    assert intent["format"][0] == "hybrid"
    intent, _ = _intent(tmp_path, "train_evo2 -d cfg.yaml --fp8\n")
    assert intent["recipe"][0] == "delayed"


@pytest.mark.parametrize("extra", [
    "--mixed-precision-recipe $PRECISION",                   # set at launch
    "--mixed-precision-recipe bf16_with_fp8_made_up_mixed",  # no preset: argparse refuses it
    "--fp8 --mixed-precision-recipe bf16_mixed",             # no release takes both
])
def test_hostile_lines_leave_fp8_unknown(tmp_path: Path, extra: str) -> None:
    intent, _ = _intent(tmp_path, ISSUE_1707.format(extra=extra))
    assert isinstance(intent["fp8"][0], Unknown), extra


def test_an_echoed_train_evo2_line_is_no_launch(tmp_path: Path) -> None:
    text = ('echo "train_evo2 --mixed-precision-recipe bf16_with_mxfp8_mixed"\n'
            + ISSUE_1707.format(extra="--mixed-precision-recipe bf16_mixed"))
    intent, _ = _intent(tmp_path, text)
    assert intent["fp8"][0] is False


def test_train_eden_takes_the_same_recipe(tmp_path: Path) -> None:
    intent, facts = _intent(tmp_path, "torchrun --nproc-per-node 8 --no-python train_eden "
                                      "--seq-length 8192 --mixed-precision-recipe "
                                      "bf16_with_fp8_current_scaling_mixed\n")
    assert facts["config.kinds"] == ["bionemo_evo2"]
    assert intent["fp8"][0] is True
    assert intent["num_gpus"][0] == 8


def test_python_m_module_is_read(tmp_path: Path) -> None:
    intent, _ = _intent(tmp_path, "python -m bionemo.evo2.run.train --seq-length 1024 "
                                  "--mixed-precision-recipe bf16_with_mxfp8_mixed\n")
    assert intent["recipe"][0] == "mxfp8"


def test_another_eden_console_script_is_no_launch(tmp_path: Path) -> None:
    # eden's predict / infer scripts take --mixed-precision-recipe too: no training launch
    _, facts = _intent(tmp_path, "predict_eden --mixed-precision-recipe bf16_with_mxfp8_mixed "
                                 "--seq-length 1024\n")
    assert "bionemo_evo2" not in facts.get("config.kinds", [])
