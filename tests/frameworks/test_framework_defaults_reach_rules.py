"""What a framework does with a setting the job leaves out, or hands on at run time, reaches the
rules (held-out benchmark, 2026-11-27); each case on a job of our own, whole checks:

- Megatron-SWIFT's ``merge_lora`` defaults to ``save_safetensors`` (v3.10.0+, True from v3.12.0:
  swift/megatron/arguments/megatron_args.py l.871-872 at v4.5.2): LoRA trained in FP8 with
  safetensors output is merged into FP8 weights (FP8D-SWIFT-0001) without ``--merge_lora``.
- torchtitan compiles the model only with "model" in ``compile.components`` (v0.2.0
  models/llama3/infra/parallelize.py l.94-110): ``components = ["loss"]`` runs float8 eager
  (FP8D-TT-0006).
- LLaMA-Factory >= 0.9.4 puts ``ACCELERATE_MIXED_PRECISION=fp8`` in the training process's
  environment and builds no recipe handler for a non-TE backend (train/fp8_utils.py at v0.9.5):
  under DeepSpeed with accelerate < 1.11 nothing is converted (FP8D-ACC-0001).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

H100 = {"gpu": "H100", "pkg.torch": "2.9.1+cu128"}


def _outcome(paths: list[Path], assume: dict[str, str], rule: str) -> str:
    report = preflight.check([str(p) for p in paths], smoke=False, assume={**H100, **assume})
    if rule in {f.rule_id for f in report.findings}:
        return "fire"
    if rule in {u.rule_id for u in report.undetermined}:
        return "undetermined"
    return "quiet"


def _swift(tmp_path: Path, *flags: str) -> Path:
    script = tmp_path / "lora.sh"
    script.write_text("#!/bin/bash\nNPROC_PER_NODE=8 \\\nmegatron sft \\\n"
                      "    --model Qwen/Qwen3-8B \\\n    --train_type lora \\\n"
                      "    --fp8_format hybrid \\\n    --fp8_recipe delayed \\\n" +
                      "".join(f"    {f} \\\n" for f in flags) + "    --output_dir out\n")
    return script


SWIFT = {"pkg.megatron-core": "0.14.0", "pkg.transformer-engine": "2.9.0"}


@pytest.mark.parametrize("flags,version,expect", [
    (("--save_safetensors true",), "3.11.0", "fire"),     # written: merge_lora follows it
    ((), "4.5.2", "fire"),                                # default True from 3.12
    ((), "3.12.0", "fire"),
    ((), "3.11.0", "quiet"),                              # default False in 3.10-3.11
    (("--save_safetensors false",), "4.5.2", "quiet"),
    (("--save_safetensors true", "--merge_lora false"), "4.5.2", "quiet"),
    ((), None, "undetermined"),                           # only the version decides
])
def test_swift_merge_lora_default(tmp_path: Path, flags: tuple[str, ...], version: str | None,
                                  expect: str) -> None:
    assume = {**SWIFT, **({"pkg.ms-swift": version} if version else {})}
    assert _outcome([_swift(tmp_path, *flags)], assume, "FP8D-SWIFT-0001") == expect


def test_swift_merge_after_training_on_bf16_weights_is_not_reported(tmp_path: Path) -> None:
    script = _swift(tmp_path, "--save_safetensors true", "--merge_lora false")
    script.write_text(script.read_text() + "\nmegatron export --model Qwen/Qwen3-8B --adapters "
                      "out/ckpt --to_hf true --merge_lora true --output_dir merged\n")
    assert _outcome([script], {**SWIFT, "pkg.ms-swift": "4.5.2"}, "FP8D-SWIFT-0001") == "quiet"


TT = {"pkg.torchtitan": "0.2.2", "pkg.torchao": "0.14.1"}
TOML = """[model]
name = "llama3"
flavor = "8B"
converters = ["quantize.linear.float8"]

[compile]
enable = true
{components}
[training]
local_batch_size = 1
seq_len = 8192
"""


@pytest.mark.parametrize("components,expect", [
    ('components = ["loss"]\n', "fire"),
    ('components = ["model", "loss"]\n', "quiet"),
    ("", "quiet"),                                        # default ["model", "loss"]
])
def test_torchtitan_float8_with_the_loss_compiled_only(tmp_path: Path, components: str,
                                                       expect: str) -> None:
    toml = tmp_path / "train.toml"
    toml.write_text(TOML.format(components=components))
    assert _outcome([toml], TT, "FP8D-TT-0006") == expect


REGISTRY = '''
from torchtitan.components.quantization.float8 import Float8LinearConverter
from torchtitan.config import CompileConfig, TrainingConfig
from torchtitan.protocols.model_converter import ModelConvertersContainer
from torchtitan.trainer import Trainer

from . import model_registry


def llama3_8b_float8_loss() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        model_converters=ModelConvertersContainer.Config(
            converters=[Float8LinearConverter.Config(filter_fqns=["output"])],
        ),
        training=TrainingConfig(local_batch_size=1, seq_len=8192),
        compile=CompileConfig(enable=True, components=["loss"]),
    )


def llama3_8b_float8_model() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        model_converters=ModelConvertersContainer.Config(
            converters=[Float8LinearConverter.Config(filter_fqns=["output"])],
        ),
        training=TrainingConfig(local_batch_size=1, seq_len=8192),
        compile=CompileConfig(enable=True, components=["model", "loss"]),
    )
'''


def test_torchtitan_python_config_components(tmp_path: Path) -> None:
    registry = tmp_path / "torchtitan" / "models" / "llama3" / "config_registry.py"
    registry.parent.mkdir(parents=True)
    registry.write_text(textwrap.dedent(REGISTRY))
    loss = f"{registry}::llama3_8b_float8_loss"
    assert _outcome([Path(loss)], TT, "FP8D-TT-0006") == "fire"
    assert _outcome([Path(f"{registry}::llama3_8b_float8_model")], TT, "FP8D-TT-0006") == "quiet"
    # the whole registry: the configs differ on components, so whether the model compiles is
    # not known (never "compiled")
    read = read_paths([str(registry)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.compile"], Unknown)
    assert _outcome([registry], TT, "FP8D-TT-0006") == "undetermined"


LF_YAML = """model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: sft
do_train: true
finetuning_type: full
template: llama3
cutoff_len: 1024
output_dir: saves/fp8
per_device_train_batch_size: 1
bf16: true
fp8: true
{backend}deepspeed: ds_z3.json
"""
DS = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
      "zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}
LF = {"pkg.llamafactory": "0.9.5", "pkg.torchao": "0.14.1", "pkg.deepspeed": "0.17.6",
      "pkg.transformers": "4.57.1", "pkg.transformer-engine": "2.9.0"}


@pytest.mark.parametrize("backend,accelerate,expect", [
    ("fp8_backend: torchao\n", "1.10.1", "fire"),
    ("", "1.10.1", "fire"),                               # auto: torchao, no handler either
    ("fp8_backend: torchao\n", "1.11.0", "quiet"),        # PR 3688 keeps fp8 under DeepSpeed
    ("fp8_backend: te\n", "1.10.1", "quiet"),             # te: mixed_precision + handler in code
])
def test_llamafactory_fp8_under_deepspeed_reaches_accelerates_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, accelerate: str,
        expect: str) -> None:
    (tmp_path / "ds_z3.json").write_text(json.dumps(DS))
    yaml = tmp_path / "sft.yaml"
    yaml.write_text(LF_YAML.format(backend=backend))
    monkeypatch.chdir(tmp_path)
    assert _outcome([yaml], {**LF, "pkg.accelerate": accelerate}, "FP8D-ACC-0001") == expect
    read = read_paths([str(yaml)])
    if "te" not in backend:
        # the fact is at the line that makes it: fp8_backend, else fp8
        assert read.facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"
        assert read.provenance["env.ACCELERATE_MIXED_PRECISION"] == \
            f"{yaml}:{11 if backend else 10}"


def test_a_job_stated_environment_variable_leaves_a_replay_with_other_configs(
        tmp_path: Path) -> None:
    from preflight.snapshot import load

    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({
        "schema_version": "1.0", "tool": "fp8-doctor", "created": "2026-11-27T00:00:00Z",
        "inputs": [], "probes": [], "findings": [],
        "facts": {"env.ACCELERATE_MIXED_PRECISION": "fp8", "env.NVTE_DEBUG": "1",
                  "env.ACCELERATE_FP8_BACKEND": "TE", "config.llamafactory.fp8": True},
        "provenance": {"env.ACCELERATE_MIXED_PRECISION": "/job/sft.yaml:10",
                       "env.NVTE_DEBUG": "runtime", "env.ACCELERATE_FP8_BACKEND": "assume",
                       "config.llamafactory.fp8": "/job/sft.yaml:10"}}))
    kept, _ = load(str(snap), drop_job=True)
    # LLaMA-Factory's own ACCELERATE_MIXED_PRECISION belonged to that job's configs
    assert set(kept.values) == {"env.NVTE_DEBUG", "env.ACCELERATE_FP8_BACKEND"}
    assert set(load(str(snap))[0].values) >= {"env.ACCELERATE_MIXED_PRECISION"}
