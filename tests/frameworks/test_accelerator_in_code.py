"""Accelerator(mixed_precision=...) in the script beats what accelerate launch asks for
(accelerate state.py at v1.14.0): FP8D-ACC-0032 on real launch lines and scripts, read by their
syntax tree, never run."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.jobs.read import read_paths

SCRIPT = """import argparse
from accelerate import Accelerator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    accelerator = Accelerator({args})
    model, optimizer = accelerator.prepare(model, optimizer)


if __name__ == "__main__":
    main()
"""
ASSUME = {"gpu": "H100", "pkg.accelerate": "1.14.0", "pkg.transformer-engine": "2.8.0"}


def _job(tmp: Path, launch: str, accelerator_args: str, yaml: str | None = None) -> list[str]:
    (tmp / "train.py").write_text(SCRIPT.format(args=accelerator_args))
    (tmp / "launch.sh").write_text("#!/bin/bash\n" + launch + "\n")
    if yaml is not None:
        (tmp / "acc.yaml").write_text(yaml)
    return [str(tmp / "launch.sh")]


def _fired(paths: list[str]) -> set[str]:
    return {f.rule_id for f in preflight.check(paths, smoke=False, assume=ASSUME).findings}


@pytest.mark.parametrize(("launch", "yaml"), [
    ("accelerate launch --mixed_precision fp8 --num_processes 8 train.py --lr 2e-5", None),
    ("accelerate launch --config_file acc.yaml train.py",
     "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
     "num_processes: 8\nfp8_config:\n  backend: TE\n"),
])
def test_code_bf16_under_an_fp8_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         launch: str, yaml: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    paths = _job(tmp_path, launch, 'mixed_precision="bf16"', yaml)
    read = read_paths(paths)
    assert read.facts["config.accelerate.replaced.mixed_precision"] == "fp8"
    assert read.provenance["config.accelerate.accelerator.mixed_precision"].endswith("train.py:9")
    report = preflight.check(paths, smoke=False, assume=ASSUME)
    [finding] = [f for f in report.findings if f.rule_id == "FP8D-ACC-0032"]
    assert finding.location is not None and str(finding.location).endswith("train.py:9")


def test_the_launcher_decides_when_the_code_says_nothing(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = _job(tmp_path, "accelerate launch --mixed_precision fp8 train.py", "")
    assert "FP8D-ACC-0032" not in _fired(paths)
    assert "config.accelerate.replaced.mixed_precision" not in read_paths(paths).facts


def test_code_and_launcher_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = _job(tmp_path, "accelerate launch --mixed_precision bf16 train.py",
                 'mixed_precision="bf16"')
    assert "FP8D-ACC-0032" not in _fired(paths)


def test_te_recipe_in_code_is_dropped_under_deepspeed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # FP8D-ACC-0012: the DeepSpeed path wraps with self.fp8_recipe_handler only (accelerator.py
    # L2285 at v1.14.0 and main 16cb6eb), so a TERecipeKwargs in kwargs_handlers is not used
    monkeypatch.chdir(tmp_path)
    yaml = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
            "deepspeed_config:\n  zero_stage: 2\nnum_processes: 8\n")
    args = ('mixed_precision="fp8", kwargs_handlers=[TERecipeKwargs(fp8_format="E4M3", '
            "amax_history_len=16)]")
    paths = _job(tmp_path, "accelerate launch --config_file acc.yaml train.py", args, yaml)
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace(
        "from accelerate import Accelerator",
        "from accelerate import Accelerator\nfrom accelerate.utils import TERecipeKwargs"))
    fired = _fired(paths)
    assert "FP8D-ACC-0012" in fired and "FP8D-ACC-0032" not in fired


@pytest.mark.parametrize("value", ["fp8\u202e", "FP8 ", "float8", "e4m3"])
def test_a_precision_accelerate_refuses_leaves_fp8_unknown(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           value: str) -> None:
    # Red team: Accelerator(mixed_precision='fp8\u202e') read as "FP8: no". accelerate refuses
    # anything but no / fp8 / fp16 / bf16 (after lower-casing) at start-up: not known, not "no".
    monkeypatch.chdir(tmp_path)
    paths = _job(tmp_path, "python train.py", f"mixed_precision={value!r}")
    report = preflight.check(paths, smoke=False, assume=ASSUME)
    fp8 = report.facts.get("intent.fp8")
    assert isinstance(fp8, Unknown) and "refuses" in fp8.reason


@pytest.mark.parametrize(("value", "expected"), [("FP8", True), ("Bf16", False), ("no", False)])
def test_precisions_accelerate_takes_in_any_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 value: str, expected: bool) -> None:
    monkeypatch.chdir(tmp_path)
    paths = _job(tmp_path, "python train.py", f"mixed_precision={value!r}")
    assert preflight.check(paths, smoke=False, assume=ASSUME).facts.get("intent.fp8") is expected


PLAIN = """from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    accelerator.print("training")


if __name__ == "__main__":
    main()
"""
FP8_YAML = "distributed_type: MULTI_GPU\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"


@pytest.mark.parametrize("paths", [("launch.sh",), ("launch.sh", "acc.yaml", "train.py"),
                                   ("train.py", "acc.yaml")])
def test_a_plain_accelerator_is_read_not_called_settingless(tmp_path: Path,
                                                           paths: tuple[str, ...]) -> None:
    """docsync's newcomer run: `Accelerator()` with every argument at its default, launched with
    the YAML that holds the settings, is the job's accelerate script (no FP8D-CFG-NOT-CONFIG)."""
    (tmp_path / "train.py").write_text(PLAIN)
    (tmp_path / "acc.yaml").write_text(FP8_YAML)
    (tmp_path / "launch.sh").write_text("accelerate launch --config_file acc.yaml train.py\n")
    report = preflight.check([str(tmp_path / p) for p in paths], smoke=False, assume=ASSUME)
    assert "FP8D-CFG-NOT-CONFIG" not in {f.rule_id for f in report.findings}
    read = read_paths([str(tmp_path / p) for p in paths])
    assert read.facts["config.accelerate.accelerator.built"] is True
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_accelerator_of_another_package_is_not_accelerate(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(PLAIN.replace("from accelerate import Accelerator",
                                                     "from mylib import Accelerator"))
    read = read_paths([str(tmp_path / "train.py")])
    assert "config.accelerate.accelerator.built" not in read.facts
