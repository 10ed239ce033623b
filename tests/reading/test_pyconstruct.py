"""A method's ``if self.flag:`` read once per construction of its class (reading/pyconstruct.py,
through pyowngate.condition): holdout17's modded-nanogpt issue-92 record
(KellerJordan/modded-nanogpt, train_gpt.py:212-231 ``CastedLinear(..., use_fp8=False)``,
l.266/290/291 built without FP8, l.331 ``self.lm_head = CastedLinear(..., use_fp8=True)``),
reduced on tests/jobs/modded_nanogpt_job.py. Before: ``self.use_fp8`` was "called with different
values", FP8 Unknown; each object is its own ``self``, so the lm_head's forward runs FP8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from tests.jobs.modded_nanogpt_job import LOSS_HEAD, TRAIN_GPT, write

_FLAG = '        use_fp8 = not os.environ.get("DISABLE_FP8", False)\n'
_OTHERS = ('        self.c_fc = CastedLinearT(model_dim, 4 * model_dim)\n'
           '        self.c_proj = CastedLinearT(4 * model_dim, model_dim)\n'
           '        self.qkv = CastedLinearT(model_dim, 3 * model_dim, use_fp8=False)\n')


def _fp8(tmp_path: Path, head: str, extra: str = "", env: str = "",
         method: str = "") -> Any:
    assert _FLAG in TRAIN_GPT and "use_fp8=use_fp8, x_s" in TRAIN_GPT
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD).replace(_FLAG, _OTHERS + extra).replace(
        "use_fp8=use_fp8, x_s", f"use_fp8={head}, x_s").replace(
        "    def forward(self, x: Tensor):\n        if self.use_fp8",
        f"{method}    def forward(self, x: Tensor):\n        if self.use_fp8")
    read = read_paths([str(write(tmp_path, train=train, env=env))])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


def test_fp8_through_the_one_construction_that_asks_it(tmp_path: Path) -> None:
    assert _fp8(tmp_path, "True") is True


def test_no_construction_asks_it(tmp_path: Path) -> None:
    assert _fp8(tmp_path, "False") is False


@pytest.mark.parametrize("env, fp8", [("FP8=1 ", True), ("", False), ("FP8=0 ", False)])
def test_the_launch_environment_decides_a_construction(tmp_path: Path, env: str,
                                                       fp8: bool) -> None:
    extra = '        flag = os.environ.get("FP8") == "1"\n'
    assert _fp8(tmp_path, "flag", extra, env) is fp8


def test_a_construction_in_a_branch_that_never_runs_adds_nothing(tmp_path: Path) -> None:
    extra = '        if False:\n            self.x = CastedLinearT(1, 1, use_fp8=True)\n'
    assert _fp8(tmp_path, "False", extra) is False


def test_an_undecided_construction_or_a_flag_set_elsewhere_stays_unknown(tmp_path: Path) -> None:
    extra = '        if torch.rand(1).item() > 0.5:\n            self.x = CastedLinearT(1, 1, use_fp8=True)\n'
    assert isinstance(_fp8(tmp_path, "False", extra), Unknown)
    method = "    def enable(self):\n        self.use_fp8 = True\n\n"
    assert isinstance(_fp8(tmp_path / "..", "False", method=method), Unknown)


# hostile variants


def test_many_constructions_are_bounded(tmp_path: Path) -> None:
    extra = "".join(f"        self.l{i} = CastedLinearT(1, 1, use_fp8={i == 99})\n"
                    for i in range(100))
    assert isinstance(_fp8(tmp_path, "False", extra), Unknown)     # past MAX_BUILDS: as before


def test_a_class_built_inside_itself_terminates(tmp_path: Path) -> None:
    method = ("    def grow(self, n):\n        if n:\n"
              "            self.child = CastedLinearT(1, 1, use_fp8=self.use_fp8)\n\n")
    assert _fp8(tmp_path, "True", method=method) in (True,) or isinstance(
        _fp8(tmp_path, "True", method=method), Unknown)
