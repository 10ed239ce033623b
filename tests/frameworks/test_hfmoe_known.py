"""An MoE model named by its hub id with no config.json in the job (frameworks/hfmoe_known.py):
``--model_name_or_path Qwen/Qwen3-30B-A3B`` in a TrainingArguments YAML, on a launch line, or
``AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-30B-A3B")`` beside ``TrainingArguments`` in a
script: the expert count of the table (so FP8D-ACC-0097 sees it), never the hub. A name not in
the table is Unknown naming it; a look-alike path, a folder of the same name in the job (its own
config.json wins), and two different models loaded are not taken from the table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import hfmoe_known
from preflight.intent import derive
from preflight.jobs.read import read_paths

VERSIONS = {"pkg.transformers": "4.57.3", "pkg.accelerate": "1.10.0", "pkg.axolotl": "0.17.0",
            "pkg.torchao": "0.13.0", "pkg.torch": "2.8.0"}


def _intent(*paths: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    read = read_paths([str(p) for p in paths])
    values, prov = derive(Facts(read.facts, read.provenance))
    return read.facts, {k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()}


def _axolotl(job: Path, model: str) -> Path:
    job.mkdir(parents=True, exist_ok=True)
    out = job / "fft.yaml"
    out.write_text(f"base_model: {model}\nfp8: true\nsequence_len: 2048\nmicro_batch_size: 1\n")
    return out


def _acc0097(path: Path) -> str:
    report = preflight.check([str(path)], smoke=False, assume=VERSIONS)
    if "FP8D-ACC-0097" in {f.rule_id for f in report.findings}:
        return "fire"
    return "undetermined" if "FP8D-ACC-0097" in {u.rule_id for u in report.undetermined} \
        else "quiet"


@pytest.mark.parametrize(("model", "experts", "top_k", "arch", "rule"), [
    ("Qwen/Qwen3-30B-A3B", 128, 8, "qwen3_moe", "fire"),      # nn.Linear gate, 128 % 16 == 0
    ("qwen/qwen3-30b-a3b-instruct-2507", 128, 8, "qwen3_moe", "fire"),   # the hub ignores case
    ("Qwen/Qwen3-235B-A22B", 128, 8, "qwen3_moe", "fire"),
    ("deepseek-ai/DeepSeek-V3", 256, 8, "deepseek_v3", "quiet"),   # nn.Parameter router
    ("openai/gpt-oss-20b", 32, 4, "gpt_oss", "quiet"),              # nn.Parameter router
    ("openai/gpt-oss-120b", 128, 4, "gpt_oss", "quiet"),
    ("mistralai/Mixtral-8x7B-v0.1", 8, 2, "mixtral", "quiet"),      # 8: accelerate skips it
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", 8, 2, "mixtral", "quiet"),
    ("meta-llama/Llama-4-Scout-17B-16E", 16, 1, "llama4", "fire"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 128, 1, "llama4", "fire"),
    ("zai-org/GLM-4.5", 160, 8, "glm4_moe", None),
    ("moonshotai/Kimi-K2-Instruct", 384, 8, "kimi_k2", None),
])
def test_a_known_hub_id_gives_its_experts(tmp_path: Path, model: str, experts: int, top_k: int,
                                          arch: str, rule: str | None) -> None:
    yaml = _axolotl(tmp_path, model)
    facts, got, prov = _intent(yaml)
    assert got["moe.experts"] == experts and got["moe.top_k"] == top_k
    assert facts["config.axolotl.model_config_type"] == arch
    assert prov["moe.experts"].startswith(f"{yaml}:1 (")
    if rule is not None:
        assert _acc0097(yaml) == rule


def test_a_hub_id_not_in_the_table_is_unknown_naming_it(tmp_path: Path) -> None:
    facts, got, _ = _intent(_axolotl(tmp_path, "someorg/SomeMoE-8x1B"))
    assert isinstance(got["moe.experts"], Unknown)
    assert "someorg/SomeMoE-8x1B" in got["moe.experts"].reason
    assert isinstance(facts["config.axolotl.model_experts"], Unknown)
    assert _acc0097(_axolotl(tmp_path, "someorg/SomeMoE-8x1B")) == "undetermined"
    # the same family's other sizes are not guessed from a known one
    _, got, _ = _intent(_axolotl(tmp_path / "coder", "Qwen/Qwen3-Coder-480B-A35B-Instruct"))
    assert isinstance(got["moe.experts"], Unknown)


@pytest.mark.parametrize("model", [
    "./Qwen/Qwen3-30B-A3B",       # a path: its folder is not in the job
    "/models/Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-30B-A3B/extra",
    "$MODEL",
    "Qwen/Qwen3-30B-A3B\u202e",
    "Qwen/",
])
def test_look_alikes_are_not_taken_from_the_table(tmp_path: Path, model: str) -> None:
    facts, got, _ = _intent(_axolotl(tmp_path, json.dumps(model)))
    assert facts.get("config.axolotl.model_experts") != 128
    assert got["moe.experts"] != 128


def test_a_folder_of_the_job_wins_over_the_table(tmp_path: Path) -> None:
    # the job holds its own (pruned) copy under the hub id's name: its config.json is the model
    folder = tmp_path / "Qwen" / "Qwen3-30B-A3B"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen3_moe",
                                                    "num_experts": 16,
                                                    "num_experts_per_tok": 2}))
    _, got, prov = _intent(_axolotl(tmp_path, "Qwen/Qwen3-30B-A3B"))
    assert got["moe.experts"] == 16 and got["moe.top_k"] == 2
    assert prov["moe.experts"].startswith(str(folder / "config.json"))


def test_the_launch_line_and_from_pretrained(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("accelerate launch --mixed_precision fp8 train.py "
                   "--model_name_or_path Qwen/Qwen3-30B-A3B --output_dir out\n")
    _, got, _ = _intent(run)
    assert got["moe.experts"] == 128
    job = tmp_path / "py"
    job.mkdir()
    (job / "train.py").write_text(
        "from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, "
        "TrainingArguments\n"
        "model = AutoModelForCausalLM.from_pretrained('openai/gpt-oss-20b')\n"
        "tok = AutoTokenizer.from_pretrained('Qwen/Qwen3-30B-A3B')\n"   # no model: not read
        "args = TrainingArguments(output_dir='out', bf16=True)\n"
        "Trainer(model=model, args=args).train()\n")
    (job / "run.sh").write_text("accelerate launch --mixed_precision fp8 train.py\n")
    facts, got, prov = _intent(job / "run.sh")
    assert got["moe.experts"] == 32 and got["moe.top_k"] == 4
    assert facts["config.hf_trainer.model_config_type"] == "gpt_oss"
    assert prov["moe.experts"] == f"{job / 'train.py'}:2"


def test_two_models_loaded_that_differ_are_unknown(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "policy = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-30B-A3B')\n"
        "reward = AutoModelForCausalLM.from_pretrained('openai/gpt-oss-20b')\n"
        "args = TrainingArguments(output_dir='out', bf16=True)\n"
        "Trainer(model=policy, args=args).train()\n")
    _, got, _ = _intent(tmp_path / "train.py")
    assert isinstance(got["moe.experts"], Unknown)


def test_the_table_is_well_formed() -> None:
    assert len(hfmoe_known.KNOWN) >= 20
    for name, row in hfmoe_known.KNOWN.items():
        assert name == name.lower() and hfmoe_known.hub_id(name)
        assert row.experts > 1 and 1 <= row.top_k < row.experts
        assert row.source.startswith(("InternLM/xtuner@", "https://huggingface.co/"))
        assert row.pinned == row.source.startswith("InternLM/xtuner@")
