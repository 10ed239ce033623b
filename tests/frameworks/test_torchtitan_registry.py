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


def test_graph_trainer_configs_built_elsewhere_are_read_with_fp8_unknown() -> None:
    # `-> GraphTrainer.Config` (not `Trainer.Config`): the file was not read at all before
    read, values = _intent(f"{GRAPH}::graph_trainer_llama3_8b_mxfp8")
    assert [k for _, k in read.files] == ["torchtitan"]
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown) and "to_graph_trainer_config" in base.reason
    assert isinstance(values["intent.fp8"], Unknown)        # MXFP8 is set there: never "no"
    whole, values = _intent(str(GRAPH))
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
    assert isinstance(base, Unknown) and "config_registry.llama3_8b" in base.reason
    assert isinstance(values["intent.fp8"], Unknown)
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
    assert isinstance(read.facts["config.torchtitan.base_config"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)
