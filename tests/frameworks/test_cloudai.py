"""NVIDIA cloudai test TOMLs (cloudai v1.3.0 format; holdout23's two NeMoRun jobs, reduced): a
NeMoRun test's cmd_args become NeMo 2 facts (FP8 hybrid delayed with fp8_params through the
library recipe llama3_70b or a cloudai_*_recipe factory of the job's cloudai_nemorun.py), a
design-space list of one point is that value and of more an Unknown naming the points, a scenario
links its tests, another template leaves FP8 Unknown; hostile files give findings, never a
traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

TEST = """name = "dse_nemo_run_llama3_70b_fp8"
test_template_name = "{template}"

[cmd_args]
docker_image_url = "nvcr.io/nvidia/nemo:25.04.rc2"
task = "pretrain"
recipe_name = "{recipe}"

  [cmd_args.trainer]
  max_steps = 100
  num_nodes = 8

    [cmd_args.trainer.strategy]
    tensor_model_parallel_size = {tp}
    pipeline_model_parallel_size = [8]

    [cmd_args.trainer.plugins]
{plugins}
"""
FP8 = '    fp8 = "hybrid"\n    fp8_params = true\n'
FACTORY = """import os
import nemo_run as run
from nemo.collections import llm
from nemo import lightning as nl


@run.cli.factory(target=llm.pretrain)
def cloudai_llama3_405b_recipe() -> run.Partial:
    recipe = run.Partial(
        llm.pretrain,
        trainer=run.Config(
            nl.Trainer,
            devices=8,
            plugins=run.Config(nl.MegatronMixedPrecision, precision="bf16-mixed"),
            strategy=run.Config(nl.MegatronStrategy, tensor_model_parallel_size=8),
        ),
        optim=run.Config(
            nl.MegatronOptimizerModule,
            config=run.Config(OptimizerConfig, use_precision_aware_optimizer={pao}),
        ),
    )
    recipe.model.config.seq_length = 8192
    if os.getenv("CLOUDAI_GPU_DTYPE") == "fp8":
        recipe.model.config.recompute_granularity = "full"
    return recipe
"""
SCENARIO = """name = "s"

[[Tests]]
id = "t1"
test_name = "{name}"
num_nodes = "1"
"""


def _test(tmp_path: Path, template: str = "NeMoRun", recipe: str = "llama3_70b",
          tp: str = "[4]", plugins: str = FP8, factory: str | None = None) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "conf/common/test/dse.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEST.format(template=template, recipe=recipe, tp=tp, plugins=plugins))
    if factory is not None:
        src = tmp_path / "src/cloudai/workloads/nemo_run/cloudai_nemorun.py"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(factory)
    return path


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_library_recipe_fp8_hybrid_delayed_fp8_params(tmp_path: Path) -> None:
    intent, read = _intent(_test(tmp_path))
    assert intent["fp8"] == (True, f"{tmp_path / 'conf/common/test/dse.toml'}:18")
    assert intent["format"][0] == "hybrid"
    assert intent["recipe"][0] == "delayed"
    assert intent["fp8_params"][0] is True
    assert intent["precision"][0] == "bf16"          # llama3_70b's bf16_mixed()
    assert intent["tp"][0] == 4                       # a list of one point
    assert intent["cp"][0] == 2                       # cloudai's TrainerStrategy default
    assert "megatron" in intent["stack"][0] and "nemo2" in intent["stack"][0]
    assert read.facts["config.nemo2.strategy.pipeline_model_parallel_size"] == 8


def test_no_plugins_no_fp8(tmp_path: Path) -> None:
    intent, _ = _intent(_test(tmp_path, plugins=""))
    assert intent["fp8"][0] is False


def test_sweep_of_two_points_is_unknown_naming_them(tmp_path: Path) -> None:
    intent, read = _intent(_test(tmp_path, plugins='    fp8 = ["hybrid", "e4m3"]\n'))
    assert isinstance(intent["fp8"][0], Unknown)
    assert "'hybrid'" in intent["fp8"][0].reason and "'e4m3'" in intent["fp8"][0].reason
    _, read = _intent(_test(tmp_path, tp="[2, 4]"))
    assert isinstance(read.facts["config.nemo2.strategy.tensor_model_parallel_size"], Unknown)


def test_cloudai_factory_read_from_the_job(tmp_path: Path) -> None:
    intent, read = _intent(_test(tmp_path, recipe="cloudai_llama3_405b_recipe",
                                 factory=FACTORY.format(pao="True")))
    assert intent["fp8"][0] is True and intent["fp8_params"][0] is True
    assert intent["precision"][0] == "bf16"
    assert intent["tp"][0] == 4                       # the test's override beats the factory's 8
    assert read.facts["config.nemo2.optim.config.use_precision_aware_optimizer"] is True
    assert read.provenance["config.nemo2.optim.config.use_precision_aware_optimizer"].endswith(
        "cloudai_nemorun.py:19")
    assert read.facts["config.nemo2.model.config.seq_length"] == 8192
    assert isinstance(read.facts["config.nemo2.model.config.recompute_granularity"], Unknown)


def test_cloudai_factory_not_in_the_job_leaves_fp8_unknown(tmp_path: Path) -> None:
    intent, read = _intent(_test(tmp_path, recipe="cloudai_llama3_405b_recipe", plugins=""))
    assert isinstance(intent["fp8"][0], Unknown)
    intent, _ = _intent(_test(tmp_path, recipe="cloudai_nope_recipe", plugins="",
                              factory=FACTORY.format(pao="True")))
    assert isinstance(intent["fp8"][0], Unknown)


def test_other_template_is_unknown(tmp_path: Path) -> None:
    intent, read = _intent(_test(tmp_path, template="NcclTest"))
    assert isinstance(intent["fp8"][0], Unknown)
    assert not any(k.startswith("config.nemo2.") for k in read.facts)


def test_scenario_links_its_test(tmp_path: Path) -> None:
    _test(tmp_path)
    (tmp_path / "conf/common/test/dse.toml").rename(tmp_path / "conf/common/test/t.toml")
    scenario = tmp_path / "conf/common/test_scenario/s.toml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(SCENARIO.format(name="t"))
    intent, _ = _intent(scenario)
    assert intent["fp8"][0] is True
    scenario.write_text(SCENARIO.format(name="missing"))
    intent, read = _intent(scenario)
    assert isinstance(intent["fp8"][0], Unknown)
    assert any(p.code == "reference" for p in read.problems)


def test_hostile_factories_decide_nothing(tmp_path: Path) -> None:
    for bad in ("def cloudai_llama3_405b_recipe(:\n", "\x00\xff" * 3000,
                "def cloudai_llama3_405b_recipe():\n    x = " + "(" * 5000 + "1" + ")" * 5000,
                "def cloudai_llama3_405b_recipe():\n" + "    a.b = 1\n" * 30000):
        intent, _ = _intent(_test(tmp_path, recipe="cloudai_llama3_405b_recipe", plugins="",
                                  factory=bad))
        assert isinstance(intent["fp8"][0], Unknown)


def test_hostile_test_toml_gives_a_finding(tmp_path: Path) -> None:
    path = _test(tmp_path)
    path.write_text('test_template_name = "NeMoRun"\n[cmd_args\nrecipe_name = 1\n')
    _, read = _intent(path)
    assert read.problems and not any(k.startswith("config.nemo2.") for k in read.facts)
    path.write_text('test_template_name = "NeMoRun"\n[cmd_args]\nrecipe_name = 7\n'
                    "[cmd_args.trainer.plugins]\nfp8 = [[1], {a = 2}]\n")
    intent, _ = _intent(path)
    assert isinstance(intent["fp8"][0], Unknown)


SCENARIO_ARGS = """name = "s"

[[Tests]]
id = "t1"
test_name = "t"
num_nodes = "1"

  [Tests.cmd_args]
  recipe_name = "llama3_8b"

    [Tests.cmd_args.trainer.strategy]
    tensor_model_parallel_size = 2

    [Tests.cmd_args.trainer.plugins]
    fp8 = "{fp8}"
{second}"""
SECOND = """
[[Tests]]
id = "t2"
test_name = "t"

  [Tests.cmd_args.trainer.plugins]
  fp8 = "{fp8}"
"""


def _scenario(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    _test(tmp_path)
    (tmp_path / "conf/common/test/dse.toml").rename(tmp_path / "conf/common/test/t.toml")
    scenario = tmp_path / "conf/common/test_scenario/s.toml"
    scenario.parent.mkdir(parents=True, exist_ok=True)
    scenario.write_text(text)
    return scenario


def test_scenario_cmd_args_win_over_the_tests(tmp_path: Path) -> None:
    # cloudai v1.3.0 deep-merges a [[Tests]] entry's cmd_args over its test's: the entry's
    # leaves win (fp8, tp, recipe), the test's other leaves stay (fp8_params, pp)
    scenario = _scenario(tmp_path, SCENARIO_ARGS.format(fp8="e4m3", second=""))
    intent, read = _intent(scenario)
    assert intent["fp8"][0] is True and intent["format"][0] == "e4m3"
    assert intent["fp8"][1] == f"{scenario}:15"
    assert intent["tp"][0] == 2
    assert read.facts["config.nemo2.recipe"] == "llama3_8b"
    assert intent["fp8_params"][0] is True                       # the test's, not overridden
    assert read.facts["config.nemo2.strategy.pipeline_model_parallel_size"] == 8


def test_scenario_turning_fp8_off(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, SCENARIO_ARGS.format(fp8="", second="").replace(
        '    fp8 = ""\n', "    fp8_params = false\n"))
    intent, read = _intent(scenario)
    assert read.facts["config.nemo2.plugins.fp8_params"] is False
    assert intent["fp8"][0] is True                             # the test's hybrid stays


def test_scenario_runs_that_differ_are_unknown(tmp_path: Path) -> None:
    # two runs of one test: one overrides fp8 to e4m3, the other to hybrid -> each run is its own
    text = SCENARIO_ARGS.format(fp8="e4m3", second=SECOND.format(fp8="hybrid"))
    intent, read = _intent(_scenario(tmp_path, text))
    assert isinstance(read.facts["config.nemo2.plugins.fp8"], Unknown)
    assert str(read.provenance["config.nemo2.plugins.fp8"]).endswith("s.toml:15")
    # the second run names the same value: decided; its line is its own block's
    text = SCENARIO_ARGS.format(fp8="e4m3", second=SECOND.format(fp8="e4m3"))
    _, read = _intent(_scenario(tmp_path / "b", text))
    assert read.facts["config.nemo2.plugins.fp8"] == "e4m3"
    # a run of the same test that does not override the leaf keeps the test's: Unknown
    text = SCENARIO_ARGS.format(fp8="e4m3", second='\n[[Tests]]\nid = "t3"\ntest_name = "t"\n')
    _, read = _intent(_scenario(tmp_path / "c", text))
    assert isinstance(read.facts["config.nemo2.plugins.fp8"], Unknown)


def test_hostile_scenario_cmd_args_are_bounded(tmp_path: Path) -> None:
    deep = "[Tests.cmd_args." + ".".join(f"k{i}" for i in range(60)) + "]\nx = 1\n"
    wide = "[Tests.cmd_args.trainer]\n" + "".join(f"a{i} = {i}\n" for i in range(3000))
    for extra in (deep, wide, '[Tests.cmd_args]\nrecipe_name = [1, {a = 2}]\n'):
        text = 'name = "s"\n[[Tests]]\nid = "t1"\ntest_name = "t"\n' + extra
        intent, read = _intent(_scenario(tmp_path / str(len(extra)), text))
        assert intent["fp8"][0] is True                     # the test's hybrid, still read
    assert isinstance(read.facts.get("config.nemo2.recipe"), str)   # the test's, not [1, {..}]
    too_deep = "[Tests.cmd_args." + ".".join(f"k{i}" for i in range(300)) + "]\nx = 1\n"
    _, read = _intent(_scenario(tmp_path / "deep", 'name = "s"\n[[Tests]]\nid = "t1"\n'
                                'test_name = "t"\n' + too_deep))
    assert read.problems                                    # refused with a finding
