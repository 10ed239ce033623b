"""AReaL's experiment YAML (frameworks/areal.py), on its own examples at commit 4aef98d8
(fixtures/configs/areal/README.md). Before, such a YAML was read as HF TrainingArguments on its
one key `seed`, and its FP8 came out "no" (holdout8, eval9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "areal"


def _intent(path: Path) -> tuple[dict, dict, list]:
    read = read_paths([str(path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    return values, prov, read.files


def test_megatron_actor_in_fp8_with_an_fp8_rollout() -> None:
    values, prov, files = _intent(FIX / "gsm8k_grpo_megatron_fp8.yaml")
    assert [k for _, k in files] == ["areal"]
    assert (values["intent.fp8"], values["intent.backend"], values["intent.format"],
            values["intent.recipe"], values["intent.fp8_params"]) == \
        (True, "te", "hybrid", "blockwise", True)
    assert "megatron" in values["intent.stack"]
    assert (values["intent.rollout.engine"], values["intent.rollout.fp8"]) == ("sglang", True)
    assert prov["intent.fp8"].endswith("gsm8k_grpo_megatron_fp8.yaml:80")   # mode: hybrid


def test_archon_actor_in_blockwise_fp8() -> None:
    values, _, _ = _intent(FIX / "gsm8k_sft_archon_fp8.yaml")
    assert (values["intent.fp8"], values["intent.backend"], values["intent.recipe"]) == \
        (True, "torchao", "blockwise")


@pytest.mark.parametrize("name", ["gsm8k_grpo_megatron.yaml", "gsm8k_grpo.yaml"])
def test_the_bf16_examples_ask_for_no_fp8(name: str) -> None:
    values, _, _ = _intent(FIX / name)
    assert values["intent.fp8"] is False


def test_fp8_config_defaults_and_an_unknown_engine(tmp_path: Path) -> None:
    text = (FIX / "gsm8k_grpo_megatron_fp8.yaml").read_text()
    path = tmp_path / "x.yaml"
    path.write_text(text.replace("      mode: hybrid\n      recipe: blockwise\n      param: true\n",
                                 "      param: 'true'\n"))
    values, _, _ = _intent(path)
    # FP8EngineConfig defaults (areal/api/cli_args.py l.738-754); OmegaConf converts 'true'
    assert (values["intent.format"], values["intent.recipe"], values["intent.fp8_params"]) == \
        ("e4m3", "delayed", True)
    path.write_text(text.replace('backend: "megatron:d4p1t1"', 'backend: "newengine:d4"'))
    values, _, _ = _intent(path)
    assert isinstance(values["intent.fp8"], Unknown)
