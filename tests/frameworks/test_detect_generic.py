"""No framework claims a file on keys every trainer uses (frameworks/_claim.py; issue 22,
holdout8: two AReaL YAMLs were read as HF TrainingArguments on ``seed`` alone and said FP8 "not
asked"). A file no framework claims is ``unknown_framework`` with FP8 undetermined, never "no"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import preflight
from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.frameworks import FORMATS, KINDS, detect, score
from preflight.frameworks._claim import GENERIC
from preflight.jobs.read import read_paths

_WORDS = ("x", "adam", "bf16", "fp8", "true", "runs/a", "Qwen/Qwen3-1.7B", "cosine")
_NESTED = ("name", "type", "path", "enabled", "lr", "seed", "value", "mode", "backend")
_LEAF = st.one_of(st.integers(-3, 10**6), st.booleans(), st.sampled_from(_WORDS),
                  st.floats(1e-6, 1.0))
_VALUE = st.one_of(_LEAF, st.dictionaries(st.sampled_from(_NESTED), _LEAF, max_size=4))
_FORMATS = sorted({f for formats in FORMATS.values() for f in formats} - {"text", "python"})


@given(st.dictionaries(st.sampled_from(sorted(GENERIC)), _VALUE, min_size=1, max_size=12))
def test_no_framework_claims_a_file_of_generic_keys_only(data: dict[str, Any]) -> None:
    for kind in KINDS:
        assert score(kind, data) == 0, (kind, data)
    for fmt in _FORMATS:
        assert detect(fmt, data) == (None, []), (fmt, data)


def test_each_generic_key_alone_claims_nothing() -> None:
    for key in sorted(GENERIC):
        for value in (1, True, "x", {"name": "x"}, {"type": "AdamW", "lr": 1e-4}):
            assert [k for k in KINDS if score(k, {key: value})] == [], (key, value)


def test_declared_own_keys_are_no_generic_keys() -> None:
    from preflight.frameworks import (
        accelerate,
        deepspeed,
        hf_trainer,
        lightning,
        llamafactory,
        llmfoundry,
        mcli,
        megatron_bridge,
        nemo_rl_detect,
    )
    owned = {"accelerate": accelerate.OWN_KEYS, "deepspeed": deepspeed.OWN_KEYS,
             "hf_trainer": hf_trainer.OWN_KEYS, "lightning": lightning._TRAINER_ARGS,
             "llmfoundry": llmfoundry.OWN_KEYS, "mcli": mcli._OWN,
             "megatron_bridge": megatron_bridge._TRAIN_OWN, "nemo_rl": nemo_rl_detect._POLICY_OWN,
             "llamafactory": llamafactory.V1_KEYS}
    for kind, own in owned.items():
        assert own.isdisjoint(GENERIC), (kind, sorted(own & GENERIC))


# A trainer fp8-doctor does not read, in the shape of AReaL's examples/math/gsm8k_sft_archon_fp8.yaml
# (inclusionAI/AReaL @ 4aef98d8; AReaL itself has a reader now): only generic top-level keys
UNKNOWN = """\
experiment_name: gsm8k-sft
trial_name: trial0
seed: 1
total_train_epochs: 1
cluster:
  n_gpus_per_node: 8
actor:
  path: Qwen/Qwen3-1.7B
  fp8_config:
    mode: blockwise
"""


def test_a_file_no_framework_claims_is_unknown_framework_and_fp8_undetermined(
        tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(UNKNOWN)
    read = read_paths([str(path)])
    problem = next(p for p in read.problems if p.code == "unknown_framework")
    assert problem.path == str(path)
    fp8, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(fp8["intent.fp8"], Unknown)
    report = preflight.check(str(path), smoke=False)
    finding = next(f for f in report.findings if f.rule_id == "FP8D-CFG-UNKNOWN-FRAMEWORK")
    assert str(path) in str(finding.location)


def test_a_real_training_arguments_yaml_is_still_hf_trainer() -> None:
    # TRL's examples/cli_configs/example_config.yaml style: TrainingArguments fields
    data = {"model_name_or_path": "Qwen/Qwen2-0.5B", "output_dir": "out", "seed": 1,
            "per_device_train_batch_size": 4, "learning_rate": 1e-5, "bf16": True}
    assert detect("yaml", data)[0] == "hf_trainer"
    assert detect("yaml", {"seed": 1, "output_dir": "o", "learning_rate": 1e-5})[0] is None


# hiyouga/LlamaFactory @ ff6d4d12 examples/v1/train_full/train_full_fsdp2.yaml (reduced): a v1
# YAML was claimed by HF Trainer on output_dir + learning_rate + max_steps; v1 has no FP8 setting
LF_V1 = """\
model: Qwen/Qwen3-0.6B
model_class: llm
quant_config: null
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
output_dir: outputs/test_fsdp2
micro_batch_size: 1
learning_rate: 1.0e-4
max_steps: 10
"""


def test_a_llamafactory_v1_yaml_is_read_as_llamafactory_v1(tmp_path: Path) -> None:
    path = tmp_path / "train_full_fsdp2.yaml"
    path.write_text(LF_V1)
    read = read_paths([str(path)])
    assert read.facts["config.kinds"] == ["llamafactory"]
    values, prov = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False and values["intent.precision"] == "bf16"
    path.write_text(LF_V1 + "fp8: true\n")
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)


# Other trainers' YAMLs (real public files, each job folder's job.yaml cites its repository and
# commit): no reader of TrainingArguments may claim one on the TrainingArguments names the trainer
# copied (holdout9: ROLL's save_steps / logging_steps read as HF Trainer, FP8 "no" by accident).
_JOBS = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"
OTHER_TRAINERS = {
    "roll": "holdout9-roll-qwen25-7b-rlvr-megatron-fp8-rollout/files/examples/"
            "qwen2.5-7B-rlvr_megatron/rlvr_config_8gpus.yaml",
    "torchtune": "holdout9-torchtune-llama31-8b-full-fp8-tensorwise-no-compile/files/recipes/"
                 "configs/llama3_1/8B_full.yaml",
    "nemo_rl": "holdout-nemo-rl-qwen3-8b-fp8-kvcache/files/examples/configs/grpo_math_1B.yaml",
    "areal": "holdout8-areal-gsm8k-grpo-megatron-blockwise-fp8/files/examples/math/"
             "gsm8k_grpo_megatron_fp8.yaml",
}


def test_no_trainingarguments_claim_on_keys_other_trainers_copy() -> None:
    import yaml
    for trainer, rel in OTHER_TRAINERS.items():
        data = yaml.safe_load((_JOBS / rel).read_text(encoding="utf-8"))
        assert score("hf_trainer", data) == 0, (trainer, sorted(set(data) - GENERIC))
    # ROLL's own top-level names (alibaba/ROLL v0.3.0 roll/configs/base_config.py), alone
    roll_top = {"save_steps": 100, "logging_steps": 1, "eval_steps": 10, "max_grad_norm": 1.0,
                "logging_dir": "./output/logs", "resume_from_checkpoint": False}
    assert score("hf_trainer", roll_top) == 0
