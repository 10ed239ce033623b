"""miles' and slime's Python launchers (frameworks/miles_py.py, reading/pydataclass.py,
reading/pyargs.py; issue 22, holdout10 miles-1337).

The miles script is radixark/miles scripts/run_deepseek_v4.py at e719999efe84641b61b99f94b53565dd20e25827
as the agreement benchmark keeps it verbatim (benchmarks/realjobs/holdout10-miles-1337-*/files):
a typer app whose ``train`` command builds ``train.py``'s flags in Python (``--fp8-format e4m3
--fp8-recipe blockwise`` and ``NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1`` under ``if
args.fp8_training:``, l.568-572). The slime script is THUDM/slime v0.3.1
tests/test_moonlight_16B_A3B.py, reduced (its l.1-8, 22-30, 87-128), with FP8 flags added to
``misc_args`` as a user would."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

_MILES = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" / \
    "holdout10-miles-1337-dsv4-flash-fp8-training-b200-fp32-scales" / "files" / "scripts" / \
    "run_deepseek_v4.py"
_LINE = ("python scripts/run_deepseek_v4.py {cmd} --model-name DeepSeek-V4-Flash-FP8-4layer "
         "--num-gpus-per-node 8 {more} --hf-checkpoint /root/models/DeepSeek-V4-Flash-FP8-4layer\n")


def _read(tmp_path: Path, run: str, script: str | None = None,
          name: str = "scripts/run_deepseek_v4.py") -> tuple[dict[str, Any], Any]:
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if script is None:
        shutil.copy(_MILES, target)
    else:
        target.write_text(script)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return {**values, **read.facts}, read


def test_the_miles_pr_1337_run(tmp_path: Path) -> None:
    got, read = _read(tmp_path, _LINE.format(cmd="train", more="--hardware B200 --fp8-training"))
    assert got["intent.fp8"] is True and got["intent.recipe"] == "blockwise"
    assert got["intent.backend"] == "te" and got["intent.block_scales_fp32"] is True
    assert got["config.slime.env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"
    assert read.provenance["config.slime.fp8_recipe"].line == 569
    assert read.provenance["config.slime.env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"].line == 571
    # _get_parallel_config: one actor node (num_nodes 1, rollout_num_nodes 0: __post_init__)
    assert got["config.slime.tensor_model_parallel_size"] == 8
    assert read.provenance["config.slime.tensor_model_parallel_size"].line == 433
    assert got["config.megatron.args_of"] == "slime"
    assert got["intent.rollout.fp8"] is True            # the -FP8 checkpoint SGLang serves
    assert "config.slime.unread_args" not in got
    assert got["config.slime.eval_interval"] == 20      # enable_eval's default


def test_no_fp8_training_is_no(tmp_path: Path) -> None:
    got, _ = _read(tmp_path, _LINE.format(cmd="train", more="--no-fp8-training"))
    assert got["intent.fp8"] is False


def test_the_environment_variable_typer_binds(tmp_path: Path) -> None:
    run = "MILES_SCRIPT_FP8_TRAINING=1 " + _LINE.format(cmd="train", more="--hardware H100")
    assert _read(tmp_path, run)[0]["intent.fp8"] is True


def test_auto_precision_is_decided_at_run_time(tmp_path: Path) -> None:
    # fp8_training None: _resolve_precision_defaults sets it from the GPU (l.160-163)
    got, _ = _read(tmp_path, _LINE.format(cmd="train", more="--hardware auto"))
    assert isinstance(got["intent.fp8"], Unknown)
    assert "fp8_training" in got["intent.fp8"].reason or "line 16" in \
        got["intent.fp8"].reason or "set again" in str(got["config.slime.fp8_format"])


def test_full_train_runs_train_too(tmp_path: Path) -> None:
    got, _ = _read(tmp_path, _LINE.format(cmd="full-train", more="--fp8-training"))
    assert got["intent.fp8"] is True


def test_a_command_that_does_not_train(tmp_path: Path) -> None:
    got, _ = _read(tmp_path, _LINE.format(cmd="prepare-download", more=""))
    assert got.get("intent.fp8") is not True
    assert "config.slime.fp8_format" not in got


def test_an_option_typer_refuses_is_said(tmp_path: Path) -> None:
    # colocate is field(init=False) (l.89): no option of the command
    _, read = _read(tmp_path, _LINE.format(cmd="train", more="--colocate --fp8-training"))
    assert any("--colocate" in p.message and p.level == "warning" for p in read.problems)


def test_run_by_hand(tmp_path: Path) -> None:
    target = tmp_path / "scripts" / "run_deepseek_v4.py"
    target.parent.mkdir(parents=True)
    shutil.copy(_MILES, target)
    read = read_paths([str(target)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)


_SLIME = '''\
import os
import slime.utils.external_utils.command_utils as U

ENABLE_EVAL = bool(int(os.environ.get("SLIME_TEST_ENABLE_EVAL", "1")))

MODEL_NAME = "Moonlight-16B-A3B-Instruct"
MODEL_TYPE = "moonlight"
NUM_GPUS = 8


def execute():
    ckpt_args = f"--hf-checkpoint /root/models/{MODEL_NAME} " f"--ref-load /root/{MODEL_NAME}_torch_dist "
    eval_args = (
        f"{'--eval-interval 20 ' if ENABLE_EVAL else ''}"
        "--eval-prompt-data aime /root/datasets/aime-2024/aime-2024.jsonl "
    )
    perf_args = (
        "--tensor-model-parallel-size 2 "
        "--sequence-parallel "
        "--expert-model-parallel-size 8 "
    )
    misc_args = (
        "--attention-dropout 0.0 "
        "--actor-num-nodes 1 "
        "--actor-num-gpus-per-node 8 "
        "--colocate "
    )
    {fp8}
    train_args = (
        f"{ckpt_args} "
        f"{U.get_default_wandb_args(__file__)} "
        f"{perf_args} "
        f"{eval_args} "
        f"{misc_args} "
    )

    U.execute_train(
        train_args=train_args,
        num_gpus_per_node=NUM_GPUS,
        megatron_model_type=MODEL_TYPE,
    )


if __name__ == "__main__":
    for proxy_var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        os.environ.pop(proxy_var, None)
    execute()
'''
_FP8 = 'misc_args += "--fp8-format e4m3 --fp8-recipe blockwise "'


def _slime(tmp_path: Path, fp8: str, run: str = "python tests/test_moonlight.py\n",
           ) -> tuple[dict[str, Any], Any]:
    return _read(tmp_path, run, _SLIME.replace("{fp8}", fp8), "tests/test_moonlight.py")


def test_slimes_test_launcher(tmp_path: Path) -> None:
    got, read = _slime(tmp_path, _FP8)
    assert got["intent.fp8"] is True and got["intent.recipe"] == "blockwise"
    assert got["config.slime.tensor_model_parallel_size"] == 2
    assert got["config.slime.eval_interval"] == 20
    assert read.provenance["config.slime.fp8_format"].line == 28
    # its config.json is outside the job; Moonshot publishes Moonlight only in BF16, so the name
    # says BF16 (frameworks/ckptname.py, session 43)
    assert got["intent.rollout.fp8"] is False


def test_slimes_eval_switch_from_the_launch_line(tmp_path: Path) -> None:
    got, _ = _slime(tmp_path, _FP8, "SLIME_TEST_ENABLE_EVAL=0 python tests/test_moonlight.py\n")
    assert "config.slime.eval_interval" not in got


def test_without_fp8_flags_it_is_no(tmp_path: Path) -> None:
    assert _slime(tmp_path, "pass")[0]["intent.fp8"] is False


# -- hostile ---------------------------------------------------------------------------------

@pytest.mark.parametrize("decoy", [
    '# misc_args += "--fp8-format e4m3 --fp8-recipe blockwise "',
    'doc = "misc_args += --fp8-format e4m3 --fp8-recipe blockwise"',
    'if False:\n        misc_args += "--fp8-format e4m3 --fp8-recipe blockwise "',
    'if NUM_GPUS > 64:\n        misc_args += "--fp8-format e4m3 --fp8-recipe blockwise "',
    'def unused():\n        return "--fp8-format e4m3"',
])
def test_decoys_are_not_flags(tmp_path: Path, decoy: str) -> None:
    assert _slime(tmp_path, decoy)[0]["intent.fp8"] is False


def test_an_undecided_condition_makes_the_flag_unknown(tmp_path: Path) -> None:
    got, read = _slime(tmp_path, 'if os.path.exists("/root/fp8"):\n        ' + _FP8)
    assert isinstance(got["config.slime.fp8_format"], Unknown)
    assert read.provenance["config.slime.fp8_format"].line == 29
    assert got["intent.fp8"] is not True


def test_a_part_that_may_hold_flags_makes_no_unknown(tmp_path: Path) -> None:
    got, _ = _slime(tmp_path, 'misc_args += f" {os.environ[\'EXTRA_ARGS\']} "')
    assert isinstance(got["intent.fp8"], Unknown)      # never "no": EXTRA_ARGS may ask for FP8
    assert "EXTRA_ARGS" in got["config.slime.unread_args"].reason
    got, _ = _slime(tmp_path, _FP8 + '\n    misc_args += f" {os.environ[\'EXTRA_ARGS\']} "')
    assert got["intent.fp8"] is True                    # a "yes" is not taken back


def test_a_shadowed_execute_train_is_not_miles(tmp_path: Path) -> None:
    script = _SLIME.replace("{fp8}", _FP8).replace(
        "\n\ndef execute():", "\nfrom types import SimpleNamespace\n"
        "U = SimpleNamespace(execute_train=print, get_default_wandb_args=str)\n\n"
        "def execute():")
    got, _ = _read(tmp_path, "python tests/test_moonlight.py\n", script, "tests/test_moonlight.py")
    assert "config.slime.fp8_format" not in got


def test_recursion_and_huge_concatenations_are_bounded(tmp_path: Path) -> None:
    many = "\n    ".join(['misc_args += "--attention-dropout 0.0 "'] * 3000)
    got, _ = _slime(tmp_path, "def f():\n        return f()\n    misc_args += f()\n    " + many)
    assert got["intent.fp8"] is not True
    doubled = "\n    ".join(["misc_args = misc_args + misc_args"] * 40)
    got, _ = _slime(tmp_path, _FP8 + "\n    " + doubled)
    assert got.get("intent.fp8") in (True,) or isinstance(got.get("intent.fp8"), Unknown)


def test_two_execute_train_calls_are_unknown(tmp_path: Path) -> None:
    script = _SLIME.replace("{fp8}", _FP8).replace(
        "    execute()\n", "    execute()\n    U.execute_train(train_args='--bf16', "
        "num_gpus_per_node=8, megatron_model_type=None)\n")
    got, _ = _read(tmp_path, "python tests/test_moonlight.py\n", script, "tests/test_moonlight.py")
    assert isinstance(got["intent.fp8"], Unknown)


# radixark/miles scripts/run_qwen3_4b.py at 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, reduced
# (l.1-60 ScriptArgs and __post_init__, l.198-236 `match args.train_backend`, l.256-266 FP8,
# l.285-318 execute_train and `typer.run(main)`)
_QWEN = '''\
from dataclasses import dataclass
from typing import Literal

import typer

import miles.utils.external_utils.command_utils as U
from miles.true_on_policy import apply_true_on_policy_script_defaults


@dataclass
class ScriptArgs(U.ExecuteTrainConfig):
    model_name: str = "Qwen3-4B"
    hardware: Literal["H100", "GB200", "GB300"] = "H100"
    extra_args: str = ""
    model_dir: str = "/root/models"
    train_backend: Literal["fsdp", "megatron"] = "megatron"
    rollout_fp8: bool = False
    train_fp8: bool = False

    def __post_init__(self):
        self.tensor_model_parallel_size = 1 if self.model_name == "Qwen3-0.6B" else 2
        self.context_parallel_size = 1 if self.model_name == "Qwen3-0.6B" else 4
        self.use_sequence_parallel = self.tensor_model_parallel_size > 1
        apply_true_on_policy_script_defaults(self)


def execute(args: ScriptArgs):
    ckpt_args = f"--hf-checkpoint {args.model_dir}/{args.model_name}{'-FP8' if args.rollout_fp8 else ''} "
    match args.train_backend:
        case "fsdp":
            train_backend_args = "--train-backend fsdp "
        case "megatron":
            train_backend_args = (
                f"--tensor-model-parallel-size {args.tensor_model_parallel_size} "
                f"{'--sequence-parallel ' if args.use_sequence_parallel else ''}"
                f"--context-parallel-size {args.context_parallel_size} "
            )
        case _:
            raise NotImplementedError
    misc_args = "--actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate "
    misc_env_vars = {}
    if args.train_fp8:
        misc_args += (
            "--transformer-impl transformer_engine "
            "--bf16 "
            "--fp8-format e4m3 "
            "--fp8-recipe blockwise "
        )
        misc_env_vars |= {
            "NVTE_FP8_BLOCK_SCALING_FP32_SCALES": "1",
        }
    train_args = f"{ckpt_args} {train_backend_args} {misc_args} {args.extra_args} "
    U.execute_train(
        train_args=train_args,
        config=args,
        num_gpus_per_node=8,
        megatron_model_type="qwen3-4B",
        extra_env_vars={**misc_env_vars},
    )


@U.dataclass_cli
def main(args: ScriptArgs):
    execute(args)


if __name__ == "__main__":
    typer.run(main)
'''


@pytest.mark.parametrize(("more", "fp8", "tp"), [
    ("--train-fp8 --rollout-fp8", True, 2),
    ("--no-train-fp8", False, 2),
    ("--train-fp8 --train-backend fsdp", True, None),
    ("--train-fp8 --model-name Qwen3-0.6B", True, 1),
])
def test_miles_qwen3_4b_launcher(tmp_path: Path, more: str, fp8: bool, tp: int | None) -> None:
    got, read = _read(tmp_path, f"python scripts/run_qwen3_4b.py {more}\n", _QWEN,
                      "scripts/run_qwen3_4b.py")
    assert got["intent.fp8"] is fp8
    assert got.get("config.slime.tensor_model_parallel_size") == tp
    if tp == 2:
        assert read.provenance["config.slime.tensor_model_parallel_size"].line == 34
        # apply_true_on_policy_script_defaults(self) may turn sequence parallelism off
        assert isinstance(got["config.slime.sequence_parallel"], Unknown)
    if "--rollout-fp8" in more:
        assert got["config.slime.hf_checkpoint"].endswith("Qwen3-4B-FP8")
        assert got["intent.rollout.fp8"] is True
    if fp8:
        assert got["config.slime.env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"


def test_a_value_right_after_a_hole(tmp_path: Path) -> None:
    # `{x}3`: the hole's marker must not run into the next digits (it named another piece)
    script = _QWEN.replace('"--actor-num-nodes 1 ', 'f"--load {U.create_run_id()}3 '
                           '--actor-num-nodes 1 ')
    got, _ = _read(tmp_path, "python scripts/run_qwen3_4b.py --train-fp8\n", script,
                   "scripts/run_qwen3_4b.py")
    assert got["intent.fp8"] is True
