"""A YAML-loading classmethod that builds one nested dataclass per section (reading/pynested.py,
holdout19 bdh config.py:137-155 ``return cls(model=ModelConfig(**d.get('model', {})), ...,
low_precision=LowPrecisionConfig(**d.get('low_precision', {})))``): a section's key is the
file's value, else the nested class's default; any shape or file the text does not decide is
Unknown, and a construction that raises makes every section Unknown."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

MP = "config.accelerate.accelerator.mixed_precision"

CONFIG = """
from dataclasses import dataclass
import yaml


@dataclass
class ModelConfig:
    n_layer: int = 6


@dataclass
class LowPrecisionConfig:
    use_fp8: bool = False
    compute_dtype: str = "bfloat16"


@dataclass
class Config:
    model: ModelConfig
    low_precision: LowPrecisionConfig

    @classmethod
    def from_yaml(cls, config_path: str = "config.yaml") -> "Config":
        with open(config_path, "r") as f:
            config_dict = yaml.safe_load(f)
        return cls(
            model=ModelConfig(**config_dict.get('model', {})),
            low_precision=LowPrecisionConfig(**config_dict.get('low_precision', {})),
        )
"""

TRAIN = """
import argparse
from accelerate import Accelerator
import config as cfg

parser = argparse.ArgumentParser()
parser.add_argument("--config", type=str, default="config.yaml")
args = parser.parse_args()
config = cfg.Config.from_yaml(args.config)
accelerator = Accelerator(mixed_precision="fp8" if config.low_precision.use_fp8 else "bf16")
"""


def _mp(tmp: Path, yaml: str | None, config: str = CONFIG, flags: str = "") -> object:
    if yaml is not None:
        (tmp / "config.yaml").write_text(yaml)
    (tmp / "config.py").write_text(textwrap.dedent(config))
    (tmp / "train.py").write_text(textwrap.dedent(TRAIN))
    (tmp / "run.sh").write_text(f"#!/bin/bash\naccelerate launch train.py {flags}\n")
    return read_paths([str(tmp / "run.sh")]).facts.get(MP)


@pytest.mark.parametrize("yaml,want", [
    ("low_precision:\n  use_fp8: true\n", "fp8"),                  # firing
    ("low_precision:\n  use_fp8: false\n", "bf16"),                # quiet
    ("model:\n  n_layer: 2\n", "bf16"),                            # section missing: {} default
    ("low_precision:\n  compute_dtype: float16\n", "bf16"),        # key missing: default
    ("other: 1\nlow_precision:\n  use_fp8: true\n", "fp8"),        # keys no section reads
])
def test_the_sections_and_the_defaults_decide(tmp_path: Path, yaml: str, want: str) -> None:
    assert _mp(tmp_path, yaml) == want


DICT_GET = "config_dict.get('low_precision', {})"


@pytest.mark.parametrize("yaml,config", [
    ("low_precision:\n  use_fp8: true\n  nope: 1\n", CONFIG),      # TypeError in the section
    ("model:\n  nope: 1\nlow_precision:\n  use_fp8: true\n", CONFIG),   # another section raises
    ("low_precision: [1, 2]\n", CONFIG),                          # the section is no mapping
    ("model: {}\n", CONFIG.replace(DICT_GET, "config_dict['low_precision']")),   # KeyError
    ("model: {}\n", CONFIG.replace(DICT_GET, "config_dict.get('low_precision')")),  # **None
    ("low_precision:\n  use_fp8: false\n",                         # a section set
     CONFIG.replace("        return cls(",
                    "        config_dict['low_precision'] = {'use_fp8': True}\n        return cls(")),
    ("low_precision:\n  use_fp8: false\n",                         # an item of a section set
     CONFIG.replace("        return cls(", "        config_dict['low_precision']['use_fp8'] = True"
                    "\n        return cls(")),
    ("low_precision:\n  use_fp8: false\n",                         # the mapping aliased
     CONFIG.replace("        return cls(", "        lp = config_dict\n        return cls(")),
    ("low_precision:\n  use_fp8: false\n",                         # passed to a call
     CONFIG.replace("        return cls(", "        fix(config_dict)\n        return cls(")),
    ("low_precision:\n  use_fp8: false\n",                         # __post_init__ sets it
     CONFIG.replace('    compute_dtype: str = "bfloat16"\n',
                    '    compute_dtype: str = "bfloat16"\n\n    def __post_init__(self):\n'
                    '        self.use_fp8 = True\n')),
    ("low_precision:\n  use_fp8: false\n",                         # the section class imported
     CONFIG.replace("@dataclass\nclass LowPrecisionConfig:", "@dataclass\nclass Other:")),
    ("low_precision:\n  use_fp8: false\n",                         # a keyword computed from it
     CONFIG.replace("model=ModelConfig(**config_dict.get('model', {}))",
                    "model=make(config_dict)")),
    ("low_precision:\n  use_fp8: false\n",                         # two loaded mappings
     CONFIG.replace("model=ModelConfig(**config_dict.get('model', {}))",
                    "model=ModelConfig(**other.get('model', {}))")),
    (None, CONFIG),                                                # the default file is missing
    ("low_precision:\n  use_fp8: [unclosed\n", CONFIG),           # not YAML
])
def test_what_the_text_does_not_decide_is_unknown(tmp_path: Path, yaml: str | None,
                                                  config: str) -> None:
    assert isinstance(_mp(tmp_path, yaml, config), Unknown)


def test_a_file_outside_the_job_is_never_opened(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "outside.yaml").write_text("low_precision:\n  use_fp8: true\n")
    assert isinstance(_mp(job, None, flags="--config ../outside.yaml"), Unknown)


def test_many_sections_and_a_huge_section_are_bounded(tmp_path: Path) -> None:
    many = "".join(f"            s{n}=ModelConfig(**config_dict.get('s{n}', {{}})),\n"
                   for n in range(400))
    config = CONFIG.replace("        return cls(\n", "        return cls(\n" + many)
    assert isinstance(_mp(tmp_path, "low_precision:\n  use_fp8: true\n", config), Unknown)
    huge = "low_precision:\n  use_fp8: true\n" + "".join(f"  k{n}: 1\n" for n in range(20000))
    assert isinstance(_mp(tmp_path, huge), Unknown)     # keys no field: TypeError


def test_a_self_referencing_section_class_is_bounded(tmp_path: Path) -> None:
    config = CONFIG.replace("model=ModelConfig(**config_dict.get('model', {}))",
                            "model=Config(**config_dict.get('model', {}))")
    got = _mp(tmp_path, "model:\n  model: {}\nlow_precision:\n  use_fp8: true\n", config)
    assert isinstance(got, Unknown)     # Config has fields without defaults: it raises
