"""Unsloth read from Python scripts (never imported): ``FastLanguageModel.from_pretrained(...,
load_in_fp8=...)`` beside TRL's GRPOConfig (holdout10's unsloth PR 3440 job, where the file was read
as FP8 "no"), the FP8 mapper table, the rollout it states, and the FP8D-UNSLOTH rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import unsloth
from preflight.intent import derive
from preflight.jobs.read import read_paths

JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout10-unsloth-3440-qwen3-8b-load-in-fp8-grpo-lora" / "files" / "grpo_fp8.py")
H100 = {"gpu": "H100", "gpu.count": "1", "pkg.torch": "2.9.0+cu128", "pkg.torchao": "0.15.0",
        "pkg.vllm": "0.11.0", "pkg.trl": "0.23.0", "pkg.transformers": "4.57.0",
        "pkg.unsloth": "2026.2.1", "cuda.torch_build": "12.8"}
SCRIPT = """\
from unsloth import {cls}
from trl import GRPOConfig, GRPOTrainer

model, tokenizer = {cls}.from_pretrained(
    model_name = "{name}",
    max_seq_length = 2048,
{extra}
)
args = GRPOConfig(output_dir = "out", per_device_train_batch_size = 4)
"""


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts


def _script(tmp_path: Path, extra: str, name: str = "unsloth/Qwen3-8B-Base",
            cls: str = "FastLanguageModel") -> Path:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(cls=cls, name=name, extra=extra))
    return path


def _fired(path: Path, assume: dict[str, str] | None = None) -> tuple[set[str], set[str]]:
    report = preflight.check([str(path)], smoke=False, assume=assume or H100)
    return {f.rule_id for f in report.findings}, {u.rule_id for u in report.undetermined}


def test_holdout10_job_asks_fp8_training_and_fp8_vllm_rollout() -> None:
    got, facts = _read(JOB)
    assert facts["config.unsloth.load_in_fp8"] is True
    assert facts["config.unsloth.fp8_mapped"] is False       # Qwen3-8B-Base: quantized on the fly
    assert got["fp8"][0] is True and got["fp8"][1].endswith("grpo_fp8.py:15")
    assert (got["backend"][0], got["recipe"][0]) == ("torchao", "rowwise")
    assert (got["rollout.engine"][0], got["rollout.fp8"][0]) == ("vllm", True)
    assert got["rollout.kv_cache_fp8"][0] is False
    assert "unsloth" in got["stack"][0]


def test_without_load_in_fp8_the_job_is_bf16(tmp_path: Path) -> None:
    got, _ = _read(_script(tmp_path, "    load_in_4bit = False,\n    fast_inference = True,"))
    assert got["fp8"][0] is False
    assert got["rollout.fp8"][0] is False
    assert got["rollout.engine"][0] == "vllm"


def test_block_mode_mapped_names_and_hf_generation(tmp_path: Path) -> None:
    got, _ = _read(_script(tmp_path, '    load_in_4bit = False,\n    load_in_fp8 = "block",'))
    assert got["recipe"][0] == "blockwise"
    assert got["rollout.engine"][0] == "hf"
    got, facts = _read(_script(tmp_path, "    load_in_4bit = False,\n    fast_inference = True,"
                                         "\n    load_in_fp8 = True,", name="unsloth/Qwen3-8B"))
    assert facts["config.unsloth.fp8_mapped"] is True
    assert isinstance(got["backend"][0], Unknown)           # unsloth's own FP8 kernels
    assert isinstance(got["recipe"][0], Unknown)            # row or block: FBGEMM on the GPU


def test_fp8_from_a_variable_is_unknown_not_no(tmp_path: Path) -> None:
    path = _script(tmp_path, "    load_in_4bit = False,\n    load_in_fp8 = USE_FP8,")
    path.write_text("import os\nUSE_FP8 = os.environ['X'] == '1'\n" + path.read_text())
    got, _ = _read(path)
    assert isinstance(got["fp8"][0], Unknown)


def test_mapper_table_is_alike_or_unknown() -> None:
    assert unsloth.mapped("unsloth/Qwen3-8B") is True
    assert unsloth.mapped("UNSLOTH/QWEN3-8B") is True                 # looked up lower-cased
    assert unsloth.mapped("/data/my-model") is False
    assert isinstance(unsloth.mapped(3), Unknown)
    releases = unsloth._releases()
    only_new = sorted(releases["2026.8.19"] - releases["2025.11.4"])
    assert only_new and isinstance(unsloth.mapped(only_new[0]), Unknown)


def test_rules_fire_on_the_refusals(tmp_path: Path) -> None:
    path = _script(tmp_path, "    fast_inference = True,\n    load_in_fp8 = True,")
    fired, _ = _fired(path)
    assert "FP8D-UNSLOTH-0003" in fired                      # load_in_4bit defaults to True
    path = _script(tmp_path, "    load_in_4bit = False,\n    load_in_fp8 = True,")
    fired, _ = _fired(path)
    assert "FP8D-UNSLOTH-0002" in fired                      # no fast_inference before 2026.3.1
    path = _script(tmp_path, "    load_in_4bit = False,\n    fast_inference = True,\n"
                             "    load_in_fp8 = True,")
    fired, _ = _fired(path, {**H100, "pkg.torch": "2.8.0"})
    assert "FP8D-UNSLOTH-0004" in fired
    fired, _ = _fired(path, {**H100, "gpu": "L40S"})
    assert "FP8D-UNSLOTH-0005" in fired
    fired, _ = _fired(path)
    assert not {r for r in fired if r.startswith("FP8D-UNSLOTH")}
    fired, _ = _fired(path, {**H100, "pkg.unsloth": "2025.11.3"})
    assert "FP8D-UNSLOTH-0001" in fired


def test_hostile_loader_calls_stay_bounded(tmp_path: Path) -> None:
    path = _script(tmp_path, "    **kwargs,", name="x" * 100_000)
    path.write_text("kwargs = load()\n" + path.read_text())
    got, facts = _read(path)
    assert isinstance(facts["config.unsloth.load_in_fp8"], Unknown)
    assert isinstance(got["fp8"][0], Unknown)


TWO_TRAINERS = """\
import sys
from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer{imports}

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name = "unsloth/Llama-3.2-1B-Instruct", load_in_4bit = False,
    fast_inference = True, load_in_fp8 = True,
)
SFTTrainer(model = model, args = SFTConfig(output_dir = "sft")).train()
{grpo}
"""


def _two(tmp_path: Path, grpo: str, imports: str = ", GRPOConfig, GRPOTrainer") -> Path:
    path = tmp_path / "two.py"
    path.write_text(TWO_TRAINERS.format(grpo=grpo, imports=imports))
    return path


def test_holdout14_sft_then_grpo_rolls_out_on_the_fp8_vllm_engine(tmp_path: Path) -> None:
    # holdout14: SFTConfig and GRPOConfig in one script leave config_class Unknown; the GRPO
    # trainer still generates on unsloth's vLLM engine, loaded with the FP8 weights
    job = (JOB.parents[2] / "holdout14-unsloth-notebooks-llama32-1b-load-in-fp8-grpo-colab-t4"
           / "files" / "Llama_FP8_GRPO.py")
    got, facts = _read(job)
    assert isinstance(facts["config.trl.config_class"], Unknown)
    assert facts["config.unsloth.online_rl"] is True
    assert (got["rollout.engine"][0], got["rollout.fp8"][0]) == ("vllm", True)
    assert got["rollout.fp8"][1].endswith("Llama_FP8_GRPO.py:23")
    # a trainer built without args makes GRPOConfig's defaults: a rollout too
    got, _ = _read(_two(tmp_path, "GRPOTrainer(model = model, reward_funcs = []).train()"))
    assert (got["rollout.engine"][0], got["rollout.fp8"][0]) == ("vllm", True)


def test_no_online_trainer_no_rollout(tmp_path: Path) -> None:
    # SFT only, or a GRPOTrainer of the script's own (not TRL's): no rollout is stated
    for grpo, imports in (("", ""),
                          ("class GRPOTrainer:\n    pass\nGRPOTrainer()", "")):
        got, facts = _read(_two(tmp_path, grpo, imports))
        assert "config.unsloth.online_rl" not in facts
        assert "rollout.fp8" not in got and got["fp8"][0] is True


def test_online_trainer_under_an_undecided_condition_is_no_rollout_claim(tmp_path: Path) -> None:
    got, facts = _read(_two(tmp_path, "if sys.argv[1] == 'rl':\n"
                                      "    GRPOTrainer(model = model, args = GRPOConfig()).train()"))
    assert isinstance(facts["config.unsloth.online_rl"], Unknown)
    assert "rollout.fp8" not in got
