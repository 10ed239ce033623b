"""An HF model's expert count from the config.json of a model folder inside the job
(frameworks/hfmoe.py): ``intent.moe.experts`` / ``intent.moe.top_k`` for TrainingArguments-style
files (HF Trainer YAML, axolotl's ``base_model``, LLaMA-Factory), which FP8D-ACC-0097 needs
(board 01:10, sweep9: only the Megatron-family readers filled it).

Key names as transformers' model configs spell them:
``num_experts`` (Qwen3-MoE), ``num_local_experts`` (Mixtral, GPT-OSS, Llama 4's ``text_config``),
``n_routed_experts`` (DeepSeek-V3); ``num_experts_per_tok`` the top-k in all of them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

VERSIONS = {"pkg.transformers": "4.57.3", "pkg.accelerate": "1.10.0", "pkg.axolotl": "0.17.0",
            "pkg.torchao": "0.13.0", "pkg.torch": "2.8.0"}
QWEN3_MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
             "hidden_size": 2048, "num_experts": 128, "num_experts_per_tok": 8}
MIXTRAL = {"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "n_routed_experts": 256, "num_experts_per_tok": 8}
LLAMA4 = {"model_type": "llama4", "text_config": {"model_type": "llama4_text",
                                                  "num_local_experts": 16,
                                                  "num_experts_per_tok": 1}}
DENSE = {"model_type": "qwen3", "hidden_size": 4096}


def _model(folder: Path, config: dict[str, Any] | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    (folder / "config.json").write_text(text)
    return folder


def _axolotl(job: Path, model: str) -> Path:
    job.mkdir(parents=True, exist_ok=True)
    out = job / "fft.yaml"
    out.write_text(f"base_model: {model}\nfp8: true\nsequence_len: 2048\nmicro_batch_size: 1\n")
    return out


def _intent(yaml: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    read = read_paths([str(yaml)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return read.facts, {k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()}


def _acc0097(yaml: Path, **extra: str) -> str:
    report = preflight.check([str(yaml)], smoke=False, assume={**VERSIONS, **extra})
    if "FP8D-ACC-0097" in {f.rule_id for f in report.findings}:
        return "fire"
    return "undetermined" if "FP8D-ACC-0097" in {u.rule_id for u in report.undetermined} \
        else "quiet"


@pytest.mark.parametrize(("config", "experts", "top_k", "rule"), [
    (QWEN3_MOE, 128, 8, "fire"),          # a Linear gate of 128 outputs: converted
    (MIXTRAL, 8, 2, "quiet"),             # 8 outputs: accelerate's % 16 filter skips it
    (DEEPSEEK_V3, 256, 8, "quiet"),       # the router is an nn.Parameter, no Linear
    (LLAMA4, 16, 1, "fire"),              # text_config of a multimodal config
])
def test_axolotl_base_model_inside_the_job(tmp_path: Path, config: dict[str, Any],
                                           experts: int, top_k: int, rule: str) -> None:
    _model(tmp_path / "models" / "moe", config)
    yaml = _axolotl(tmp_path, "./models/moe")
    facts, got, prov = _intent(yaml)
    assert got["moe.experts"] == experts and got["moe.top_k"] == top_k
    assert prov["moe.experts"].startswith(str(tmp_path / "models" / "moe" / "config.json") + ":")
    arch = config["text_config"]["model_type"] if "text_config" in config else config["model_type"]
    assert facts["config.axolotl.model_config_type"] == arch
    assert _acc0097(yaml) == rule
    # axolotl 0.18.0 patches accelerate's conversion to skip routers
    assert _acc0097(yaml, **{"pkg.axolotl": "0.18.0"}) == "quiet"


def test_hf_trainer_and_llamafactory_files(tmp_path: Path) -> None:
    _model(tmp_path / "qwen3-moe", QWEN3_MOE)
    hf = tmp_path / "args.yaml"
    hf.write_text("model_name_or_path: ./qwen3-moe\noutput_dir: out\n"
                  "per_device_train_batch_size: 1\nbf16: false\n")
    _, got, _ = _intent(hf)
    assert got["moe.experts"] == 128 and got["moe.top_k"] == 8
    lf = tmp_path / "lf.yaml"
    lf.write_text("model_name_or_path: ./qwen3-moe\nstage: sft\ndo_train: true\n"
                  "finetuning_type: full\nfp8: true\nfp8_backend: torchao\n"
                  "output_dir: out\nper_device_train_batch_size: 1\n")
    facts, got, _ = _intent(lf)
    assert facts["config.llamafactory.model_experts"] == 128
    assert got["moe.experts"] == 128


def test_dense_and_unread_models_state_nothing(tmp_path: Path) -> None:
    _model(tmp_path / "dense", DENSE)
    # (a hub id is looked up in the table of known MoE models: tests/frameworks/test_hfmoe_known.py)
    for model in ("./dense", "./missing", "~/models/moe"):
        facts, got, _ = _intent(_axolotl(tmp_path, model))
        assert "config.axolotl.model_experts" not in facts
        assert isinstance(got["moe.experts"], Unknown)     # "the configs read do not say"
    # zero experts is a dense model (some configs write the key with 0)
    _model(tmp_path / "zero", {**DENSE, "num_experts": 0})
    _, got, _ = _intent(_axolotl(tmp_path, "./zero"))
    assert isinstance(got["moe.experts"], Unknown)


def test_a_model_folder_outside_the_job_is_not_read(tmp_path: Path) -> None:
    outside = _model(tmp_path / "models" / "moe", QWEN3_MOE)
    yaml = _axolotl(tmp_path / "job", str(outside))
    facts, got, _ = _intent(yaml)
    assert "config.axolotl.model_experts" not in facts
    assert isinstance(got["moe.experts"], Unknown)
    os.symlink(outside, tmp_path / "job" / "link")        # a link in the job pointing out
    facts, _, _ = _intent(_axolotl(tmp_path / "job", "./link"))
    assert "config.axolotl.model_experts" not in facts


@pytest.mark.parametrize("text", [
    '{"model_type": "qwen3_moe", "num_experts": "many"}',
    '{"model_type": "qwen3_moe", "num_experts": true}',
    '{"model_type": "qwen3_moe", "num_experts": 1e9}',
    '{"model_type": "qwen3_moe", "num_experts": 99999999999999999999}',
])
def test_a_malformed_count_is_unknown_at_its_line(tmp_path: Path, text: str) -> None:
    _model(tmp_path / "moe", text)
    facts, got, _ = _intent(_axolotl(tmp_path, "./moe"))
    value = facts["config.axolotl.model_experts"]
    assert isinstance(value, Unknown) and "config.json:1" in value.reason
    assert isinstance(got["moe.experts"], Unknown)


@pytest.mark.parametrize("text", ["not json {", "[1, 2]", '{"text_config": 3}', "", "\ufeff{"])
def test_a_config_that_does_not_parse_states_nothing(tmp_path: Path, text: str) -> None:
    _model(tmp_path / "moe", text)
    facts, got, _ = _intent(_axolotl(tmp_path, "./moe"))
    assert "config.axolotl.model_experts" not in facts
    assert isinstance(got["moe.experts"], Unknown)


def test_a_fifo_config_json_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "moe").mkdir()
    os.mkfifo(tmp_path / "moe" / "config.json")
    facts, _, _ = _intent(_axolotl(tmp_path, "./moe"))
    assert "config.axolotl.model_experts" not in facts


def _fired(yaml: Path, rule: str) -> str:
    report = preflight.check([str(yaml)], smoke=False, assume=VERSIONS)
    if rule in {f.rule_id for f in report.findings}:
        return "fire"
    return "undetermined" if rule in {u.rule_id for u in report.undetermined} else "quiet"


@pytest.mark.parametrize(("quant", "expect"), [
    ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "fire"),
    ({"quant_method": "FP8"}, "fire"),                       # transformers lower-cases it
    ({"quant_method": "compressed-tensors"}, "quiet"),
    (None, "quiet"),                                          # a BF16 checkpoint
])
def test_hf_trainer_on_an_fp8_checkpoint(tmp_path: Path, quant: Any, expect: str) -> None:
    # FP8D-HF-0003: Trainer.__init__ refuses a quantizer that is not trainable (FineGrainedFP8)
    config: dict[str, Any] = {"model_type": "qwen3", "hidden_size": 4096}
    if quant is not None:
        config["quantization_config"] = quant
    _model(tmp_path / "Qwen3-8B-FP8", config)
    args = tmp_path / "sft.yaml"
    args.write_text("model_name_or_path: ./Qwen3-8B-FP8\noutput_dir: out\n"
                    "per_device_train_batch_size: 1\nbf16: true\n")
    facts, _, _ = _intent(args)
    if quant is not None:
        assert facts["config.hf_trainer.model_quant_method"] == quant["quant_method"].lower()
    assert _fired(args, "FP8D-HF-0003") == expect
    # a hub id of the same name is not judged here (compressed-tensors "-FP8" releases train)
    args.write_text("model_name_or_path: Qwen/Qwen3-8B-FP8\noutput_dir: out\n"
                    "per_device_train_batch_size: 1\nbf16: true\n")
    assert _fired(args, "FP8D-HF-0003") == "quiet"


@pytest.mark.parametrize(("transformers", "acc0097", "acc0098"), [
    ("4.57.3", "fire", "quiet"),     # nn.Linear experts are converted; the Linear router too
    ("5.2.0", "quiet", "fire"),      # 3-D experts stay BF16; the router is no nn.Linear
])
def test_moe_coverage_by_transformers_version(tmp_path: Path, transformers: str, acc0097: str,
                                              acc0098: str) -> None:
    _model(tmp_path / "moe", QWEN3_MOE)
    yaml = _axolotl(tmp_path, "./moe")
    report = preflight.check([str(yaml)], smoke=False,
                             assume={**VERSIONS, "pkg.transformers": transformers})
    fired = {f.rule_id for f in report.findings}
    assert ("FP8D-ACC-0097" in fired) == (acc0097 == "fire")
    assert ("FP8D-ACC-0098" in fired) == (acc0098 == "fire")
    # a dense model: neither fires
    _model(tmp_path / "dense", DENSE)
    report = preflight.check([str(_axolotl(tmp_path / "d", "../dense"))], smoke=False,
                             assume={**VERSIONS, "pkg.transformers": transformers})
    assert not {"FP8D-ACC-0097", "FP8D-ACC-0098"} & {f.rule_id for f in report.findings}
