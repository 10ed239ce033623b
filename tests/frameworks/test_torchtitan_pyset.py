"""torchtitan config functions returning a helper of the registry that sets attributes on the
config it is given (LambdaLabsML/torchtitan 03508523 gpt_oss/config_registry.py, reduced:
``return _20b_mxfp8(gpt_oss_20b())``, holdout23): the helper's converters are the config's (FP8
MXFP8), a helper that sets none keeps the base's, a set under an undecided condition is Unknown,
nested helpers apply in order, a helper that calls itself is bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

REGISTRY = '''import os
from torchtitan.trainer import Trainer
from torchtitan.config import TrainingConfig
from torchtitan.components.quantization import MXFP8LinearConverter, MXFP8GroupedExpertsConverter
from . import model_registry


def gpt_oss_20b() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("20b"),
        training=TrainingConfig(local_batch_size=1, seq_len=8192),
    )


def _mx(config: Trainer.Config, flavor: str = "20b") -> Trainer.Config:
    config.model_spec = model_registry(
        flavor,
        converters=[MXFP8LinearConverter.Config(fqns=["attention"]),
                    MXFP8GroupedExpertsConverter.Config(pad_multiple=128)],
    )
    return config


def _steps(config: Trainer.Config) -> Trainer.Config:
    config.training = TrainingConfig(local_batch_size=2, seq_len=4096)
    return config


def _maybe(config: Trainer.Config) -> Trainer.Config:
    if os.environ.get("MX") == "1":
        config.model_spec = model_registry("20b", converters=[MXFP8LinearConverter.Config()])
    return config


def _loop(config: Trainer.Config) -> Trainer.Config:
    config.training = _loop(config)
    return config


def gpt_oss_20b_mxfp8() -> Trainer.Config:
    return _mx(gpt_oss_20b())


def gpt_oss_120b_mxfp8() -> Trainer.Config:
    return _mx(gpt_oss_20b(), "120b")


def gpt_oss_20b_short() -> Trainer.Config:
    return _steps(gpt_oss_20b())


def gpt_oss_20b_mx_short() -> Trainer.Config:
    return _steps(_mx(gpt_oss_20b()))


def gpt_oss_20b_maybe() -> Trainer.Config:
    return _maybe(gpt_oss_20b())


def gpt_oss_20b_loop() -> Trainer.Config:
    return _loop(gpt_oss_20b())
'''


def _read(tmp_path: Path, name: str) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / "torchtitan/models/gpt_oss/config_registry.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REGISTRY)
    read = read_paths([f"{path}::{name}"])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_the_helpers_converters_are_the_configs(tmp_path: Path) -> None:
    read, values = _read(tmp_path, "gpt_oss_20b_mxfp8")
    assert read.facts["config.torchtitan.model.converters"] == [
        "quantize.linear.mx", "quantize.grouped_mm.mx"]
    assert read.facts["config.torchtitan.quantize.grouped_mm.mx.pad_multiple"] == 128
    assert values["intent.fp8"] is True and values["intent.recipe"] == "mxfp8"
    assert read.provenance["config.torchtitan.model.converters"].line == 18
    assert read.facts["config.torchtitan.training.seq_len"] == 8192     # the base's, kept


def test_the_helpers_parameters_bind_to_the_call(tmp_path: Path) -> None:
    read, _ = _read(tmp_path, "gpt_oss_120b_mxfp8")
    assert read.facts["config.torchtitan.model.flavor"] == "120b"
    read, _ = _read(tmp_path, "gpt_oss_20b_mxfp8")
    assert read.facts["config.torchtitan.model.flavor"] == "20b"


def test_a_helper_setting_no_converter_keeps_the_base(tmp_path: Path) -> None:
    read, values = _read(tmp_path, "gpt_oss_20b_short")
    assert values["intent.fp8"] is False
    assert read.facts["config.torchtitan.training.seq_len"] == 4096


def test_nested_helpers_apply_inner_first(tmp_path: Path) -> None:
    read, values = _read(tmp_path, "gpt_oss_20b_mx_short")
    assert values["intent.fp8"] is True
    assert read.facts["config.torchtitan.training.seq_len"] == 4096


def test_a_set_under_an_undecided_condition_is_unknown(tmp_path: Path) -> None:
    _, values = _read(tmp_path, "gpt_oss_20b_maybe")
    assert isinstance(values["intent.fp8"], Unknown)


def test_hostile_self_calling_helper_is_bounded(tmp_path: Path) -> None:
    read, values = _read(tmp_path, "gpt_oss_20b_loop")
    assert values["intent.fp8"] is False
    assert read.facts["config.torchtitan.job.config_function"] == "gpt_oss_20b_loop"
