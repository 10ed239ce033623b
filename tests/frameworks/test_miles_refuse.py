"""A miles launcher's dataclass refusing the launch line in ``__post_init__``
(frameworks/miles_refuse.py; holdout14: radixark/miles 31f1ca96 scripts/run_deepseek_v32.py, as
the agreement benchmark keeps it verbatim, run with ``--hardware H100 --rollout-mxfp8
--train-mxfp8``), and FP8D-HW-0004 / FP8D-HW-0010 on what it refuses."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_JOB = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" / \
    "holdout14-miles-py-deepseek-v32-h100-rollout-mxfp8-train-mxfp8-refused" / "files"
_SCRIPT = _JOB / "scripts" / "run_deepseek_v32.py"
_RUN = "python scripts/run_deepseek_v32.py train {more}\n"
_H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.17.0",
         "pkg.megatron-core": "0.17.0"}


def _job(tmp_path: Path, more: str, edit: tuple[str, str] | None = None) -> Path:
    target = tmp_path / "scripts" / "run_deepseek_v32.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_SCRIPT, target)
    if edit is not None:
        text = target.read_text()
        assert edit[0] in text
        target.write_text(text.replace(edit[0], edit[1], 1))
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + _RUN.format(more=more))
    return tmp_path / "run.sh"


def _read(run: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(run)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts}, read


def _fired(run: Path, gpu: str = "H100") -> set[str]:
    report = preflight.check([str(run)], smoke=False, assume={**_H100, "gpu": gpu})
    return {f.rule_id for f in report.findings}


def test_holdout14_both_refused_on_h100(tmp_path: Path) -> None:
    run = _job(tmp_path, "--hardware H100 --rollout-mxfp8 --train-mxfp8")
    got, read = _read(run)
    # the first failing assert stops the launch (line 57 of the job copy: upstream 56)
    assert read.provenance["config.slime.refused"].line == 57
    assert got["config.slime.refused.rollout_mxfp8"] is True
    assert got["config.slime.refused.train_mxfp8"] is True
    assert (got["intent.fp8"], got["intent.recipe"]) == (True, "mxfp8")
    assert (got["intent.rollout.fp8"], got["intent.rollout.recipe"]) == (True, "mxfp8")
    fired = _fired(run)
    assert "FP8D-HW-0004" in fired
    assert "FP8D-HW-0010" not in fired          # one finding for one cause: HW-0004 says it
    assert "FP8D-HW-0001" not in fired


def test_rollout_only_refused_fires_the_rollout_rule(tmp_path: Path) -> None:
    run = _job(tmp_path, "--hardware H200 --rollout-mxfp8")
    got, _ = _read(run)
    assert got["intent.fp8"] is False               # training asked nothing
    assert got["intent.rollout.recipe"] == "mxfp8"
    fired = _fired(run, "H200")
    assert "FP8D-HW-0010" in fired and "FP8D-HW-0004" not in fired


def test_blackwell_is_not_refused(tmp_path: Path) -> None:
    run = _job(tmp_path, "--hardware B200 --rollout-mxfp8 --train-mxfp8")
    got, _ = _read(run)
    assert not any(k.startswith("config.slime.refused") for k in got)
    assert (got["intent.fp8"], got["intent.recipe"]) == (True, "mxfp8")   # the B200 arm
    fired = _fired(run, "B200")
    assert not {"FP8D-HW-0004", "FP8D-HW-0010"} & fired


def test_h100_without_mxfp8_is_quiet(tmp_path: Path) -> None:
    run = _job(tmp_path, "--hardware H100")
    got, _ = _read(run)
    assert not any(k.startswith("config.slime.refused") for k in got)
    assert got["intent.fp8"] is False
    # deepseek-ai/DeepSeek-V3.2 is published in FP8 under its plain name: no marker, no "no"
    assert isinstance(got["intent.rollout.fp8"], Unknown)


@pytest.mark.parametrize("edit", [
    # the field is set in __post_init__ before the check: its value there is not the launch
    # line's, so the check decides nothing
    ("        assert not (self.rollout_fp8", "        self.train_mxfp8 = self.rollout_mxfp8 = "
     "False\n        assert not (self.rollout_fp8"),
    # self escapes to a call: any field may change
    ("        assert not (self.rollout_fp8", "        configure(self)\n"
     "        assert not (self.rollout_fp8"),
    # the check sits under a test decided when it runs
    ('        if self.hardware in ("H100", "H200"):',
     '        if self.hardware in ("H100", "H200") and os.environ.get("STRICT"):'),
    # after a return nothing is checked
    ('        if self.hardware in ("H100", "H200"):', '        return\n'
     '        if self.hardware in ("H100", "H200"):'),
])
def test_checks_the_text_does_not_decide_claim_nothing(tmp_path: Path, edit: tuple[str, str]
                                                       ) -> None:
    got, _ = _read(_job(tmp_path, "--hardware H100 --rollout-mxfp8 --train-mxfp8", edit))
    assert not any(k.startswith("config.slime.refused.") for k in got)


def test_a_raise_reached_and_a_check_on_other_fields(tmp_path: Path) -> None:
    # a raise under a decided test refuses; the FP8 switch it does not read is no ask
    edit = ('        if self.hardware in ("H100", "H200"):',
            '        if self.hardware == "H100" and self.num_rollout > 10:\n'
            '            raise ValueError("too many rollouts on H100")\n'
            '        if self.hardware in ("H100", "H200") and False:')
    got, read = _read(_job(tmp_path, "--hardware H100 --train-mxfp8", edit))
    assert "too many rollouts" in got["config.slime.refused"]
    assert not any(k.startswith("config.slime.refused.") for k in got)
    assert got["intent.fp8"] is False               # the H100 arms add no --fp8-recipe


def test_hostile_post_init_stays_bounded(tmp_path: Path) -> None:
    deep = "        " + "assert not (" * 200 + "self.train_mxfp8" + ")" * 200 + "\n"
    many = "        assert not self.train_mxfp8, 'x'\n" * 2000
    for body in (deep, many):
        edit = ('        if self.hardware in ("H100", "H200"):',
                body + '        if self.hardware in ("H100", "H200"):')
        got, _ = _read(_job(tmp_path, "--hardware H100 --train-mxfp8", edit))
        assert "intent.fp8" in got                  # read, no traceback
