"""Primus experiments on its TorchTitan and Megatron-Bridge backends (AMD-AGI/Primus v26.5.1:
examples/torchtitan/configs, examples/megatron_bridge/configs): presets composed section by
section as TorchTitan's settings, the FP8 switch TorchTitan's converters / Megatron-Bridge's
precision_config; MaxText said out of scope; presets named from a variable the launch script
sets read as Primus resolves them; hostile presets (cycles, ``..``, a huge YAML) Unknown or a
warning in bounded time, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from tests.cputime import cpu_seconds

TT = """work_group: ${{PRIMUS_TEAM:amd}}
exp_name: x
modules:
  pre_trainer:
    framework: torchtitan
    config: {config}
    model: {model}
    overrides:
      training:
        local_batch_size: 4
        seq_len: 8192
{extra}"""

MB = """modules:
  pre_trainer:
    framework: megatron_bridge
    config: pretrain_trainer.yaml
    model: qwen3_8b.yaml
    overrides:
      flavor: qwen3_8b_pretrain_config
      tensor_model_parallel_size: 2
      seq_length: 4096
{extra}"""


def _write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    folder = tmp_path / "examples" / "torchtitan" / "configs" / "MI355X"
    folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def _tt(tmp_path: Path, extra: str = "", model: str = "llama3.1_8B-fp8.yaml",
        config: str = "pre_trainer.yaml") -> Path:
    return _write(tmp_path, TT.format(config=config, model=model, extra=extra))


def _intent(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def test_torchtitan_fp8_model_preset_asks_fp8_from_the_pinned_converters(tmp_path: Path) -> None:
    intent, read = _intent(_tt(tmp_path))
    assert intent["fp8"][0] is True
    assert "models/torchtitan/llama3.1_8B-fp8.yaml#L9" in intent["fp8"][1]
    assert intent["recipe"][0] == "tensorwise"           # quantize.yaml recipe_name: null
    assert intent["seq_len"][0] == 8192 and intent["micro_batch"][0] == 4
    assert "torchtitan" in intent["stack"][0]
    facts = read.facts
    assert facts["config.torchtitan.model.converters"] == ["primus_turbo", "quantize.linear.float8"]
    assert facts["config.torchtitan.args_of"] == "primus"
    assert facts["config.kinds"] == ["primus"]
    assert not any(k.startswith("config.megatron.") for k in facts)


def test_torchtitan_bf16_preset_is_no_fp8_not_a_fork_converter(tmp_path: Path) -> None:
    # `primus_turbo` is Primus's own converter (attention), not an unknown fork's
    fp8 = _intent(_tt(tmp_path, model="llama3.1_8B.yaml"))[0]["fp8"]
    assert fp8[0] is False


def test_torchtitan_overrides_win_section_by_section(tmp_path: Path) -> None:
    extra = ("      model:\n        converters: [quantize.linear.mx]\n"
             "      quantize:\n        linear:\n          float8:\n            recipe_name: rowwise\n")
    path = _tt(tmp_path, extra, model="llama3.1_8B.yaml")
    intent, read = _intent(path)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert read.facts["config.torchtitan.model.flavor"] == "8B"         # kept from the preset
    assert read.facts["config.torchtitan.quantize.linear.mx.recipe_name"] == "mxfp8_cublas"
    assert read.provenance["config.torchtitan.quantize.linear.float8.recipe_name"] == \
        f"{path}:17"


def test_primus_turbo_fp8_converter_and_fp8_attention(tmp_path: Path) -> None:
    extra = ("      model:\n        converters: [primus_turbo, primus_turbo_fp8]\n"
             "      primus_turbo:\n        enable_attention_float8: true\n")
    intent, _ = _intent(_tt(tmp_path, extra, model="llama3.1_8B.yaml"))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "tensorwise"
    assert intent["fp8_attention"][0] is True
    assert intent.get("backend", (None,))[0] not in ("torchao", "te")


def test_torchtitan_unknown_presets_leave_fp8_unknown(tmp_path: Path) -> None:
    fp8 = _intent(_tt(tmp_path, model="my_model.yaml"))[0]["fp8"]
    assert isinstance(fp8[0], Unknown) and "my_model.yaml" in fp8[0].reason
    assert isinstance(_intent(_tt(tmp_path, config="mine.yaml", model="llama3.1_8B.yaml"))[0][
        "fp8"][0], Unknown)


def test_torchtitan_presets_the_job_holds_are_read(tmp_path: Path) -> None:
    models = tmp_path / "primus" / "configs" / "models" / "torchtitan"
    models.mkdir(parents=True)
    (models / "mine.yaml").write_text("model:\n  name: llama3\n  flavor: 8B\n"
                                      "  converters:\n    - quantize.linear.float8\n")
    intent, _ = _intent(_tt(tmp_path, model="mine.yaml"))
    assert intent["fp8"][0] is True and str(models / "mine.yaml") in intent["fp8"][1]


@pytest.mark.parametrize(("name", "expect"), [
    ("bf16_with_fp8_current_scaling_mixed", True), ("bf16_mixed", False),
    ("bf16_with_mxfp4_mixed", True)])
def test_bridge_precision_config(tmp_path: Path, name: str, expect: bool) -> None:
    intent, read = _intent(_write(tmp_path, MB.format(extra=f"      precision_config: {name}\n")))
    assert intent["fp8"][0] is expect
    assert intent["tp"][0] == 2 and intent["seq_len"][0] == 4096
    assert read.facts["config.megatron_bridge.args_of"] == "primus"
    assert read.facts["config.megatron_bridge.mixed_precision"] == name      # MBR rules' fact
    assert "megatron_bridge" in intent["stack"][0]
    if name.startswith("bf16_with_fp8"):
        assert intent["recipe"][0] == "tensorwise" and intent["format"][0] == "hybrid"


def test_bridge_without_precision_config_or_unknown_name_is_unknown(tmp_path: Path) -> None:
    assert isinstance(_intent(_write(tmp_path, MB.format(extra="")))[0]["fp8"][0], Unknown)
    fp8 = _intent(_write(tmp_path, MB.format(extra="      precision_config: fp9_magic\n")))[0]
    assert isinstance(fp8["fp8"][0], Unknown)


def test_maxtext_is_out_of_scope_with_a_finding(tmp_path: Path) -> None:
    path = _write(tmp_path, TT.format(config="pre_trainer.yaml", model="llama3_8B.yaml",
                                      extra="").replace("torchtitan", "maxtext"))
    intent, read = _intent(path)
    assert isinstance(intent["fp8"][0], Unknown) and "MaxText" in intent["fp8"][0].reason
    assert [(p.code, p.line) for p in read.problems] == [("unknown_framework", 5)]


RUN = ("#!/bin/bash\n{env}./primus-cli direct -- train pretrain --config "
       "examples/torchtitan/configs/MI355X/exp.yaml{args}\n")


@pytest.mark.parametrize(("env", "expect"), [
    ("export MODEL=llama3.1_8B-fp8\n", True),           # the script's preset
    ("", False),                                        # the default
    ("MODEL=llama3.1_8B-fp8\n", False),                 # never exported: the default
    ("export MODEL=$(cat model.txt)\n", None),          # known only at run time
    ("export MODEL=../../../../etc/passwd\n", None),    # leaves primus/configs
    ("export MODEL=../torchtitan/llama3.1_8B-fp8\n", True)])   # stays inside: Primus reads it
def test_model_preset_named_from_the_script(tmp_path: Path, env: str, expect: bool | None
                                            ) -> None:
    _tt(tmp_path, model="${MODEL:llama3.1_8B}.yaml")
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(env=env, args=""))
    fp8 = _intent(run)[0]["fp8"][0]
    assert fp8 is expect if expect is not None else isinstance(fp8, Unknown)


def test_torchtitan_launch_overrides_are_torchtitan_settings(tmp_path: Path) -> None:
    _tt(tmp_path, model="llama3.1_8B.yaml")
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(env="", args=" --model.converters quantize.linear.float8"))
    intent, read = _intent(run)
    assert intent["fp8"][0] is True and intent["fp8"][1] == f"{run}:2"
    assert not any(k.startswith("config.megatron.") for k in read.facts)


def test_megatron_model_preset_named_from_the_script(tmp_path: Path) -> None:
    folder = tmp_path / "examples" / "megatron" / "configs" / "MI355X"
    folder.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (folder / "exp.yaml").write_text(
        "modules:\n  pre_trainer:\n    framework: megatron\n    config: ${CONFIG:pre_trainer}"
        ".yaml\n    model: ${MODEL:llama3.1_8B}.yaml\n    overrides:\n      fp8: hybrid\n")
    models = tmp_path / "primus" / "configs" / "models" / "megatron"
    models.mkdir(parents=True)
    (models / "moe.yaml").write_text("num_experts: 64\nmoe_router_topk: 6\n")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nexport MODEL=moe\nexport CONFIG=sft_trainer\n./primus-cli "
                   "direct -- train pretrain --config examples/megatron/configs/MI355X/exp.yaml\n")
    intent, read = _intent(run)
    assert intent["moe.experts"][0] == 64 and intent["fp8"][0] is True
    assert "sft_trainer.yaml" in read.provenance["config.megatron.seq_length"]


def test_hostile_torchtitan_presets(tmp_path: Path) -> None:
    modules = tmp_path / "primus" / "configs" / "modules" / "torchtitan"
    modules.mkdir(parents=True)
    pre = modules / "pre_trainer.yaml"
    path = _tt(tmp_path)
    pre.write_text("extends:\n  - pre_trainer.yaml\nquantize:\n  linear: {}\n")   # a cycle
    intent, read = _intent(path)
    assert intent["fp8"][0] is True                  # the model preset's converter still asks
    assert any(p.level == "warning" and "extends itself" in p.message for p in read.problems)
    pre.write_text("extends:\n  - ../../../../../../etc/passwd\n")
    assert _intent(path)[0]["fp8"][0] is True
    pre.write_text("a:\n" + "".join("  " * i + f"  k{i}:\n" for i in range(1, 60)) + "  " * 61
                   + "v: 1\n")                       # deeper than any section
    assert _intent(path)[0]["fp8"][0] is True

def test_huge_overrides_are_bounded_and_never_read_as_no(tmp_path: Path) -> None:
    # 4,000 sections of one setting each: more settings than are kept as facts
    huge = "".join(f"      s{i}:\n        k{i}: {i}\n" for i in range(4000))
    start = cpu_seconds()
    intent, read = _intent(_tt(tmp_path, huge, model="llama3.1_8B.yaml"))
    assert cpu_seconds() - start < 40                # ~1.5 s on a quiet box
    assert isinstance(intent["fp8"][0], Unknown)           # not "no": settings were dropped
    assert isinstance(read.facts["config.torchtitan.unread_args"], Unknown)
    converter = "      model:\n        converters: [float8]\n"
    assert _intent(_tt(tmp_path, converter + huge, model="llama3.1_8B.yaml"))[0]["fp8"][0]
    intent, read = _intent(_tt(tmp_path, huge * 3))        # past the parser's node bound
    assert isinstance(intent["fp8"][0], Unknown) and read.problems


def test_torchtitan_override_reads_the_scripts_variable(tmp_path: Path) -> None:
    extra = "      model:\n        converters: ${CONVERTERS:primus_turbo}\n"
    _tt(tmp_path, extra, model="llama3.1_8B.yaml")
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(env="export CONVERTERS=quantize.linear.float8\n", args=""))
    assert _intent(run)[0]["fp8"][0] is True
    run.write_text(RUN.format(env="", args=""))
    assert _intent(run)[0]["fp8"][0] is False
    run.write_text(RUN.format(env="export CONVERTERS=\"$1\"\n", args=""))
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)


def test_bridge_precision_config_mapping_is_unknown(tmp_path: Path) -> None:
    extra = "      precision_config:\n        fp8: hybrid\n"
    fp8 = _intent(_write(tmp_path, MB.format(extra=extra)))[0]["fp8"]
    assert isinstance(fp8[0], Unknown) and "mapping" in fp8[0].reason


def test_backend_named_from_the_script_is_unknown(tmp_path: Path) -> None:
    _write(tmp_path, TT.format(config="pre_trainer.yaml", model="llama3.1_8B.yaml", extra="")
           .replace("framework: torchtitan", "framework: ${BACKEND:torchtitan}"))
    run = tmp_path / "run.sh"
    run.write_text(RUN.format(env="export BACKEND=megatron\n", args=""))
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)
    run.write_text(RUN.format(env="export BACKEND=torchtitan\n", args=""))
    assert _intent(run)[0]["fp8"][0] is False
