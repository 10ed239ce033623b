"""OLMo-core read from its Python training scripts (fixtures/configs/olmo_core: the MXFP8 ladder
at df4de50c and OLMo2-7B at v2.5.0): TransformerTrainModuleConfig(float8_config=Float8Config(...)),
its torchao MX / float8 configs, compile and FSDP, the launch line's --train_module.* overrides;
hostile variants (a Float8Config built but never passed, decoys, conditions, **kwargs) are never
read as FP8 on; the OLMO rules on the real ladder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "olmo_core"
B200 = {"gpu": "B200", "pkg.torch": "2.9.1", "pkg.torchao": "0.15.0", "cuda.torch_build": "12.8",
        "pkg.ai2-olmo-core": "2.5.0"}
HEAD = """from olmo_core.config import DType
from olmo_core.distributed.parallel import DataParallelType
from olmo_core.float8 import AOFloat8LinearConfig, AOMXLinearConfig, Float8Config
from olmo_core.optim import AdamWConfig
from olmo_core.train.train_module import TransformerDataParallelConfig, TransformerTrainModuleConfig
"""


def _intent(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _script(tmp_path: Path, body: str, launch: str | None = None) -> Path:
    (tmp_path / "train.py").write_text(HEAD + body)
    if launch is None:
        return tmp_path / "train.py"
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + launch + "\n")
    return tmp_path / "run.sh"


def _module(float8: str, extra: str = "") -> str:
    return (f"{extra}\ncfg = TransformerTrainModuleConfig(rank_microbatch_size=8192, "
            f"max_sequence_length=4096, optim=AdamWConfig(lr=1e-3), compile_model=True,\n"
            f"    dp_config=TransformerDataParallelConfig(name=DataParallelType.hsdp),\n"
            f"    {float8})\n")


def test_mxfp8_ladder() -> None:
    intent, read = _intent(FIX / "ladder" / "run.sh")
    assert [k for _, k in read.files] == ["olmo_core", "olmo_core"]
    assert intent["fp8"][0] is True
    assert intent["backend"][0] == "torchao"
    assert intent["recipe"][0] == "mxfp8"
    assert intent["format"][0] == "e4m3"
    assert intent["compile"][0] is True
    assert intent["distributed"][0] == "fsdp2"
    assert intent["stack"][0] == ["olmo_core"]
    assert intent["recipe"][1].endswith("mxfp8_ladder.py:66")      # ao_mx=...
    facts = read.facts
    assert facts["config.olmo_core.float8_config.ao_mx"] == "mxfp8_cublas_rceil"
    assert facts["config.olmo_core.float8_config.ao_mx.scale_calculation_mode"] == "rceil"


def test_mxfp8_ladder_rules() -> None:
    run = str(FIX / "ladder" / "run.sh")
    ids = {f.rule_id for f in preflight.check([run], smoke=False, assume=B200).findings}
    assert "FP8D-OLMO-0003" in ids           # no kernel_preference: emulated MX GEMMs
    assert not ids & {"FP8D-HW-0001", "FP8D-HW-0004", "FP8D-TAO-0004", "FP8D-OLMO-0001",
                      "FP8D-OLMO-0002"}
    newer = {f.rule_id for f in preflight.check(
        [run], smoke=False, assume={**B200, "pkg.torchao": "0.16.0"}).findings}
    assert "FP8D-OLMO-0002" in newer
    older = {f.rule_id for f in preflight.check(
        [run], smoke=False, assume={**B200, "pkg.ai2-olmo-core": "2.4.0"}).findings}
    assert "FP8D-OLMO-0001" in older
    h100 = {f.rule_id for f in preflight.check(
        [run], smoke=False, assume={**B200, "gpu": "H100"}).findings}
    assert "FP8D-HW-0004" in h100            # "MX format training is only supported on SM100"


def test_official_script_leaves_fp8_off() -> None:
    intent, _ = _intent(FIX / "olmo2" / "OLMo2-7B.py")
    assert intent["fp8"][0] is False
    assert "OLMo2-7B.py:57" in intent["fp8"][1]
    assert intent["compile"][0] is True


@pytest.mark.parametrize("override, fp8", [
    ("--train_module.float8_config.enabled=true", True),
    ("--train_module.float8_config.enabled", True),        # no value: "true"
    ("--train_module.float8_config.enabled=yes", True),    # yaml.safe_load
    ("--train_module.float8_config.enabled=false", False),
    ("--launch.num_nodes=2", False),
])
def test_launch_line_override(tmp_path: Path, override: str, fp8: bool) -> None:
    job = tmp_path / "olmo2"
    shutil.copytree(FIX / "olmo2", job)
    (job / "run.sh").write_text(f"#!/bin/bash\ntorchrun --nproc-per-node=8 OLMo2-7B.py train "
                                f"r01 ai2/jupiter {override}\n")
    intent, _ = _intent(job / "run.sh")
    assert intent["fp8"][0] is fp8
    if fp8:
        assert intent["recipe"][0] == "tensorwise"


@pytest.mark.parametrize("setting", ["FP8=false\n", ""])
def test_launch_line_override_from_a_variable_is_unknown(tmp_path: Path, setting: str) -> None:
    job = tmp_path / "olmo2"
    shutil.copytree(FIX / "olmo2", job)
    (job / "run.sh").write_text("#!/bin/bash\n" + setting + "torchrun OLMo2-7B.py train r01 c "
                                "--train_module.float8_config.enabled=$FP8\n")
    intent, _ = _intent(job / "run.sh")
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and "$FP8" in fp8.reason


def test_many_launch_words_are_bounded(tmp_path: Path) -> None:
    job = tmp_path / "olmo2"
    shutil.copytree(FIX / "olmo2", job)
    words = " ".join(f"--trainer.x{i}={i}" for i in range(5000))
    (job / "run.sh").write_text("#!/bin/bash\ntorchrun OLMo2-7B.py train r01 c " + words +
                                " --train_module.float8_config.enabled=true\n")
    intent, _ = _intent(job / "run.sh")
    fp8 = intent["fp8"][0]            # past the bound: not read, and not taken for "no"
    assert isinstance(fp8, Unknown) and "were not read" in fp8.reason


def test_fixture_launch_line_turns_fp8_on() -> None:
    intent, _ = _intent(FIX / "olmo2" / "run.sh")
    assert intent["fp8"][0] is True and intent["backend"][0] == "torchao"


@pytest.mark.parametrize("float8, recipe", [
    ("float8_config=Float8Config(ao=AOFloat8LinearConfig.recommended())", "tensorwise"),
    ('float8_config=Float8Config(ao_recipe="rowwise")', "rowwise"),
    ("float8_config=Float8Config()", "tensorwise"),
    ("float8_config=Float8Config(enabled=True, ao_mx=AOMXLinearConfig())", "mxfp8"),
])
def test_float8_configs(tmp_path: Path, float8: str, recipe: str) -> None:
    intent, read = _intent(_script(tmp_path, _module(float8)))
    assert intent["fp8"][0] is True
    assert intent["recipe"][0] == recipe
    assert intent["distributed"][0] == "fsdp2"
    assert intent["seq_len"][0] == 4096
    if "recommended" in float8:
        assert read.facts["config.olmo_core.float8_config.ao.enable_fsdp_float8_all_gather"] is True


@pytest.mark.parametrize("body", [
    # defined but never used: the train module takes none
    _module("z_loss_multiplier=1e-5", "unused = Float8Config(enabled=True, "
                                      "ao_mx=AOMXLinearConfig.mxfp8_cublas_rceil())"),
    # in a comment and a string
    _module("# float8_config=Float8Config(enabled=True),\n    z_loss_multiplier=1e-5",
            'DOC = "float8_config=Float8Config(enabled=True)"'),
    # switched off
    _module("float8_config=Float8Config(enabled=False, ao_mx=AOMXLinearConfig())"),
    _module("float8_config=None"),
])
def test_decoys_do_not_turn_fp8_on(tmp_path: Path, body: str) -> None:
    intent, _ = _intent(_script(tmp_path, body))
    assert intent["fp8"][0] is False


@pytest.mark.parametrize("body, why", [
    ("import os\n" + "if os.environ.get('FP8'):\n    f8 = Float8Config(enabled=True)\n"
     "else:\n    f8 = None\n" + _module("float8_config=f8"), ""),
    ("import sys\n" + _module("float8_config=Float8Config(enabled=sys.argv[1] == 'fp8')"), ""),
    ("kw = dict(load())\n" + _module("**kw"), ""),
    ("f8 = Float8Config(enabled=True)\n", "no TransformerTrainModuleConfig"),
    # a second train module config in a function this file does not call (OLMo-core may: the
    # ladder's build_train_module is called by olmo_core.internal.ladder)
    (_module("z_loss_multiplier=1e-5", "def other():\n    return TransformerTrainModuleConfig("
             "rank_microbatch_size=1, max_sequence_length=1, optim=None, "
             "float8_config=Float8Config())\n"), "which one runs"),
])
def test_what_the_text_does_not_decide_is_unknown(tmp_path: Path, body: str, why: str) -> None:
    intent, _ = _intent(_script(tmp_path, body))
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and why in fp8.reason


def test_override_of_a_none_float8_config_is_unknown(tmp_path: Path) -> None:
    run = _script(tmp_path, _module("float8_config=None"),
                  "python train.py train r01 c --train_module.float8_config.enabled=true")
    intent, _ = _intent(run)
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and "ValueError" in fp8.reason


def test_not_olmo_core_without_its_imports(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(_module("float8_config=Float8Config()").replace(
        "TransformerTrainModuleConfig", "TrainModuleConfig"))
    read = read_paths([str(tmp_path / "train.py")], None)
    assert not any(n.startswith("config.olmo_core.") for n in read.facts)


def test_float8_api_of_another_release(tmp_path: Path) -> None:
    # v2.0.x's Float8Config(compile=..., scaling_type_*) on 2.1.0+, ao= on 2.0.1 (PR 228)
    old = _script(tmp_path, _module("float8_config=Float8Config(compile=True, enabled=True)"))
    intent, read = _intent(old)
    assert intent["fp8"][0] is True
    assert read.facts["config.olmo_core.float8_config.compile"] is True
    found = {f.rule_id for f in preflight.check([str(old)], smoke=False, assume={
        **B200, "pkg.ai2-olmo-core": "2.3.0"}).findings}
    assert "FP8D-OLMO-0004" in found
    new = _script(tmp_path, _module("float8_config=Float8Config(ao=AOFloat8LinearConfig())"))
    on_201 = {f.rule_id for f in preflight.check([str(new)], smoke=False, assume={
        **B200, "pkg.ai2-olmo-core": "2.0.1"}).findings}
    on_25 = {f.rule_id for f in preflight.check([str(new)], smoke=False, assume=B200).findings}
    assert "FP8D-OLMO-0004" in on_201 and "FP8D-OLMO-0004" not in on_25


@pytest.mark.parametrize("flag, fp8", [("        float8_enabled=True,\n", True), ("", False)])
def test_cookbook_train_module(tmp_path: Path, flag: str, fp8: bool) -> None:
    # reduced from src/scripts/train/OLMo3/OLMo3-7B-long-context.py l.54-60 @ v2.5.0
    (tmp_path / "train.py").write_text(
        "from olmo_core.internal import cookbook\n"
        "from olmo_core.train.train_module import TransformerTrainModuleConfig\n"
        "def build_config(cli_context, scheduler):\n"
        "    train_module_config: TransformerTrainModuleConfig = cookbook.configure_train_module(\n"
        "        max_sequence_length=65536,\n        rank_microbatch_size=65536,\n"
        "        learning_rate=1e-4,\n        scheduler=scheduler,\n" + flag +
        "        activation_memory_budget=0.5,\n    )\n    return train_module_config\n")
    intent, _ = _intent(tmp_path / "train.py")
    assert intent["fp8"][0] is fp8
    assert intent["compile"][0] is True and intent["distributed"][0] == "fsdp2"
    if fp8:
        assert intent["recipe"][0] == "tensorwise"
        assert intent["fp8"][1].endswith("train.py:9")


@pytest.mark.parametrize("value, fp8", [
    ("n", True), ("N", True), ("fAlSe", True), ("none", True), ("'false'x", True),
    ("0.0", False), ("[]", False), ("{}", False), ("'false'", False), ('"no"', False),
    ("''", False), ("[false]", True),
])
def test_launch_override_values_as_olmo_core_loads_them(tmp_path: Path, value: str,
                                                        fp8: bool) -> None:
    # redteam8: OLMo-core's _clean_opt (config.py l.352-362 @ v2.5.0) yaml.safe_loads the word
    # bash leaves (its quotes removed) and Float8Config tests `if not self.enabled`: `n` and
    # `fAlSe` are strings (on), `0.0`, `[]`, `'false'` off; a hand-made table read them otherwise
    job = tmp_path / "olmo2"
    shutil.copytree(FIX / "olmo2", job)
    (job / "run.sh").write_text("#!/bin/bash\ntorchrun --nproc-per-node=8 OLMo2-7B.py train r01 "
                                f"c --train_module.float8_config.enabled={value}\n")
    intent, _ = _intent(job / "run.sh")
    assert intent["fp8"][0] is fp8


def test_a_launch_override_yaml_refuses_stops_the_run(tmp_path: Path) -> None:
    job = tmp_path / "olmo2"
    shutil.copytree(FIX / "olmo2", job)
    (job / "run.sh").write_text("#!/bin/bash\ntorchrun OLMo2-7B.py train r01 c "
                                "--train_module.float8_config.enabled='[x'\n")
    intent, _ = _intent(job / "run.sh")
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and "safe_load" in fp8.reason
