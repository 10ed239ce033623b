"""The versions a job pins in its own files (frameworks/nemo_images.py): the NeMo container it
names (nvcr.io/nvidia/nemo:25.09 -> Megatron-Bridge 0.1.0rc3, Megatron Core 0.14.0, ... as
Megatron-Bridge docs/releases/software-versions.md @ 067f987d lists them) or a pip pin, used by
preflight.environment for a package the judged machine lacks (--assume and what is installed
win), so Megatron-Bridge's version rules decide instead of "not installed here"."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.environment import pinned
from preflight.facts import Facts, Unknown
from preflight.frameworks.nemo_images import image_pins, pins_in_text


@pytest.mark.parametrize("image, release", [
    ("nvcr.io/nvidia/nemo:25.09", "25.09"),
    ("nvcr.io#nvidia/nemo:25.09.00", "25.09"),           # pyxis' registry#image form
    ("--container-image=/lustre/sqsh/nvidia+nemo+26.04.sqsh", "26.04"),  # enroot import
    ("CONTAINER=\"nvcr.io/nvidia/nemo:26.06\"", "26.06"),
    ("nvcr.io/nvidia/nemo:26.06.01", None),              # a patch tag may ship other versions
    ("nvcr.io/nvidia/nemo:25.11.nemotron_3_nano", None),  # a model's own build
    ("nvcr.io/nvidia/nemo:25.04.rc2", None),
    ("nvcr.io/nvidia/nemo:dev", None),
    ("nvcr.io/nvidia/pytorch:25.09-py3", None),
])
def test_image_pins(image: str, release: str | None) -> None:
    got = image_pins(image)
    assert (got[0] if got else None) == release


def test_the_release_notes_versions() -> None:
    got = image_pins("nvcr.io/nvidia/nemo:25.09")
    assert got is not None and got[1]["megatron-bridge"] == "0.1.0rc3"
    assert got[1]["megatron-core"] == "0.14.0"
    assert "megatron-core" not in image_pins("nvcr.io/nvidia/nemo:26.02")[1]   # main:0.16.0


def test_pins_in_text() -> None:
    text = ("# tested with nvcr.io/nvidia/nemo:26.04 too\n"
            "srun --container-image=nvcr.io#nvidia/nemo:25.09 bash -c '\n"
            "pip install megatron-core==0.14.0 && python train.py'\n")
    facts, prov = pins_in_text("run.sh", text)
    assert facts["config.pins.megatron-bridge"] == "0.1.0rc3"          # the comment is no pin
    assert facts["config.pins.megatron-core"] == "0.14.0"              # image and pip agree
    assert prov["config.pins.megatron-bridge"].line == 2
    facts, _ = pins_in_text("run.sh", text + "pip install megatron_bridge==0.2.0rc2\n")
    assert isinstance(facts["config.pins.megatron-bridge"], Unknown)     # two values: undecided


def test_hostile_text_is_bounded() -> None:
    facts, _ = pins_in_text("run.sh", "nvidia/nemo:25.09 " * 50_000 + "\n")
    assert facts["config.pins.megatron-bridge"] == "0.1.0rc3"
    facts, _ = pins_in_text("run.sh", "megatron-bridge==" + "9" * 10_000 + "\n" +
                            "\x00\xff" * 1000 + "nvidia/nemo:" + "2" * 5000)
    assert facts == {}                                  # an overlong version is no pin


def test_installed_and_assumed_win() -> None:
    facts = Facts({"config.pins.megatron-bridge": "0.1.0rc3", "config.pins.torch": "2.8.0",
                   "pkg.torch.version": "2.5.1"}, {"config.pins.megatron-bridge": "run.sh:2"})
    values, prov = pinned(facts, frozenset({"megatron-core"}))
    assert values == {"pkg.megatron-bridge.version": "0.1.0rc3"}
    assert prov["pkg.megatron-bridge.version"] == "run.sh:2"
    assert pinned(Facts({"config.pins.megatron-bridge": Unknown("two")}))[0] == {}


PERF = ("#!/bin/bash\nsrun --container-image={image} \\\n"
        "  python scripts/performance/setup_experiment.py -m deepseek -mr deepseek_v3 -g gb300 "
        "-c fp8_mx\n")


def _check(tmp_path: Path, image: str, extra: str = "", **assume: str) -> preflight.Report:
    (tmp_path / ".git").mkdir(exist_ok=True)
    run = tmp_path / "launch.sh"
    run.write_text(PERF.format(image=image) + extra)
    return preflight.check([str(run)], smoke=False, assume={"gpu": "GB300", **assume})


def test_the_container_decides_the_version_rules(tmp_path: Path) -> None:
    report = _check(tmp_path, "nvcr.io#nvidia/nemo:25.09")
    assert report.facts["pkg.megatron-bridge.version"] == "0.1.0rc3"
    assert "nemo 25.09 container" in report.facts.source("pkg.megatron-bridge.version").lower()
    assert "FP8D-MBR-0002" not in {u.rule_id for u in report.undetermined}
    assert "FP8D-MBR-0002" not in {f.rule_id for f in report.findings}     # rc3 has e4m3


def test_a_pip_pin_fires_and_assume_wins(tmp_path: Path) -> None:
    report = _check(tmp_path, "x", "pip install megatron-bridge==0.2.0rc2\n")
    assert "FP8D-MBR-0002" in {f.rule_id for f in report.findings}
    report = _check(tmp_path, "x", "pip install megatron-bridge==0.2.0rc2\n",
                    **{"pkg.megatron-bridge": "0.6.0"})
    assert "FP8D-MBR-0002" not in {f.rule_id for f in report.findings}
    report = _check(tmp_path, "nvcr.io/nvidia/nemo:dev")               # no pin: undetermined
    assert "FP8D-MBR-0002" in {u.rule_id for u in report.undetermined}
