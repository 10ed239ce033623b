"""Red team of the torchtitan registry reader (issue 21, redteam2): a config function whose model
spec (where the converters live since PR 3127) or converters container is built by code the
text does not give must leave FP8 undetermined. It was read as "no converters", so FP8 came out
"no", every FP8 rule stayed quiet and the check exited 0 on a job that may well train in FP8."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

REGISTRY = """
    from torchtitan.components.quantization import Float8LinearConverter
    from torchtitan.trainer import Trainer
    from elsewhere import make_spec, make_converters

    from . import model_registry

    def base():
        return Trainer.Config(model_spec=model_registry(
            "8B", converters=[Float8LinearConverter.Config()]))

    def spec_from_elsewhere():
        return Trainer.Config(model_spec=make_spec("8B"))

    def spec_set_afterwards():
        config = base()
        config.model_spec = make_spec("8B")
        return config

    def spec_a_name():
        return Trainer.Config(model_spec=SPEC)

    def container_from_elsewhere():
        return Trainer.Config(model_converters=make_converters())

    def plain():
        return Trainer.Config(model_spec=model_registry("8B"))
"""


def _values(path: str) -> tuple[Any, dict[str, Any]]:
    read = read_paths([path])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


@pytest.fixture()
def registry(tmp_path: Path) -> Path:
    home = tmp_path / "torchtitan" / "models" / "mine"
    home.mkdir(parents=True)
    path = home / "config_registry.py"
    path.write_text(textwrap.dedent(REGISTRY))
    return path


@pytest.mark.parametrize("name", ["spec_from_elsewhere", "spec_set_afterwards", "spec_a_name",
                                  "container_from_elsewhere"])
def test_a_model_spec_built_elsewhere_leaves_fp8_undetermined(registry: Path, name: str) -> None:
    read, values = _values(f"{registry}::{name}")
    converters = read.facts["config.torchtitan.model.converters"]
    assert isinstance(converters, Unknown) and "not in this file" in converters.reason
    assert read.provenance["config.torchtitan.model.converters"].path == str(registry)
    assert isinstance(values["intent.fp8"], Unknown)


def test_model_registry_itself_is_still_read(registry: Path) -> None:
    _, values = _values(f"{registry}::base")
    assert values["intent.fp8"] is True
    _, values = _values(f"{registry}::plain")
    assert values["intent.fp8"] is False


def test_the_launch_line_reaches_the_same_verdict(registry: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = registry.parents[3]
    monkeypatch.chdir(root)
    (root / "run.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node 8 -m torchtitan.train "
                                 "--module mine --config spec_from_elsewhere\n")
    _, values = _values(str(root / "run.sh"))
    assert isinstance(values["intent.fp8"], Unknown)


@pytest.mark.parametrize("line", [
    "torchrun -m torchtitan.train --module $MODEL --config $CFG --training.steps 10",
    "torchrun -m torchtitan.train --module llama3 --config \"$CFG\" --training.steps 10",
    "torchrun -m torchtitan.train --module ../../outside --config llama3_8b",
    "torchrun -m torchtitan.train --module /etc --config passwd",
])
def test_a_registry_chosen_at_run_time_or_not_importable_is_undetermined(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    # read as no registry at all, FP8 came out "no" from the flags alone
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\n{line}\n")
    read, values = _values(str(script))
    assert [k for _, k in read.files] == ["torchtitan"]
    assert isinstance(values["intent.fp8"], Unknown)
    assert read.provenance["config.torchtitan.base_config"].line == 2
    if "$" not in line:     # a name no import can take is said at its line
        assert [(p.path, p.line, p.level) for p in read.problems] == [(str(script), 2, "warning")]
