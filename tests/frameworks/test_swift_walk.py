"""ms-swift flags only from the commands the script runs (frameworks/swift_walk.py, issue 22).

The real file: ms-swift's examples/megatron/fp8/llm.sh at v4.5.2 (modelscope/ms-swift,
ff5128777dd3dc5538f1a95fbcc29442c327d7d2), reduced (flags that decide nothing here dropped); its
commented-out ``swift infer`` lines stay. Flag names from swift/megatron/arguments/megatron_args.py
l.635-645 at that tag. Hostile: a commented or echoed ``megatron sft --fp8_format``, a variable
of FP8 flags no command expands, flags in an ``if`` arm the text does not decide, launches that
differ, a decided arm, a ``swift infer`` after training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

LLM_SH = """\
# 8 * 95GiB
# "cuda>=12.9"
# In this example, FP8 training does not provide any speedup.
PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \\
NPROC_PER_NODE=8 \\
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\
megatron sft \\
    --model Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 \\
    --save_safetensors true \\
    --fp8_recipe blockwise \\
    --fp8_format e4m3 \\
    --fp8_param_gather true \\
    --dataset 'swift/Chinese-Qwen3-235B-2507-Distill-data-110k-SFT#2000' \\
              'swift/self-cognition#1000' \\
    --tensor_model_parallel_size 2 \\
    --expert_model_parallel_size 8 \\
    --micro_batch_size 4 \\
    --global_batch_size 16 \\
    --recompute_granularity full \\
    --max_length 2048 \\
    --sequence_parallel true \\
    --attention_backend flash

# CUDA_VISIBLE_DEVICES=0 \\
# swift infer \\
#     --model megatron_output/Qwen3-30B-A3B-Instruct-2507-FP8/vx-xxx/checkpoint-xxx \\
#     --stream true
"""
BF16 = "megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 2 --torch_dtype bfloat16\n"


def _read(tmp_path: Path, text: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    script = tmp_path / "run.sh"
    script.write_text(text)
    read = read_paths([str(script)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read.facts, {k[7:]: v for k, v in values.items()}, read


def test_the_real_example(tmp_path: Path) -> None:
    facts, intent, read = _read(tmp_path, LLM_SH)
    assert facts["config.swift.command"] == "megatron sft"
    assert facts["config.swift.fp8_format"] == "e4m3"
    assert facts["config.swift.fp8_recipe"] == "blockwise"
    assert facts["config.swift.fp8_param_gather"] is True
    assert read.provenance["config.swift.fp8_format"] == f"{tmp_path / 'run.sh'}:11"
    assert facts["config.swift.dataset"] == ["swift/Chinese-Qwen3-235B-2507-Distill-data-110k-"
                                             "SFT#2000", "swift/self-cognition#1000"]
    assert "config.swift.stream" not in facts          # the commented swift infer
    assert intent["fp8"] is True and intent["recipe"] == "blockwise" and intent["tp"] == 2
    assert "megatron" in intent["stack"]


@pytest.mark.parametrize("text", [
    "# megatron sft --fp8_format e4m3 --fp8_recipe blockwise\n" + BF16,
    'echo "try: megatron sft --fp8_format e4m3 --fp8_recipe blockwise"\n' + BF16,
    'FP8_ARGS="--fp8_format e4m3 --fp8_recipe blockwise"\n' + BF16,       # never expanded
    BF16 + "# --fp8_format e4m3\n",
    BF16 + "swift infer --model out --fp8_format e4m3\n",                  # not training
])
def test_what_does_not_reach_the_command_is_not_its(tmp_path: Path, text: str) -> None:
    facts, intent, _ = _read(tmp_path, text)
    assert facts["config.swift.command"] == "megatron sft"
    assert "config.swift.fp8_format" not in facts and "config.swift.fp8_recipe" not in facts
    assert intent["fp8"] is False
    assert facts["config.swift.tensor_model_parallel_size"] == 2


def test_a_variable_the_command_expands_is_read(tmp_path: Path) -> None:
    text = ('FP8_ARGS="--fp8_format e4m3 --fp8_recipe blockwise"\n'
            "megatron sft --model Qwen/Qwen3-8B $FP8_ARGS --torch_dtype bfloat16\n")
    facts, intent, read = _read(tmp_path, text)
    assert facts["config.swift.fp8_format"] == "e4m3"
    assert read.provenance["config.swift.fp8_format"] == f"{tmp_path / 'run.sh'}:1"
    assert intent["fp8"] is True and intent["recipe"] == "blockwise"


UNDECIDED = """\
PR=${1:-bf16}
if [ "$PR" = fp8 ]; then
  FP8_ARGS="--fp8_format e4m3 --fp8_recipe blockwise"
fi
megatron sft --model Qwen/Qwen3-8B $FP8_ARGS --torch_dtype bfloat16
"""


def test_an_undecided_arm_is_unknown_and_a_decided_one_is_read(tmp_path: Path) -> None:
    facts, intent, _ = _read(tmp_path, UNDECIDED.replace("${1:-bf16}", "$RUN_PRECISION"))
    assert isinstance(facts["config.swift.fp8_format"], Unknown)
    assert "line 3" in facts["config.swift.fp8_format"].reason
    assert isinstance(intent["fp8"], Unknown)
    # run by hand, no script of the job gives $1: the script's own default (bf16), with the
    # FP8D-CFG-RUNTIME-ARGS note naming that assumption (reading/shelldefaults.py, session 39)
    facts, intent, read = _read(tmp_path, UNDECIDED)
    assert "config.swift.fp8_format" not in facts and intent["fp8"] is False
    assert any(p.code == "runtime_args" and "$1" in p.message for p in read.problems)
    facts, intent, _ = _read(tmp_path, UNDECIDED.replace("${1:-bf16}", "bf16"))
    assert "config.swift.fp8_format" not in facts and intent["fp8"] is False
    facts, intent, _ = _read(tmp_path, UNDECIDED.replace("${1:-bf16}", "fp8"))
    assert facts["config.swift.fp8_format"] == "e4m3" and intent["fp8"] is True


def test_launches_that_differ(tmp_path: Path) -> None:
    text = ('if [ "$X" = 1 ]; then\n  megatron sft --model m --fp8_format e4m3\nelse\n'
            "  megatron sft --model m\nfi\n")
    facts, intent, _ = _read(tmp_path, text)
    assert isinstance(facts["config.swift.fp8_format"], Unknown)
    assert isinstance(intent["fp8"], Unknown)
    text = ('if [ "$X" = 1 ]; then\n  megatron sft --model m --fp8_format e4m3\nelse\n'
            "  swift sft --model m\nfi\n")
    facts, _, _ = _read(tmp_path, text)
    assert isinstance(facts["config.swift.command"], Unknown)


def test_megatron_rlhf(tmp_path: Path) -> None:
    # examples/megatron/grpo/*.sh at v4.5.2: `megatron rlhf --rlhf_type grpo ...`
    facts, intent, _ = _read(tmp_path, "megatron rlhf --rlhf_type grpo --model Qwen/Qwen3-8B "
                                       "--fp8_format e4m3 --fp8_recipe blockwise\n")
    assert facts["config.swift.command"] == "megatron rlhf"
    assert intent["fp8"] is True and "megatron" in intent["stack"]


def test_an_echoed_command_only_gives_no_flags(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text('echo "megatron sft --fp8_format e4m3"\nmegatron sft\n')
    facts, intent, _ = _read(tmp_path, script.read_text())
    assert "config.swift.fp8_format" not in facts and intent["fp8"] is False
