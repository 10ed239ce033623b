"""A job module's dataclass built by ``TrainingConfig.from_yaml(args.config)`` (or with its
defaults) gives its fields: the YAML's value, else the field's default (reading/pyfromyaml.py;
holdout18 superposition: ``Accelerator(mixed_precision="fp8" if config.use_fp8 else "bf16")``
was Unknown). The YAML is read only inside the job; anything the text does not decide stays
Unknown with the reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

MP = "config.accelerate.accelerator.mixed_precision"

CONFIG = """
from dataclasses import dataclass, field
import yaml


@dataclass
class TrainingConfig:
    use_fp8: bool = False
    batch_size: int = 8
    betas: tuple = field(default=(0.9, 0.95))
    device: str = "cuda"

    def __post_init__(self):
        if self.device == "cuda":
            self.batch_size = 4

    @classmethod
    def from_yaml(cls, yaml_path: str) -> "TrainingConfig":
        with open(yaml_path, "r") as f:
            config_dict = yaml.safe_load(f)
        if "betas" in config_dict and isinstance(config_dict["betas"], list):
            config_dict["betas"] = tuple(config_dict["betas"])
        return cls(**config_dict)
"""

TRAIN = """
import argparse
from accelerate import Accelerator
from config import TrainingConfig


def train(config):
    accelerator = Accelerator(mixed_precision="fp8" if config.use_fp8 else "bf16")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default=None)
    parser.add_argument("--use_fp8", action="store_true")
    args = parser.parse_args()
    if args.config:
        config = TrainingConfig.from_yaml(args.config)
    else:
        config = TrainingConfig()
    if args.use_fp8:
        config.use_fp8 = True
    config.__post_init__()
    train(config)
"""


def _mp(tmp: Path, flags: str, yaml: str | None = "use_fp8: true\nbatch_size: 16\n",
         config: str = CONFIG, train: str = TRAIN) -> object:
    (tmp / "configs").mkdir(exist_ok=True)
    if yaml is not None:
        (tmp / "configs" / "run.yaml").write_text(yaml)
    (tmp / "config.py").write_text(textwrap.dedent(config))
    (tmp / "train.py").write_text(textwrap.dedent(train))
    (tmp / "run.sh").write_text(f"#!/bin/bash\naccelerate launch train.py {flags}\n")
    return read_paths([str(tmp / "run.sh")]).facts.get(MP)


@pytest.mark.parametrize("flags,yaml,want", [
    ("--config configs/run.yaml", "use_fp8: true\n", "fp8"),
    ("--config configs/run.yaml", "use_fp8: false\n", "bf16"),
    ("--config configs/run.yaml", "batch_size: 16\n", "bf16"),      # the field's default
    ("--config configs/run.yaml", "use_fp8: false\n", "bf16"),
    ("--config configs/run.yaml --use_fp8", "use_fp8: false\n", "fp8"),  # the flag wins
    ("", None, "bf16"),                                              # TrainingConfig()
    ("--use_fp8", None, "fp8"),
])
def test_the_yaml_and_the_defaults_decide(tmp_path: Path, flags: str, yaml: str | None,
                                          want: str) -> None:
    assert _mp(tmp_path, flags, yaml) == want


@pytest.mark.parametrize("flags,yaml,config", [
    ("--config configs/missing.yaml", None, CONFIG),                # not a file of the job
    ("--config /etc/fp8doctor-outside.yaml", None, CONFIG),         # outside: never opened
    ("--config $CFG", None, CONFIG),                                # not given in the text
    ("--config configs/run.yaml", "use_fp8: true\nnot_a_field: 1\n", CONFIG),  # TypeError
    ("--config configs/run.yaml", "- use_fp8\n", CONFIG),           # no mapping
    ("--config configs/run.yaml", "use_fp8: [unclosed\n", CONFIG),  # not YAML
    ("--config configs/run.yaml", "use_fp8: true\n",                # __post_init__ sets it
     CONFIG.replace("self.batch_size = 4", "self.use_fp8 = False")),
    ("--config configs/run.yaml", "use_fp8: true\n",                # from_yaml sets the key
     CONFIG.replace('config_dict["betas"] = tuple', 'config_dict["use_fp8"] = tuple')),
    ("--config configs/run.yaml", "use_fp8: true\n",                # computed keys
     CONFIG.replace('config_dict["betas"] = tuple(config_dict["betas"])',
                    'config_dict[k] = 1')),
    ("--config configs/run.yaml", "use_fp8: true\n",                # update() changes it
     CONFIG.replace("        return cls(", "        config_dict.update(x=1)\n        return cls(")),
    ("--config configs/run.yaml", "use_fp8: true\n",                # a base class
     CONFIG.replace("class TrainingConfig:", "class TrainingConfig(Base):")),
    ("--config configs/run.yaml", "use_fp8: true\n",                # not a dataclass
     CONFIG.replace("@dataclass\n", "")),
    ("--config configs/run.yaml", "use_fp8: true\n",                # a setattr loop
     CONFIG.replace("self.batch_size = 4", "setattr(self, name, True)")),
    ("--config configs/run.yaml", "use_fp8: true\n",                # not the path's file
     CONFIG.replace("open(yaml_path", "open('other.yaml'")),
])
def test_what_the_text_does_not_decide_is_unknown(tmp_path: Path, flags: str,
                                                  yaml: str | None, config: str) -> None:
    got = _mp(tmp_path, flags, yaml, config)
    assert isinstance(got, Unknown), got


def test_a_default_computed_at_run_time_is_unknown(tmp_path: Path) -> None:
    config = CONFIG.replace("use_fp8: bool = False", "use_fp8: bool = bool(os.environ)")
    assert isinstance(_mp(tmp_path, "", None, config), Unknown)


def test_a_method_the_script_calls_that_sets_it(tmp_path: Path) -> None:
    config = CONFIG + "\n    def enable(self):\n        self.use_fp8 = True\n"
    train = TRAIN.replace("    config.__post_init__()", "    config.enable()")
    assert isinstance(_mp(tmp_path, "--config configs/run.yaml", "use_fp8: false\n", config,
                          train), Unknown)


def test_json_and_a_subkey(tmp_path: Path) -> None:
    config = CONFIG.replace("import yaml", "import json").replace(
        "yaml.safe_load(f)", 'json.load(f)["training"]')
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "run.json").write_text('{"training": {"use_fp8": true}}')
    assert _mp(tmp_path, "--config configs/run.json", None, config) == "fp8"


def test_a_yaml_outside_the_job_is_never_opened(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "outside.yaml").write_text("use_fp8: true\n")
    got = _mp(job, f"--config {tmp_path / 'outside.yaml'}", None)
    assert isinstance(got, Unknown)
    got = _mp(job, "--config ../outside.yaml", None)
    assert isinstance(got, Unknown)


def test_a_symlink_out_of_the_job_is_never_opened(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "configs").mkdir(parents=True)
    (tmp_path / "secret.yaml").write_text("use_fp8: true\n")
    (job / "configs" / "run.yaml").symlink_to(tmp_path / "secret.yaml")
    assert isinstance(_mp(job, "--config configs/run.yaml", None), Unknown)


@pytest.mark.parametrize("yaml", [
    "use_fp8: true\n" + "x" * (64 * 1024 * 1024) + ": 1\n",      # over the reader's size limit
    "a: &a [" + ", ".join(["*a"] * 50) + "]\nuse_fp8: true\n",   # an alias bomb
    "\x00\x01binary",
])
def test_hostile_yaml_is_unknown_and_bounded(tmp_path: Path, yaml: str) -> None:
    assert isinstance(_mp(tmp_path, "--config configs/run.yaml", yaml), Unknown)
