"""redteam9 (issue 21): hostile Hydra configs for reading/hydracompose.py + pyhydra.py.

An interpolation the composition cannot resolve (a cycle, a chain past interpolate's depth,
``${oc.env:...}``, a custom resolver) used to reach the script as its raw text, a truthy string that
decided ``if args.fp8_config.enabled:`` (the recipe came out "delayed" with FP8 itself Unknown).
Hydra 1.3.2 raises InterpolationResolutionError on a cycle and reads the environment at start, so
the value is Unresolved. The rest are bounds and refusals that held (regression guards).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.pyvalues import Unresolved
from tests.reading.test_pyhydra import _bionemo, _record

_HEAD = "defaults:\n  - defaults\n  - _self_\n"
_UNRESOLVABLE = {
    "cycle": "fp8_config:\n  enabled: ${a}\na: ${b}\nb: ${a}\n",
    "deep": "fp8_config:\n  enabled: ${a0}\n"
            + "".join(f"a{i}: ${{a{i + 1}}}\n" for i in range(3000)) + "a3000: true\n",
    "env": "fp8_config:\n  enabled: ${oc.env:FP8,false}\n",
    "resolver": "fp8_config:\n  enabled: ${eval:'__import__(\"os\").getcwd()'}\n",
}


@pytest.mark.parametrize("case", sorted(_UNRESOLVABLE))
def test_an_unresolved_interpolation_is_unresolved(tmp_path: Path, case: str) -> None:
    script = _bionemo(tmp_path)
    (tmp_path / "hydra_config" / "L0_sanity.yaml").write_text(_HEAD + _UNRESOLVABLE[case])
    enabled, recipe = _record(script, "-cn", "L0_sanity")[:2]
    assert isinstance(enabled, Unresolved)
    assert not (isinstance(recipe, str) or getattr(recipe, "func", "").endswith("DelayedScaling"))
    (tmp_path / "run.sh").write_text("python train_fsdp2.py --config-name L0_sanity\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.recipe"] != "delayed"       # the `if` is not decided by raw text


@pytest.mark.parametrize("argv, why", [
    (("--config-dir", "../out", "-cn", "L0_sanity"), "config-dir"),
    (("-cn", "../../X"), "names"),
    (("-cn", "L0_sanity", "+fp8_config=../../X"), "override"),
    (("-cn", "L0_sanity", *[f"+k{i}=v" for i in range(100_000)]), "256"),
    (("-cn", "L0_sanity", "+" + ".".join(["a"] * 10_000) + "=1"), "override"),
    (("-cn", "L0_sanity", "+fp8_config.enabled=true"), "override"),
])
def test_refusals_hold(tmp_path: Path, argv: tuple[str, ...], why: str) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "L0_sanity.yaml").write_text("fp8_config:\n  enabled: true\n")
    (tmp_path / "X.yaml").write_text("fp8_config:\n  enabled: true\n")
    (tmp_path / "job").mkdir()
    got = _record(_bionemo(tmp_path / "job"), *argv)[0]
    assert isinstance(got, Unresolved) and why in got.reason


def test_defaults_cycle_and_fan_out_are_bounded(tmp_path: Path) -> None:
    script = _bionemo(tmp_path)
    conf = tmp_path / "hydra_config"
    (conf / "L0_sanity.yaml").write_text("defaults:\n  - L0_sanity\n  - _self_\n")
    assert isinstance(_record(script, "-cn", "L0_sanity")[0], Unresolved)
    for i in range(30):
        (conf / f"f{i}.yaml").write_text("defaults:\n" + f"  - f{i + 1}\n" * 10 + "x: 1\n")
    (conf / "L0_sanity.yaml").write_text("defaults:\n  - f0\n  - _self_\n")
    assert isinstance(_record(script, "-cn", "L0_sanity")[0], Unresolved)


def test_a_config_symlinked_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    _bionemo(job)
    (tmp_path / "o.yaml").write_text(_HEAD + "fp8_config:\n  enabled: true\n")
    (job / "hydra_config" / "L0_sanity.yaml").unlink()
    os.symlink(tmp_path / "o.yaml", job / "hydra_config" / "L0_sanity.yaml")
    (job / "run.sh").write_text("python train_fsdp2.py --config-name L0_sanity\n")
    read = read_paths([str(job / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not True
