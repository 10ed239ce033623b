"""NeMo 2 read from its scripts and launch lines (fixtures/configs/nemo2, README cites NVIDIA/NeMo
8cfedd72): precision plugins and factories, the performance scripts' -c/-fr, TEConfig, the
nemo llm CLI; Unknown where the text cannot decide; FP8D-MEG-0011 reaches it through
intent.stack."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "nemo2"
B200 = {"gpu": "B200", "pkg.megatron-core": "0.14.0", "pkg.transformer-engine": "2.7.0"}
H100 = {"gpu": "H100", "pkg.transformer-engine": "2.7.0", "pkg.lightning": "2.5.5"}
PERF = "python -m scripts.performance.llm.pretrain_llama3_8b --account a --partition p -g b200 "


def _intent(*paths: Path) -> dict[str, Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}


def _fired(path: Path, assume: dict[str, str]) -> set[str]:
    return {f.rule_id for f in preflight.check([str(path)], smoke=False, assume=assume).findings}


def _perf(tmp_path: Path, flags: str) -> Path:
    job = tmp_path / "perf"
    shutil.copytree(FIX / "perf", job)
    (job / "run.sh").write_text("#!/bin/bash\n" + PERF + flags + "\n")
    return job / "run.sh"


def test_perf_script_mxfp8_from_the_launch_line() -> None:
    intent = _intent(FIX / "perf" / "run.sh")
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "te"
    assert intent["recipe"][0] == "mxfp8"
    assert intent["format"][0] == "hybrid"          # bf16_with_mxfp8_mixed() @ 8cfedd72
    assert intent["fp8_params"][0] is True
    assert intent["precision"][0] == "bf16"
    assert intent["distributed"][0] == "megatron"
    assert intent["stack"][0] == ["nemo2", "megatron"]
    where = intent["recipe"][1]
    assert "pretrain_llama3_8b.py:29" in where and "bf16_with_mxfp8_mixed" in where


def test_perf_mxfp8_hybrid_fires_meg_0011_and_e4m3_does_not(tmp_path: Path) -> None:
    assert "FP8D-MEG-0011" in _fired(FIX / "perf" / "run.sh", B200)
    assert "FP8D-MEG-0011" not in _fired(_perf(tmp_path, "-c fp8 -fr cs"), B200)


@pytest.mark.parametrize(("flags", "fp8", "recipe"), [
    ("-c fp8 -fr cs", True, "tensorwise"),
    ("-c fp8 -fr ss", True, "blockwise"),
    ("-c fp8", True, "delayed"),                     # -fr default ds
    ("--compute_dtype fp8 --fp8_recipe mxfp8", True, "mxfp8"),
    ("-c bf16 -fr mxfp8", False, None),              # the recipe's bf16_mixed() stays
    ("", False, None),                               # -c default bf16
])
def test_perf_options(tmp_path: Path, flags: str, fp8: bool, recipe: str | None) -> None:
    intent = _intent(_perf(tmp_path, flags))
    assert intent["fp8"][0] is fp8
    if recipe is not None:
        assert intent["recipe"][0] == recipe
    else:
        assert "llama3_8b" in intent["fp8"][1]       # decided by the recipe's plugin


@pytest.mark.parametrize(("flags", "why"), [
    ("-c fp8 -fr $RECIPE", "-fr $RECIPE"),           # set where the launch script runs
    ("-c fp8 -fr xx", "choices"),                    # argparse refuses the command line
    ("-c $DTYPE", "-c $DTYPE"),
])
def test_perf_options_the_text_cannot_decide(tmp_path: Path, flags: str, why: str) -> None:
    fp8, where = _intent(_perf(tmp_path, flags))["fp8"]
    assert isinstance(fp8, Unknown) and why in fp8.reason
    assert "pretrain_llama3_8b.py:2" in where        # the set_primary_perf_configs keyword


def test_perf_factory_is_the_jobs_helpers(tmp_path: Path) -> None:
    run = _perf(tmp_path, "-c fp8 -fr mxfp8")
    assert "helpers.py:47" in _intent(run)["recipe"][1]   # plugins = bf16_with_mxfp8_mixed()
    helpers = run.parent / "scripts" / "performance" / "helpers.py"
    text = helpers.read_text()
    # a job whose helper picks another factory for mxfp8 is read as that one
    helpers.write_text(text.replace("plugins = bf16_with_mxfp8_mixed()",
                                    "plugins = bf16_with_fp8_subchannel_scaling_mixed()"))
    assert _intent(run)["recipe"][0] == "blockwise"
    # a code the job's helper sets no plugin for (NeMo's table is not used in its place)
    helpers.write_text(text.replace('fp8_recipe.lower() == "mxfp8"', 'fp8_recipe.lower() == "mx"'))
    fp8 = _intent(run)["fp8"][0]
    assert isinstance(fp8, Unknown) and "'mxfp8'" in fp8.reason


def test_helper_modules_alone_are_undetermined() -> None:
    for name in ("helpers.py", "argument_parser.py"):
        read = read_paths([str(FIX / "perf" / "scripts" / "performance" / name)], None)
        assert [k for _, k in read.files] == ["nemo2"]
        fp8 = _intent(FIX / "perf" / "scripts" / "performance" / name)["fp8"][0]
        assert isinstance(fp8, Unknown) and "-c/-fr" in fp8.reason


@pytest.mark.parametrize("how", ["symlink out of the job", "not UTF-8", "not Python"])
def test_hostile_argument_parser(tmp_path: Path, how: str) -> None:
    run = _perf(tmp_path / "job", "-c fp8 -fr mxfp8")
    parser = run.parent / "scripts" / "performance" / "argument_parser.py"
    text = parser.read_text()
    parser.unlink()
    if how == "symlink out of the job":
        outside = tmp_path / "outside.py"
        outside.write_text(text)
        parser.symlink_to(outside)
    elif how == "not UTF-8":
        parser.write_bytes(b"def parse_cli_args():\n    x = '\xff\xfe'\n")
    else:
        parser.write_text("def parse_cli_args(:\n")
    fp8 = _intent(run)["fp8"][0]
    assert isinstance(fp8, Unknown) and "argument_parser.py" in fp8.reason


def test_same_names_without_nemo_are_not_nemo2(tmp_path: Path) -> None:
    # Megatron-Bridge's performance scripts have an argument_parser.parse_cli_args too
    src = FIX / "perf" / "scripts" / "performance" / "argument_parser.py"
    other = tmp_path / "argument_parser.py"
    other.write_text(src.read_text().replace("from nemo_run.config import get_nemorun_home\n", ""))
    read = read_paths([str(other)], None)
    assert "nemo2" not in [k for _, k in read.files]


def test_perf_without_its_argument_parser_is_undetermined(tmp_path: Path) -> None:
    run = _perf(tmp_path, "-c fp8 -fr mxfp8")
    (run.parent / "scripts" / "performance" / "argument_parser.py").unlink()
    fp8 = _intent(run)["fp8"][0]
    assert isinstance(fp8, Unknown) and "argument_parser.py" in fp8.reason


def test_megatron_strategy_and_plugin_without_fp8() -> None:
    intent = _intent(FIX / "gpt_train" / "train.sh")
    assert intent["fp8"][0] is False
    assert intent["precision"][0] == "bf16"          # --precision default bf16-mixed
    assert intent["tp"][0] == 2 and intent["cp"][0] == 2
    assert intent["sequence_parallel"][0] is True   # (args.tp_size > 1)
    assert intent["num_gpus"][0] == 8
    assert intent["stack"][0] == ["nemo2", "megatron"]
    assert "gpt_train.py" in intent["tp"][1]


def test_automodel_te_fp8_autocast(tmp_path: Path) -> None:
    intent = _intent(FIX / "automodel" / "run.sh")
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "te"
    # apply_fp8_autocast builds DelayedScaling() (transformer_engine.py l.116 @ 8cfedd72)
    assert intent["recipe"][0] == "delayed" and intent["format"][0] == "hybrid"
    assert intent["distributed"][0] == "fsdp2"      # make_strategy('fsdp2') inlined
    assert intent["precision"][0] == "bf16"
    assert intent["stack"][0] == ["nemo2"]          # no Megatron under the HF AutoModel
    assert intent["fp8"][1].endswith("automodel.py:77")
    fired = _fired(FIX / "automodel" / "run.sh", H100)
    assert not fired & {"FP8D-PL-0001", "FP8D-PL-0005", "FP8D-MEG-0011"}


def test_automodel_without_fp8_flag_and_without_launch_line(tmp_path: Path) -> None:
    shutil.copytree(FIX / "automodel", tmp_path / "job")
    run = tmp_path / "job" / "run.sh"
    run.write_text(run.read_text().replace("  --fp8\n", "  --devices 8\n"))
    intent = _intent(run)
    assert intent["fp8"][0] is False
    # automodel.py named alone is read as `python automodel.py` (session 44, pyfix9): --fp8's
    # default (off) decides, with the FP8D-CFG-RUNTIME-ARGS note; found in a folder, Unknown.
    assert _intent(tmp_path / "job" / "automodel.py")["fp8"][0] is False
    (tmp_path / "job" / "run.sh").unlink()
    alone = _intent(tmp_path / "job")["fp8"][0]
    assert isinstance(alone, Unknown) and "--fp8" in alone.reason


RECIPE = """import nemo_run as run
from nemo.collections import llm
from nemo.collections.llm.recipes.precision.mixed_precision import {factory}


def configure_recipe(nodes: int = 1, gpus_per_node: int = 8):
    recipe = llm.llama3_8b.pretrain_recipe(dir="/checkpoints", name="llama3", num_nodes=nodes)
{sets}
    return recipe


if __name__ == "__main__":
    run.run(configure_recipe(), executor=run.LocalExecutor(ntasks_per_node=8))
"""


def _recipe(tmp_path: Path, factory: str, *sets: str) -> Path:
    path = tmp_path / "pretrain.py"
    path.write_text(RECIPE.format(factory=factory, sets="\n".join(f"    {s}" for s in sets)))
    return path


def test_recipe_with_factory_and_attributes(tmp_path: Path) -> None:
    path = _recipe(tmp_path, "bf16_with_fp8_current_scaling_mixed",
                   "recipe.trainer.plugins = bf16_with_fp8_current_scaling_mixed()",
                   "recipe.trainer.strategy.tensor_model_parallel_size = 4",
                   'recipe.model.config.recompute_granularity = "full"')
    intent = _intent(path)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "tensorwise"
    assert intent["tp"][0] == 4
    assert intent["activation_checkpointing"][0] is True
    assert intent["recompute_granularity"][0] == "full"
    assert intent["recipe"][1].endswith("pretrain.py:8")


def test_field_set_on_the_factory_wins(tmp_path: Path) -> None:
    path = _recipe(tmp_path, "bf16_with_mxfp8_mixed",
                   "recipe.trainer.plugins = bf16_with_mxfp8_mixed()",
                   'recipe.trainer.plugins.fp8 = "e4m3"')
    intent = _intent(path)
    assert intent["recipe"][0] == "mxfp8" and intent["format"][0] == "e4m3"
    assert "FP8D-MEG-0011" not in _fired(path, B200)


def test_recipe_plugin_left_as_the_library_sets_it(tmp_path: Path) -> None:
    intent = _intent(_recipe(tmp_path, "bf16_mixed", "recipe.trainer.max_steps = 10"))
    assert intent["fp8"][0] is False                 # llama3_8b: plugins=bf16_mixed()
    other = _recipe(tmp_path, "bf16_mixed", "recipe.trainer.max_steps = 10")
    other.write_text(other.read_text().replace("llama3_8b", "nemotronh_56b"))
    fp8 = _intent(other)["fp8"][0]
    assert isinstance(fp8, Unknown) and "nemotronh_56b" in fp8.reason


def test_plugin_the_text_does_not_give(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text("from nemo import lightning as nl\n\n\n"
                    "def main(plugin):\n"
                    "    trainer = nl.Trainer(devices=8, strategy=nl.MegatronStrategy(), "
                    "plugins=plugin)\n")
    fp8 = _intent(path)["fp8"][0]
    assert isinstance(fp8, Unknown) and "plugin" in fp8.reason


def test_megatron_mixed_precision_fields(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text("from nemo import lightning as nl\n\n"
                    "trainer = nl.Trainer(\n    devices=8,\n    strategy=nl.MegatronStrategy("
                    "tensor_model_parallel_size=2),\n    plugins=nl.MegatronMixedPrecision(\n"
                    '        precision="bf16-mixed", fp8="hybrid", fp8_recipe="blockwise"),\n)\n')
    intent = _intent(path)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"
    assert intent["fp8_params"][0] is False          # fp8_param_gather default
    assert intent["fp8"][1].endswith("train.py:7")


def test_nemo_llm_cli(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nnemo llm pretrain --factory llama3_8b \\\n"
                   "  trainer.plugins.fp8=hybrid trainer.plugins.fp8_recipe=mxfp8 \\\n"
                   "  trainer.strategy.tensor_model_parallel_size=2 -y\n")
    intent = _intent(run)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert intent["fp8"][1].endswith("run.sh:3")
    assert intent["tp"][0] == 2
    assert intent["fp8_params"][0] is False   # llama3_8b's bf16_mixed(): the plugin's default
    run.write_text(run.read_text().replace("llama3_8b", "nemotronh_56b"))
    intent = _intent(run)
    assert intent["fp8"][0] is True
    assert isinstance(intent["fp8_params"][0], Unknown)   # that recipe's plugin decides it
    run.write_text("#!/bin/bash\nnemo llm pretrain --factory llama3_8b -y\n")
    assert _intent(run)["fp8"][0] is False
