"""A Megatron launch line carrying a precision / recipe flag Megatron-LM does not have
(holdout25 Megatron-Bridge 1707: ``--mixed-precision-recipe bf16-with-fp8-current-scaling-mixed``
on a console script read as Megatron-LM's argv) leaves FP8 Unknown, never a confident no;
Megatron-LM's own flags (``--fp8-param-gather``, ``--main-params-dtype``) keep their reading, and
``torchrun --no-python PROGRAM`` runs a program that is no Megatron-LM script: whether its
parser and validate_args run is Unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

BASE = ("torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 24 --hidden-size 1024 "
        "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 2 --bf16 {extra}\n")


def _intent(tmp_path: Path, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "run.sh"
    path.write_text(text)
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, dict(read.facts)


@pytest.mark.parametrize("extra", [
    "--mixed-precision-recipe bf16-with-fp8-current-scaling-mixed",
    "--precision fp8",
    "--compute-dtype fp8_cs",
    "--quantization-recipe mxfp8",
    "--fp8-training",
    "--train-precision=bf16",          # a precision flag Megatron-LM lacks: whatever it says
    "--linear-impl te_fp8",            # an unknown flag whose value names FP8
])
def test_a_precision_flag_megatron_lacks_leaves_fp8_unknown(tmp_path: Path, extra: str) -> None:
    intent, _ = _intent(tmp_path, BASE.format(extra=extra))
    fp8, src = intent["fp8"]
    assert isinstance(fp8, Unknown), extra
    assert "run.sh:1" in src


@pytest.mark.parametrize("extra", [
    "", "--fp8-param-gather --use-distributed-optimizer", "--main-params-dtype fp32",
    "--moe-router-dtype fp32 --attention-softmax-in-fp32", "--no-fp8-wgrad",
    "--first-last-layers-bf16 --num-layers-at-start-in-bf16 1",
    "--load /ckpt/llama-3-8b-fp8 --save /out/fp8-run --tokenizer-model /t/fp8.model",
    "--wandb-exp-name fp8-ablation --wandb-project fp8",
])
def test_megatrons_own_flags_keep_fp8_no(tmp_path: Path, extra: str) -> None:
    intent, _ = _intent(tmp_path, BASE.format(extra=extra))
    assert intent["fp8"][0] is False, extra


def test_an_fp8_format_still_reads_fp8_with_a_foreign_flag(tmp_path: Path) -> None:
    intent, _ = _intent(tmp_path, BASE.format(extra="--fp8-format hybrid --precision whatever"))
    assert intent["fp8"][0] is True
    assert intent["format"][0] == "hybrid"


def test_hostile_many_foreign_flags_stay_bounded(tmp_path: Path) -> None:
    extra = " ".join(f"--precision-{i} fp8" for i in range(3000))
    intent, _ = _intent(tmp_path, BASE.format(extra=extra))
    assert intent["fp8"][0] is not False


def test_torchrun_no_python_runs_a_program_that_is_no_megatron_script(tmp_path: Path) -> None:
    text = ("torchrun --nproc-per-node 1 --no-python my_trainer --num-layers 4 --seq-length 1024 "
            "--micro-batch-size 2 --fp8-param-gather --bf16\n")
    _, facts = _intent(tmp_path, text)
    assert isinstance(facts["config.megatron.parsed_args"], Unknown)
    assert isinstance(facts["config.megatron.validated_args"], Unknown)
    assert "my_trainer" in facts["config.megatron.parsed_args"].reason


def test_a_pretrain_script_still_runs_megatron_lms_parser(tmp_path: Path) -> None:
    _, facts = _intent(tmp_path, BASE.format(extra=""))
    assert facts["config.megatron.parsed_args"] is True
