"""torchtitan config registries recognised by what their functions build, not by a
``-> Trainer.Config`` annotation: torchtitan's ConfigManager calls ``NAME()`` and takes the type of
what it returns (torchtitan/config/manager.py l.34-46, l.143-160 at b5bcd76c); what the text does
not show is Unknown with the reason, never FP8 "no"."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "torchtitan"
PLAIN = FIXTURES / "python_unannotated/torchtitan/models/llama3/config_registry.py"
GRAPH = FIXTURES / "python_graph_trainer/torchtitan/experiments/graph_trainer/llama3/config_registry.py"


def _intent(path: str) -> tuple[Any, dict[str, Any]]:
    read = read_paths([path])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_an_unannotated_registry_is_read_by_what_its_functions_return() -> None:
    read, mx = _intent(f"{PLAIN}::llama3_8b_mxfp8")
    assert [k for _, k in read.files] == ["torchtitan"] and read.problems == []
    assert mx["intent.fp8"] is True and mx["intent.recipe"] == "mxfp8"
    _, big = _intent(f"{PLAIN}::llama3_405b")
    assert big["intent.fp8"] is True and big["intent.recipe"] == "rowwise"
    assert big["intent.tp"] == 8
    _, plain = _intent(f"{PLAIN}::llama3_8b")
    assert plain["intent.fp8"] is False


def test_helpers_and_undecided_returns_are_not_configs_of_the_registry() -> None:
    read, whole = _intent(str(PLAIN))
    listed = read.facts["config.torchtitan.job.config_function"]
    assert isinstance(listed, Unknown) and "defines 3 configs" in listed.reason
    assert "with_steps" not in listed.reason and "maybe" not in listed.reason
    assert isinstance(whole["intent.fp8"], Unknown)


def test_a_named_function_whose_return_a_condition_decides_leaves_fp8_unknown() -> None:
    read, values = _intent(f"{PLAIN}::llama3_8b_maybe_fp8")
    assert read.facts["config.torchtitan.job.config_function"] == "llama3_8b_maybe_fp8"
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown) and "llama3_8b_maybe_fp8()" in base.reason
    assert read.provenance["config.torchtitan.base_config"].line == 146
    assert isinstance(values["intent.fp8"], Unknown)


def test_graph_trainer_configs_read_through_to_graph_trainer_config() -> None:
    # `-> GraphTrainer.Config` returning to_graph_trainer_config(base, ...): that function keeps
    # the base's fields and pops `compile` (experiments/graph_trainer/configs.py l.239-300 at
    # 73aed7f6), so the converters set on the base here and the compile set afterwards are the
    # config's; what llama3_8b() (another registry, not here) gives stays unknown
    read, values = _intent(f"{GRAPH}::graph_trainer_llama3_8b_mxfp8")
    assert [k for _, k in read.files] == ["torchtitan"]
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown) and "llama3_8b()" in base.reason
    assert "torchtitan/models/llama3/config_registry.py" in base.reason
    assert read.facts["config.torchtitan.model.converters"] == ["quantize.linear.mx"]
    assert read.facts["config.torchtitan.compile.enable"] is True
    assert read.facts["config.torchtitan.model.name"] == "llama3"
    assert values["intent.fp8"] is True and values["intent.recipe"] == "mxfp8"
    assert values["intent.compile"] is True
    # what the unread base decides is not torchtitan's default
    assert isinstance(values["intent.tp"], Unknown) and "llama3_8b()" in values["intent.tp"].reason
    assert isinstance(values["intent.distributed"], Unknown)
    _, plain = _intent(f"{GRAPH}::graph_trainer_llama3_8b")
    # no converter set here: llama3_8b()'s (not read) decide, so FP8 is undetermined, not "no"
    assert isinstance(plain["intent.fp8"], Unknown)
    whole, values = _intent(str(GRAPH))
    assert isinstance(values["intent.fp8"], Unknown)      # configs differ on it


def test_to_graph_trainer_config_drops_the_base_compile(tmp_path: Path) -> None:
    home = tmp_path / "torchtitan/experiments/graph_trainer/mine"
    home.mkdir(parents=True)
    path = home / "config_registry.py"
    path.write_text(textwrap.dedent("""
        from torchtitan.components.quantization import Float8LinearConverter
        from torchtitan.config import CompileConfig
        from torchtitan.distributed.activation_checkpoint import FullAC
        from torchtitan.experiments.graph_trainer.configs import to_graph_trainer_config
        from torchtitan.experiments.graph_trainer.trainer import GraphTrainer
        from torchtitan.models.llama3 import model_registry
        from torchtitan.trainer import Trainer

        def _base():
            return Trainer.Config(
                model_spec=model_registry("8B", converters=[Float8LinearConverter.Config()]),
                compile=CompileConfig(enable=True),
                activation_checkpoint=FullAC.Config(),
            )

        def eager() -> GraphTrainer.Config:
            return to_graph_trainer_config(_base(), model_registry)

        def compiled() -> GraphTrainer.Config:
            config = to_graph_trainer_config(_base(), model_registry)
            config.compile = CompileConfig(enable=True)
            return config

        def unknown_wrapper() -> GraphTrainer.Config:
            return some_other_function(_base())
    """))
    read, values = _intent(f"{path}::eager")
    assert "config.torchtitan.base_config" not in read.facts     # all of it is in this file
    assert values["intent.fp8"] is True and values["intent.recipe"] == "rowwise"
    assert values["intent.compile"] is False     # popped: GraphTrainer.Config's default
    assert read.facts["config.torchtitan.activation_checkpoint.mode"] == "selective"
    _, values = _intent(f"{path}::compiled")
    assert values["intent.compile"] is True
    read, values = _intent(f"{path}::unknown_wrapper")
    assert isinstance(read.facts["config.torchtitan.base_config"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_another_registrys_config_returned_unannotated(tmp_path: Path) -> None:
    home = tmp_path / "torchtitan/experiments/mine"
    home.mkdir(parents=True)
    path = home / "config_registry.py"
    path.write_text(textwrap.dedent("""
        from torchtitan.config import CompileConfig
        from torchtitan.models.llama3.config_registry import llama3_8b
        from torchtitan.trainer import Trainer

        def mine_8b():
            config = llama3_8b()
            config.compile = CompileConfig(enable=True)
            return config

        def mine_small():
            return Trainer.Config(hf_assets_path="./assets")

        def table():
            return {"a": 1}
    """))
    read, values = _intent(f"{path}::mine_8b")
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown) and "llama3_8b() of torchtitan/models/llama3" in base.reason
    assert isinstance(values["intent.fp8"], Unknown)
    assert read.facts["config.torchtitan.compile.enable"] is True   # what this file sets
    read, values = _intent(f"{path}::mine_small")
    assert values["intent.fp8"] is False            # a Trainer.Config with no converter
    read = read_paths([f"{path}::table"])           # returns a dict: not a config, as before
    assert any("'table' is none of them" in p.message for p in read.problems)


def test_a_launch_line_module_under_experiments(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # --module graph_trainer.llama3 / transformers_modeling_backend: torchtitan looks in
    # models/, then experiments/ (config/manager.py l.105-123 at b5bcd76c)
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "torchtitan/experiments/mine"
    home.mkdir(parents=True)
    (home / "config_registry.py").write_text(textwrap.dedent("""
        from torchtitan.trainer import Trainer

        def mine_small():
            return Trainer.Config(hf_assets_path="./assets")
    """))
    (tmp_path / "run.sh").write_text("MODULE=mine CONFIG=mine_small ./run_train.sh\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert not any(p.code == "reference" for p in read.problems), read.problems
    assert read.facts["config.torchtitan.job.config_function"] == "mine_small"
    graph = tmp_path / "torchtitan/experiments/graph_trainer/llama3"
    graph.mkdir(parents=True)
    (graph / "config_registry.py").write_text(GRAPH.read_text())
    (tmp_path / "run2.sh").write_text("torchrun -m torchtitan.train --module graph_trainer.llama3 "
                                      "--config graph_trainer_llama3_8b_mxfp8\n")
    read, values = _intent(str(tmp_path / "run2.sh"))
    assert not any(p.code == "reference" for p in read.problems), read.problems
    assert values["intent.fp8"] is True and values["intent.recipe"] == "mxfp8"


def test_module_resolution_follows_torchtitans_order(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # --module M: models/M, then experiments/M, then experiments/rl/examples/M, dots as folders;
    # a name it does not list is a module path (config/manager.py l.94-140 at 73aed7f6)
    monkeypatch.chdir(tmp_path)
    body = "from torchtitan.trainer import Trainer\n\ndef cfg():\n    return Trainer.Config({})\n"
    for folder, arg in (("torchtitan/experiments/rl/examples/dapo_math", "hf_assets_path='rl'"),
                        ("torchtitan/experiments/dapo_math", "hf_assets_path='exp'"),
                        ("my_pkg/exp", "hf_assets_path='mine'")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "config_registry.py").write_text(body.format(arg))
    (tmp_path / "a.sh").write_text("MODULE=dapo_math CONFIG=cfg ./run_train.sh\n")
    read = read_paths([str(tmp_path / "a.sh")])
    assert read.facts["config.torchtitan.hf_assets_path"] == "exp"   # experiments/ before rl/
    (tmp_path / "b.sh").write_text("torchrun -m torchtitan.train --module my_pkg.exp --config cfg\n")
    read = read_paths([str(tmp_path / "b.sh")])
    assert read.facts["config.torchtitan.hf_assets_path"] == "mine"
    (tmp_path / "c.sh").write_text("MODULE=graph_trainer.qwen3 CONFIG=cfg ./run_train.sh\n")
    read = read_paths([str(tmp_path / "c.sh")])
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown)
    assert "torchtitan/experiments/graph_trainer/qwen3/config_registry.py" in base.reason


def test_an_rl_controller_registry(tmp_path: Path) -> None:
    # torchtitan's RL examples build a Controller.Config (experiments/rl/examples/dapo_math/
    # config_registry.py at 73aed7f6, reduced): the trainer's settings under trainer=, a
    # converter that keeps the LM head's logits in fp32 (no FP8), vLLM generation without a
    # quantization setting
    home = tmp_path / "torchtitan/experiments/rl/examples/dapo_math"
    home.mkdir(parents=True)
    path = home / "config_registry.py"
    path.write_text(textwrap.dedent("""
        from torchtitan.config import CompileConfig, ParallelismConfig
        from torchtitan.experiments.rl.actors.generator import VLLMGenerator
        from torchtitan.experiments.rl.actors.trainer import PolicyTrainer
        from torchtitan.experiments.rl.controller import Controller
        from torchtitan.experiments.rl.models.cast_linear import LMHeadCastConverter
        from torchtitan.models.qwen3 import model_registry

        def rl_dapo_qwen3_4b_math_8k() -> Controller.Config:
            return Controller.Config(
                model_spec=model_registry("4B", converters=[LMHeadCastConverter.Config()]),
                compile=CompileConfig(enable=True, backend="aot_eager"),
                trainer=PolicyTrainer.Config(
                    parallelism=ParallelismConfig(tensor_parallel_degree=2),
                ),
                generator=VLLMGenerator.Config(model_dtype="bfloat16"),
            )
    """))
    read, values = _intent(str(path))
    assert read.facts["config.torchtitan.parallelism.tensor_parallel_degree"] == 2
    assert values["intent.fp8"] is False and values["intent.tp"] == 2
    assert values["intent.rollout.engine"] == "vllm" and values["intent.rollout.fp8"] is False


UNRELEASED = "config.torchtitan.job.unreleased_api"


def test_a_config_function_read_marks_code_after_0_2_2_once_for_every_rule() -> None:
    # config.torchtitan.job.unreleased_api: the one fact FP8D-TT-0012/0014/0017/0019 read
    # (no torchtitan release through v0.2.2 has the registry; a main checkout reports 0.2.2)
    read, _ = _intent(f"{PLAIN}::llama3_8b_maybe_fp8")
    assert read.facts[UNRELEASED] is True
    assert read.provenance[UNRELEASED] == read.provenance["config.torchtitan.job.config_function"]
    whole, _ = _intent(str(PLAIN))      # which of the registry's configs runs is not known
    assert isinstance(whole.facts[UNRELEASED], Unknown)


def test_a_toml_job_has_no_unreleased_api(tmp_path: Path) -> None:
    (tmp_path / "job.toml").write_text('[model]\nconverters = ["quantize.linear.mx"]\n'
                                       '[job]\ndump_folder = "out"\n')
    read = read_paths([str(tmp_path / "job.toml")], kind="torchtitan")
    assert UNRELEASED not in read.facts


REGISTRY = FIXTURES / "python/torchtitan/models/llama3/config_registry.py"
SNAPSHOT = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" / "_env" / \
    "bare-linux.json"


@pytest.mark.parametrize("torchao, fires", [("0.17.0", True), ("0.18.0", False)])
def test_main_s_mxfp8_linear_converter_needs_torchao_0_18(torchao: str, fires: bool) -> None:
    # FP8D-TT-0022: torchtitan main (3c4d4702 .. b5bcd76) imports
    # torchao.prototype.moe_training.mxfp8_linear, first in torchao v0.18.0-rc1
    from preflight.api import CheckOptions, run_check
    report = run_check(CheckOptions(
        paths=(f"{REGISTRY}::llama3_8b_mxfp8",), snapshot=str(SNAPSHOT), smoke=False,
        assume={"gpu": "B200", "gpu.count": "8", "pkg.torch": "2.11.0",
                "pkg.torchtitan": "0.2.2", "pkg.torchao": torchao}))
    fired = {f.rule_id for f in report.findings}
    assert ("FP8D-TT-0022" in fired) is fires
    assert "FP8D-TT-0014" not in fired     # the 0.2.x import error is not this job's
