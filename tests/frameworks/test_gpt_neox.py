"""GPT-NeoX read from its YAML configs and ``deepy.py train.py`` launch lines
(fixtures/configs/gpt_neox: configs/1-3B-transformer-engine.yml and configs/local_setup.yml at
EleutherAI/gpt-neox ea7aefd8, launched as its README does): FP8 only through ``te_fp8_mha``,
the ``te_fp8_*`` recipe fields alone inert; keys with ``-``; config names without ``.yml``;
``-d`` / ``--conf_dir``; hostile values and launch lines; FP8D-NEOX-0001."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight import frameworks
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "gpt_neox"
H100 = {"gpu": "H100", "pkg.torch": "2.9.1", "pkg.transformer-engine": "2.9.0",
        "pkg.deepspeed": "0.16.0", "cuda.torch_build": "12.8"}


def _intent(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, launch: str, te_config: str | None = None) -> Path:
    shutil.copytree(FIX / "configs", tmp_path / "configs")
    if te_config is not None:
        (tmp_path / "configs" / "1-3B-transformer-engine.yml").write_text(te_config)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + launch + "\n")
    return tmp_path / "run.sh"


def _fp8_on(old: str = '"te_fp8_mha": false', new: str = '"te_fp8_mha": true') -> str:
    text = (FIX / "configs" / "1-3B-transformer-engine.yml").read_text()
    assert old in text
    return text.replace(old, new)


def test_readme_launch_of_the_te_config() -> None:
    intent, read = _intent(FIX / "run.sh")
    assert sorted(Path(p).name for p, k in read.files if k == "gpt_neox" and
                  p.endswith(".yml")) == ["1-3B-transformer-engine.yml", "local_setup.yml"]
    assert intent["fp8"][0] is False          # te_fp8_* set, te_fp8_mha false: inert
    assert intent["fp8"][1].endswith("1-3B-transformer-engine.yml:31")
    assert intent["precision"][0] == "fp16"   # the DeepSpeed fp16 block
    assert intent["tp"][0] == 1
    assert intent["distributed"][0] == "deepspeed"
    assert intent["seq_len"][0] == 2048


def test_the_real_config_is_gpt_neox_not_another_trainer() -> None:
    for name in ("1-3B-transformer-engine.yml", "local_setup.yml"):
        kind, _ = frameworks.detect("yaml", parse_yaml(
            (FIX / "configs" / name).read_text()).data)
        assert kind == "gpt_neox"


@pytest.mark.parametrize("launch", [
    "python ./deepy.py train.py -d configs 1-3B-transformer-engine local_setup",
    "python3 deepy.py train.py --conf_dir=configs 1-3B-transformer-engine.yml local_setup.yml",
    "./deepy.py train.py configs/1-3B-transformer-engine.yml configs/local_setup.yml",
    "CONF=configs\npython deepy.py train.py -d $CONF 1-3B-transformer-engine.yml local_setup",
])
def test_fp8_attention_asked(tmp_path: Path, launch: str) -> None:
    intent, _ = _intent(_job(tmp_path, launch, _fp8_on()))
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "te"
    assert intent["recipe"][0] == "delayed"
    assert intent["format"][0] == "hybrid"
    assert intent["fp8_attention"][0] is True


def test_hyphenated_keys_are_neox_args_names(tmp_path: Path) -> None:
    text = _fp8_on(new='"te-fp8-mha": true').replace('"te_fp8_format": "hybrid"',
                                                       '"te-fp8-format": "e4m3"')
    intent, _ = _intent(_job(tmp_path, "python deepy.py train.py -d configs "
                             "1-3B-transformer-engine local_setup", text))
    assert intent["fp8"][0] is True
    assert intent["format"][0] == "e4m3"


@pytest.mark.parametrize("value", ['"true"', "1", "[true]", "{a: 1}", "null"])
def test_a_value_neox_args_refuses_is_unknown(tmp_path: Path, value: str) -> None:
    intent, _ = _intent(_job(tmp_path, "python deepy.py train.py -d configs "
                             "1-3B-transformer-engine local_setup",
                             _fp8_on(new=f'"te_fp8_mha": {value}')))
    assert isinstance(intent["fp8"][0], Unknown)


@pytest.mark.parametrize("launch", [
    "python deepy.py train.py -d $UNSET 1-3B-transformer-engine local_setup",
    "python deepy.py train.py $CONFIGS",
])
def test_configs_known_only_at_run_time_are_not_read_as_no_fp8(tmp_path: Path,
                                                              launch: str) -> None:
    intent, _ = _intent(_job(tmp_path, launch, _fp8_on()))
    assert intent["fp8"][0] is not False


@pytest.mark.parametrize("launch", [
    "# python deepy.py train.py -d configs 1-3B-transformer-engine local_setup",
    "python deepy.py generate.py -d configs 1-3B-transformer-engine local_setup",
    "echo python deepy.py train.py -d configs 1-3B-transformer-engine local_setup",
])
def test_not_a_training_launch(tmp_path: Path, launch: str) -> None:
    intent, _ = _intent(_job(tmp_path, launch, _fp8_on()))
    assert intent["fp8"][0] is not True


def test_many_config_words_are_bounded(tmp_path: Path) -> None:
    launch = "python deepy.py train.py " + " ".join(f"c{i}.yml" for i in range(5000))
    _, read = _intent(_job(tmp_path, launch))
    assert len([k for _, k in read.files if k == "gpt_neox"]) <= 32


def test_rule_on_fp8_attention(tmp_path: Path) -> None:
    run = str(_job(tmp_path, "python deepy.py train.py -d configs 1-3B-transformer-engine "
                   "local_setup", _fp8_on()))
    findings = preflight.check([run], smoke=False, assume=H100).findings
    hit = [f for f in findings if f.rule_id == "FP8D-NEOX-0001"]
    assert hit and hit[0].location is not None
    assert hit[0].location.path.endswith("1-3B-transformer-engine.yml")
    quiet = {f.rule_id for f in preflight.check([str(FIX / "run.sh")], smoke=False,
                                                  assume=H100).findings}
    assert "FP8D-NEOX-0001" not in quiet
    assert not {i for i in quiet if i.startswith(("FP8D-TE-", "FP8D-HW-"))}
