"""Megatron-Core's CUDA-graph settings of Megatron-Bridge and NeMo 2 jobs as ``config.megatron.*``
(preflight/frameworks/mcore_graphs.py): the facts FP8D-TE-0059 / FP8D-MEG-0053 read from a
Megatron-LM launch line, stated for a run_recipe.py launch, the performance launcher and a NeMo 2
recipe script; the job's file keeps its own kind; hostile values stay bounded and Unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.frameworks.mcore_graphs import scopes
from preflight.jobs.read import read_paths

TE16 = {"gpu": "H100", "pkg.transformer-engine": "2.16.0", "pkg.megatron-core": "0.16.0"}
TE17 = {**TE16, "pkg.transformer-engine": "2.17.0"}
RUN = ("torchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe "
       "qwen3_30b_a3b_pretrain_config mixed_precision=bf16_with_fp8_current_scaling_mixed "
       "model.num_moe_experts=128 model.moe_grouped_gemm=true ")
NEMO2 = '''import nemo_run as run
from nemo.collections import llm
from nemo.collections.llm.recipes.precision.mixed_precision import bf16_with_fp8_mixed


def main():
    recipe = llm.qwen3_30b_a3b.pretrain_recipe(num_nodes=1, num_gpus_per_node=8)
    recipe.trainer.plugins = bf16_with_fp8_mixed()
{sets}
    run.run(recipe, executor=run.LocalExecutor())


if __name__ == "__main__":
    main()
'''


def _job(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _fired(path: Path, assume: dict[str, str]) -> set[str]:
    return {f.rule_id for f in preflight.check([str(path)], smoke=False, assume=assume).findings}


def _undetermined(path: Path, assume: dict[str, str]) -> set[str]:
    report = preflight.check([str(path)], smoke=False, assume=assume)
    return {u.rule_id for u in report.undetermined}


def test_run_recipe_overrides_are_megatrons_facts(tmp_path: Path) -> None:
    path = _job(tmp_path, "run.sh", RUN + "model.cuda_graph_impl=transformer_engine "
                "'model.cuda_graph_scope=[attn,moe]'\n")
    read = read_paths([str(path)])
    assert read.facts["config.megatron.cuda_graph_impl"] == "transformer_engine"
    assert read.facts["config.megatron.cuda_graph_scope"] == ["attn", "moe"]
    assert read.facts["config.megatron.moe_grouped_gemm"] is True
    assert read.facts["config.megatron.args_of"] == "megatron_bridge"
    assert read.facts["config.megatron.validated_args"] is False
    assert read.provenance["config.megatron.cuda_graph_scope"].endswith("run.sh:1")
    assert read.facts["config.kinds"] == ["megatron_bridge"]        # Megatron's derive stays off
    assert "FP8D-TE-0059" in _fired(path, TE16)
    assert "FP8D-TE-0059" not in _fired(path, TE17)


def test_run_recipe_scope_without_the_experts_is_quiet(tmp_path: Path) -> None:
    path = _job(tmp_path, "run.sh", RUN + "model.cuda_graph_impl=transformer_engine "
                "model.cuda_graph_scope=attn,moe_router\n")
    read = read_paths([str(path)])
    assert read.facts["config.megatron.cuda_graph_scope"] == ["attn", "moe_router"]
    assert "FP8D-TE-0059" not in _fired(path, TE16)


def test_no_graph_setting_states_no_megatron_fact(tmp_path: Path) -> None:
    path = _job(tmp_path, "run.sh", RUN.replace("model.moe_grouped_gemm=true ", "") + "\n")
    read = read_paths([str(path)])
    assert not any(n.startswith("config.megatron.") for n in read.facts)


def test_performance_launcher_flags(tmp_path: Path) -> None:
    path = _job(tmp_path, "launch.sh", "python scripts/performance/setup_experiment.py -m qwen3 "
                "-mr qwen3_30b_a3b -g h100 -c fp8_cs --cuda_graph_impl transformer_engine "
                "--cuda_graph_scope attn,moe model.cuda_graph_impl=local\n")
    read = read_paths([str(path)])
    # the forwarded model.* override wins over the launcher's own flag
    assert read.facts["config.megatron.cuda_graph_impl"] == "local"
    assert read.facts["config.megatron.cuda_graph_scope"] == ["attn", "moe"]
    # the flat recipe's grouped GEMM is set in Python, not read: TE-0059 stays quiet
    assert "config.megatron.moe_grouped_gemm" not in read.facts


def test_nemo2_recipe_attributes(tmp_path: Path) -> None:
    path = _job(tmp_path, "pretrain.py", NEMO2.format(sets="\n".join(
        f"    {s}" for s in ("recipe.model.config.enable_cuda_graph = True",
                             "recipe.model.config.moe_grouped_gemm = True"))))
    read = read_paths([str(path)])
    assert read.facts["config.megatron.enable_cuda_graph"] is True
    assert read.provenance["config.megatron.enable_cuda_graph"].endswith("pretrain.py:9")
    assert read.facts["config.megatron.args_of"] == "nemo2"
    assert [k for _, k in read.files] == ["nemo2"] and read.facts["config.kinds"] == ["nemo2"]
    # local CUDA graphs with FP8 on TE 2.16 before megatron-core 0.18
    assert "FP8D-MEG-0053" in _fired(path, TE16)
    assert "FP8D-MEG-0053" not in _fired(path, {**TE16, "pkg.megatron-core": "0.18.0"})


def test_nemo2_experts_in_graphs_with_experts_unknown_is_undetermined(tmp_path: Path) -> None:
    path = _job(tmp_path, "pretrain.py", NEMO2.format(sets="\n".join(
        f"    {s}" for s in ('recipe.model.config.cuda_graph_impl = "transformer_engine"',
                             'recipe.model.config.cuda_graph_scope = ["attn", "moe"]',
                             "recipe.model.config.moe_grouped_gemm = True"))))
    assert "FP8D-TE-0059" in _undetermined(path, TE16)      # the recipe's experts: not read


def test_megatron_lm_cuda_graph_modules_is_a_list(tmp_path: Path) -> None:
    path = _job(tmp_path, "train.sh", "torchrun pretrain_gpt.py --fp8-format hybrid "
                "--transformer-impl transformer_engine --num-experts 64 --moe-grouped-gemm "
                "--cuda-graph-impl transformer_engine --cuda-graph-modules moe\n")
    read = read_paths([str(path)])
    assert read.facts["config.megatron.cuda_graph_modules"] == ["moe"]
    assert "FP8D-TE-0059" in _fired(path, {**TE16, "pkg.megatron-core": "0.18.0"})


@pytest.mark.parametrize("value", ["x," * 5000, [["nested"]] * 40, 3.5])
def test_hostile_scopes_are_unknown_or_plain(value: object) -> None:
    got = scopes(value)
    assert isinstance(got, (Unknown, list))
    if isinstance(got, list):
        assert all(isinstance(x, str) for x in got)


def test_hostile_scope_override_is_bounded(tmp_path: Path) -> None:
    path = _job(tmp_path, "run.sh", RUN + "model.cuda_graph_impl=transformer_engine "
                "model.cuda_graph_scope=" + "moe," * 20000 + "\n")
    read = read_paths([str(path)])
    got = read.facts.get("config.megatron.cuda_graph_scope")
    assert got is None or isinstance(got, (Unknown, list))
