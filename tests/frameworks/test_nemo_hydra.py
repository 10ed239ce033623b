"""A NeMo 1.x ``@hydra_runner`` app in the job read through its composed config, ``${oc.env:...}``
resolved from the launch environment (frameworks/nemo_hydra.py, frameworks/nemo_omegaconf.py).

Faithful reduction of mlcommons/training_results_v5.1 @ 441d65f4445cd59687466533fd9f55399136e7a4,
AMD/benchmarks/llama2_70b_lora/implementations/MI325X_EPYC_9575F_pytorch_llama2_70b/: src/train.py
l.49, l.104-105 (``@hydra_runner(config_path="conf", config_name="megatron_gpt_peft_tuning_config")``),
src/conf/megatron_gpt_peft_tuning_config.yaml l.1-2 (the optional ``tp_overlap@...`` default with
an ``${oc.env:...}`` option) and its ``model:`` Transformer Engine block, run_and_time.sh (torchrun
src/train.py), config_MI325X_1x8x1.sh (``export FP8=True``, ``FP8_AMAX_HISTORY=4``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_TRAIN = '''\
from nemo.core.config import hydra_runner
from omegaconf.omegaconf import OmegaConf


@hydra_runner(config_path="conf", config_name="megatron_gpt_peft_tuning_config")
def main(cfg) -> None:
    trainer = build(cfg)


if __name__ == "__main__":
    main()
'''
_YAML = '''\
defaults:
  - optional tp_overlap@model.ub_tp_comm_overlap_cfg: ${oc.env:GPU_ARCH,h}100tp${oc.env:TP}mbs${oc.env:MBS}

name: megatron_gpt_peft_lora_tuning

trainer:
  devices: ${oc.decode:${oc.env:DGXNGPU,8}}
  num_nodes: ${oc.decode:${oc.env:DGXNNODES,1}}
  precision: ${oc.decode:${oc.env:PRECISION,bf16-mixed}}

exp_manager:
  exp_dir: "/results"

model:
  mcore_gpt: True
  tensor_model_parallel_size: ${oc.decode:${oc.env:TP,1}}
  megatron_amp_O2: True
  global_batch_size: ${floor_div:${multiply:${oc.decode:${oc.env:MINIBS,1}},${trainer.devices}},1}
  transformer_engine: ${oc.decode:${oc.env:TRANSFORMER_ENGINE,True}}
  fp8: ${oc.decode:${oc.env:FP8,False}}
  fp8_params: ${oc.decode:${oc.env:FP8,False}}
  fp8_hybrid: ${oc.decode:${oc.env:FP8_HYBRID,True}}
  fp8_amax_history_len: ${oc.decode:${oc.env:FP8_AMAX_HISTORY,128}}
  fp8_amax_compute_algo: ${oc.env:FP8_AMAX_ALGO,most_recent}
  fp8_e4m3: ${oc.decode:${oc.env:FP8_E4M3,False}}
'''


def _job(tmp_path: Path, launch: str, yaml: str = _YAML, train: str = _TRAIN) -> Path:
    (tmp_path / "src" / "conf").mkdir(parents=True)
    (tmp_path / "src" / "train.py").write_text(train)
    (tmp_path / "src" / "conf" / "megatron_gpt_peft_tuning_config.yaml").write_text(yaml)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + launch)
    return tmp_path / "run.sh"


def _read(run: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    read = read_paths([str(run)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return dict(read.facts), dict(read.provenance), dict(values)


def test_fp8_from_the_launch_environment(tmp_path: Path) -> None:
    facts, prov, values = _read(_job(tmp_path, "export FP8=True\nexport FP8_AMAX_HISTORY=4\n"
                                     "torchrun --nproc_per_node=8 src/train.py\n"))
    assert facts["config.nemo.model.fp8"] is True
    assert facts["config.nemo.model.fp8_amax_history_len"] == 4
    assert facts["config.nemo.model.fp8_amax_compute_algo"] == "most_recent"
    assert facts["config.nemo.trainer.precision"] == "bf16-mixed"
    assert prov["config.nemo.model.fp8"].endswith("megatron_gpt_peft_tuning_config.yaml:20")
    assert values["intent.fp8"] is True
    assert values["intent.format"] == "hybrid"
    assert values["intent.recipe"] == "delayed"
    assert values["intent.fp8_params"] is True
    # a resolver NeMo registers in code is not evaluated
    assert isinstance(facts["config.nemo.model.global_batch_size"], Unknown)


def test_bf16_control_is_quiet(tmp_path: Path) -> None:
    _, _, values = _read(_job(tmp_path, "export FP8=False\ntorchrun src/train.py\n"))
    assert values["intent.fp8"] is False
    _, _, unset = _read(_job(tmp_path / "d", "torchrun src/train.py\n"))   # the default False
    assert unset["intent.fp8"] is False


def test_through_a_called_script(tmp_path: Path) -> None:
    run = _job(tmp_path, "export FP8=1\nbash run_and_time.sh\n")
    (tmp_path / "run_and_time.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node=8 "
                                              "src/train.py\n")
    _, _, values = _read(run)
    assert values["intent.fp8"] is True


def test_sourced_file_leaves_fp8_unknown(tmp_path: Path) -> None:
    # a sourced file whose exports the text does not show in plain lines (`set -a`): Unknown
    run = _job(tmp_path, "set -a\nsource config.sh\nset +a\ntorchrun src/train.py\n")
    (tmp_path / "config.sh").write_text("FP8=True\n")
    facts, _, values = _read(run)
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_plainly_sourced_exports_reach_the_hydra_app(tmp_path: Path) -> None:
    # shell19: a `source` that always runs, of a job file with plain top-level exports, is followed
    run = _job(tmp_path, "source config.sh\ntorchrun src/train.py\n")
    (tmp_path / "config.sh").write_text("export FP8=True\n")
    facts, _, values = _read(run)
    assert facts["config.nemo.model.fp8"] is True and values["intent.fp8"] is True


def test_env_without_default_unset_is_unknown(tmp_path: Path) -> None:
    yaml = _YAML.replace("${oc.decode:${oc.env:FP8,False}}", "${oc.decode:${oc.env:FP8}}")
    facts, _, values = _read(_job(tmp_path, "torchrun src/train.py\n", yaml))
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_undecoded_env_text_is_not_a_bool(tmp_path: Path) -> None:
    # oc.env gives the text "False": a non-empty string, true where NeMo tests it
    yaml = _YAML.replace("fp8: ${oc.decode:${oc.env:FP8,False}}", "fp8: ${oc.env:FP8}")
    facts, _, values = _read(_job(tmp_path, "export FP8=False\ntorchrun src/train.py\n", yaml))
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert values["intent.fp8"] is not False


def test_cycle_and_nesting_are_bounded(tmp_path: Path) -> None:
    yaml = _YAML.replace("fp8: ${oc.decode:${oc.env:FP8,False}}", "fp8: ${model.fp8_params}") \
        .replace("fp8_params: ${oc.decode:${oc.env:FP8,False}}", "fp8_params: ${model.fp8}")
    facts, _, values = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n", yaml))
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)
    deep = "${oc.decode:" * 200 + "${oc.env:FP8,False}" + "}" * 200
    yaml = _YAML.replace("${oc.decode:${oc.env:FP8,False}}\n  fp8_params", deep + "\n  fp8_params")
    facts, _, values = _read(_job(tmp_path / "deep", "export FP8=True\ntorchrun src/train.py\n",
                                  yaml))
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_not_a_nemo_app_is_left_alone(tmp_path: Path) -> None:
    train = _TRAIN.replace("from nemo.core.config import hydra_runner", "import hydra") \
        .replace("@hydra_runner(", "@hydra.main(version_base=None, ")
    facts, _, _ = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n", train=train))
    assert not any(k.startswith("config.nemo.") for k in facts)


def test_composition_failure_is_unknown_not_no(tmp_path: Path) -> None:
    yaml = "defaults:\n  - missing_group: x\n" + _YAML.split("\n", 2)[2]
    facts, _, values = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n", yaml))
    assert isinstance(facts["config.nemo.compose"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_optional_group_with_env_option(tmp_path: Path) -> None:
    # no tp_overlap folder: Hydra skips the optional entry (the real job); a folder there: the
    # option (${oc.env:...}) would pick a file, not read here, so the config is not known
    _, _, values = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n"))
    assert values["intent.fp8"] is True
    run = _job(tmp_path / "g", "export FP8=True\ntorchrun src/train.py\n")
    (tmp_path / "g" / "src" / "conf" / "tp_overlap").mkdir()
    (tmp_path / "g" / "src" / "conf" / "tp_overlap" / "h100tp1mbs1.yaml").write_text("a: 1\n")
    facts, _, values = _read(run)
    assert isinstance(facts["config.nemo.compose"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)
