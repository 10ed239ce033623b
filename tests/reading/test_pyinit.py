"""An attribute a plain class of the job sets in its ``__init__`` (reading/pyinit.py, holdout20
BiRefNet config.py:11 ``self.mixed_precision = ['no', 'fp16', 'bf16', 'fp8'][2]`` read by
``Accelerator(mixed_precision=config.mixed_precision)`` after ``config = Config()``): a literal,
an element of a literal by a literal key, or a parameter bound per call site; anything the text
does not decide (a branch, a second write, a method that writes it, a base class, a negative or
out-of-range index) is Unknown."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

MP = "config.accelerate.accelerator.mixed_precision"

CONFIG = """
class Config():
    def __init__(self, precision='bf16') -> None:
        self.batch_size = 8
        self.mixed_precision = {value}
{more}
"""

TRAIN = """
from accelerate import Accelerator
from config import Config

config = Config({args})
config.go()
accelerator = Accelerator(mixed_precision=config.mixed_precision)
"""


def _mp(tmp: Path, value: str, more: str = "", args: str = "", config: str = CONFIG) -> object:
    tmp = tmp / str(len(list(tmp.iterdir())))       # one folder per job: a module is read once
    tmp.mkdir()
    (tmp / "config.py").write_text(textwrap.dedent(config).format(value=value, more=more))
    (tmp / "train.py").write_text(textwrap.dedent(TRAIN).format(args=args))
    (tmp / "run.sh").write_text("#!/bin/bash\naccelerate launch train.py\n")
    return read_paths([str(tmp / "run.sh")]).facts.get(MP)


@pytest.mark.parametrize("value,args,want", [
    ("['no', 'fp16', 'bf16', 'fp8'][3]", "", "fp8"),             # firing
    ("['no', 'fp16', 'bf16', 'fp8'][2]", "", "bf16"),             # quiet (BiRefNet)
    ("('no', 'fp8')[1]", "", "fp8"),
    ("{'a': 'fp8', 'b': 'bf16'}['b']", "", "bf16"),
    ("'fp8'", "", "fp8"),
    ("precision", "", "bf16"),                                    # the default
    ("precision", "'fp8'", "fp8"),                                # bound by position
    ("precision", "precision='fp8'", "fp8"),                      # bound by keyword
])
def test_init_sets_the_attribute(tmp_path: Path, value: str, args: str, want: str) -> None:
    assert _mp(tmp_path, value, args=args) == want


@pytest.mark.parametrize("value,more", [
    ("['no', 'fp8'][-1]", ""),                                    # negative index
    ("['no', 'fp8'][5]", ""),                                     # out of range
    ("{'a': 'fp8'}['b']", ""),                                    # missing key
    ("['no', 'fp8'][True]", ""),                                  # a bool is no index
    ("os.environ['MP']", ""),                                     # computed
    ("'bf16'", "        self.mixed_precision = 'fp8'"),           # set twice
    ("'bf16'", "        if self.batch_size > 4:\n            self.mixed_precision = 'fp8'"),
    ("'bf16'", "        setattr(self, 'mixed_precision', 'fp8')"),
    ("'bf16'", "    def go(self):\n        self.mixed_precision = 'fp8'"),   # the script calls it
    ("'[' * 0 + 'bf16'", ""),
])
def test_what_the_text_does_not_decide_is_unknown(tmp_path: Path, value: str, more: str) -> None:
    assert isinstance(_mp(tmp_path, value, more), Unknown)


def test_a_class_with_a_base_or_no_init_is_not_read(tmp_path: Path) -> None:
    based = CONFIG.replace("class Config():", "class Base:\n    pass\n\nclass Config(Base):")
    assert isinstance(_mp(tmp_path, "'fp8'", config=based), Unknown)
    no_init = "class Config:\n    mixed_precision = {value!r}\n{more}\n"
    assert isinstance(_mp(tmp_path, "fp8", config=no_init), Unknown)


def test_hostile_classes_give_no_traceback(tmp_path: Path) -> None:
    huge = "[" + ", ".join(["'bf16'"] * 30_000) + "][0]"          # a huge literal list
    assert isinstance(_mp(tmp_path, huge), Unknown)
    nested = "[" * 500 + "'bf16'" + "]" * 500                      # deep nesting
    got = _mp(tmp_path, nested)
    assert isinstance(got, Unknown) or got is None or isinstance(got, list)
    selfref = CONFIG.replace("        self.batch_size = 8", "        self.me = Config()")
    assert _mp(tmp_path, "'fp8'", config=selfref) == "fp8"       # self-referential class
    no_go = CONFIG + "    def go(self):\n        return self\n"
    assert _mp(tmp_path, "'fp8'", config=no_go) == "fp8"     # a method that writes nothing


@pytest.mark.parametrize("signature,want", [
    ("self=None, precision='fp8'", "fp8"),     # every parameter with a default, self too
    ("self, /, precision='fp8'", "fp8"),       # positional-only self
    ("self, *, precision='fp8'", "fp8"),       # keyword-only
])
def test_defaults_line_up_with_their_parameters(tmp_path: Path, signature: str, want: str) -> None:
    # pyinit counted defaults against the parameters after self: `def __init__(self=None,
    # precision='fp8')` raised ValueError (zip strict) instead of reading the default
    config = CONFIG.replace("self, precision='bf16'", signature)
    assert _mp(tmp_path, "precision", config=config) == want
