"""Megatron-family flags only from what reaches the training command (issue 22, holdout12's
Pai-Megatron-Patch misses; frameworks/megatron_walk.py, reading/shellmaybe.py, shellchain.py).

Faithful reductions of public scripts, each cited, then hostile variants: an arm with FP8
decided false, undecidable arms, an eval of a variable built in a loop, option strings in
comments and echo, ``${100}``, variables that name each other, 10^4 arms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

# alibaba/Pai-Megatron-Patch @ a098ca5acbdeaf7172ce0393fa309b39a77506db
# examples/qwen3/run_mcore_qwen3.sh, reduced (its 27 positional parameters kept; the lines that
# matter for the flags verbatim: :36 PR=$9, :40 TP=${10}, :45 SP=${15}, :276-287
# comm_overlap_option never expanded, :319-332 the precision arms, :349-356 the SP arm,
# :505-510 run_cmd + eval)
PAI = """#!/bin/bash
set -e
ENV=$1
MODEL_SIZE=$2
SEQ_LEN=$7
PR=$9
TP=${10}
SP=${15}
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 1"
TP_COMM_OVERLAP=$(( ($TP > 1) ? 1 : 0 ))
comm_overlap_option="\\
    --overlap-grad-reduce \\
    --overlap-param-gather"
if [ $TP_COMM_OVERLAP -eq 1 ]; then
    comm_overlap_option="\\
        --tp-comm-overlap \\
        --overlap-grad-reduce \\
        --overlap-param-gather"
fi
if [ $PR = fp16 ]; then
    pr_options=" \\
\t\t    --fp16 \\
            --apply-query-key-layer-scaling"
    export NVTE_APPLY_QK_LAYER_SCALING=1
elif [ $PR = bf16 ]; then
    pr_options=" \\
        --bf16"
elif [ $PR = fp8 ]; then
    pr_options=" \\
        --bf16 \\
        --fp8-format hybrid \\
        --fp8-recipe blockwise"
fi
if [ $SP = true ] && [ $TP -gt 1 ]; then
    sp_option=" \\
\t\t    --sequence-parallel"
elif [ $SP = false ]; then
    sp_option=" \\
                    "
fi
megatron_options="  \\
        --seq-length ${SEQ_LEN} \\
        --tensor-model-parallel-size ${TP} \\
        --transformer-impl transformer_engine
        "
run_cmd="torchrun $DISTRIBUTED_ARGS pretrain_qwen.py
 ${megatron_options} ${pr_options} ${sp_option}"
echo ${run_cmd}
eval ${run_cmd}
"""
# examples/qwen3/README.md l.109-138 @ the same commit: the README's command (PR=bf16)
CALL = ("cd examples/qwen3\nsh run_mcore_qwen3.sh dlc A3B 1 8 1e-5 1e-6 128 128 {pr} 4 2 1 1 4 "
        "{sp} true true false sel false 100000 /d /d /ckpt 10000 100 /out\n")


def _job(tmp_path: Path, pr: str = "bf16", sp: str = "true", script: str = PAI) -> Path:
    (tmp_path / "examples" / "qwen3").mkdir(parents=True, exist_ok=True)
    (tmp_path / "examples" / "qwen3" / "run_mcore_qwen3.sh").write_text(script)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + CALL.format(pr=pr, sp=sp))
    return tmp_path / "run.sh"


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read.facts, dict(read.provenance), values


def _line(source: Any) -> tuple[str, int]:
    return Path(source.path).name, source.line


def test_pai_bf16_control_reads_only_the_bf16_arm(tmp_path: Path) -> None:
    facts, prov, values = _read(_job(tmp_path))
    assert values["intent.fp8"] is False
    assert facts["config.megatron.bf16"] is True
    assert _line(prov["config.megatron.bf16"]) == ("run_mcore_qwen3.sh", 27)
    for flag in ("fp16", "fp8_format", "fp8_recipe", "apply_query_key_layer_scaling",
                 "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather"):
        assert f"config.megatron.{flag}" not in facts, flag     # other arms, unused options
    assert values["intent.tp_comm_overlap"] is False             # FP8D-TE-0049's false alarm


def test_pai_fp8_job_binds_two_digit_positional_parameters(tmp_path: Path) -> None:
    facts, prov, values = _read(_job(tmp_path, "fp8"))
    assert values["intent.fp8"] is True and values["intent.recipe"] == "blockwise"
    assert _line(prov["config.megatron.fp8_recipe"]) == ("run_mcore_qwen3.sh", 32)
    assert facts["config.megatron.tensor_model_parallel_size"] == 4      # TP=${10}
    assert values["intent.tp"] == 4 and values["intent.sequence_parallel"] is True  # SP=${15}
    assert values["intent.seq_len"] == 128
    # SP=false: the `&&` arm is decided false, its flag never reaches the command
    facts, _, values = _read(_job(tmp_path, "fp8", "false"))
    assert "config.megatron.sequence_parallel" not in facts
    assert values["intent.sequence_parallel"] is False


def test_pai_read_alone_leaves_every_arm_unknown_never_fp8(tmp_path: Path) -> None:
    _job(tmp_path)
    facts, prov, values = _read(tmp_path / "examples" / "qwen3" / "run_mcore_qwen3.sh")
    assert isinstance(values["intent.fp8"], Unknown)      # PR=$9: nobody in the job gives it
    for flag, line in (("fp16", 22), ("bf16", 27), ("fp8_format", 31)):
        got = facts[f"config.megatron.{flag}"]
        assert isinstance(got, Unknown) and "if/case branch" in got.reason, flag
        assert _line(prov[f"config.megatron.{flag}"]) == ("run_mcore_qwen3.sh", line)
    assert isinstance(values["intent.precision"], Unknown)
    assert "config.megatron.tp_comm_overlap" not in facts


# NVIDIA/Megatron-LM @ f7ec7ea8d6ab25f9395616d359d4bff37d157342
# examples/llama/train_llama3_8b_h100_fp8.sh, reduced: DTYPE="fp8" and the quoted array items of
# `if [[ "$DTYPE" == "fp8" ]]; then DTYPE_ARGS+=( "--fp8-format hybrid" ... )`, word-split by
# the unquoted `${DTYPE_ARGS[@]}` on the torchrun line; the `[ ! -f ... ]` check that exits
LLAMA = """#!/bin/bash
CHECKPOINT_PATH=${1:-"checkpoints/llama3_8b_fp8"}
PRETRAIN_SCRIPT_PATH="pretrain_gpt.py"
TP_SIZE=1
DTYPE="fp8"
SEQ_LENGTH=8192
DISTRIBUTED_ARGS=(
    --nproc_per_node 8
    --nnodes 1
)
MODEL_ARGS=(
    --num-layers 32
    --seq-length $SEQ_LENGTH
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --bf16
)
DTYPE_ARGS=()
if [[ "$DTYPE" == "fp8" ]]; then
    DTYPE_ARGS+=(
        "--fp8-format hybrid"
        "--fp8-amax-history-len 1024"
        "--fp8-amax-compute-algo max"
        "--fp8-param-gather"
    )
fi
MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP_SIZE
    --sequence-parallel  # Always enable sequence parallelism with TP_SIZE=2
)
if [ ! -f "$PRETRAIN_SCRIPT_PATH" ]; then
    echo "Error: pretrain_gpt.py not found at $PRETRAIN_SCRIPT_PATH"
    exit 1
fi
torchrun ${DISTRIBUTED_ARGS[@]} \\
    "$PRETRAIN_SCRIPT_PATH" \\
    ${MODEL_ARGS[@]} \\
    ${TRAINING_ARGS[@]} \\
    ${DTYPE_ARGS[@]} \\
    ${MODEL_PARALLEL_ARGS[@]}
"""


@pytest.mark.parametrize(("dtype", "fp8"), [('"fp8"', True), ('"bf16"', False),
                                             ("${DTYPE:-bf16}", False), ("$1", None)])
def test_megatron_lm_dtype_arm(tmp_path: Path, dtype: str, fp8: bool | None) -> None:
    script = tmp_path / "train_llama3_8b_h100_fp8.sh"
    script.write_text(LLAMA.replace('DTYPE="fp8"', f"DTYPE={dtype}"))
    facts, prov, values = _read(script)
    assert facts["config.megatron.num_layers"] == 32 and facts["config.megatron.bf16"] is True
    assert facts["config.megatron.nproc_per_node"] == 8       # torchrun's, before the script
    if fp8 is None:           # $1 of a script nobody runs: the arm is not decided
        assert isinstance(values["intent.fp8"], Unknown)
        assert isinstance(facts["config.megatron.fp8_param_gather"], Unknown)
    elif fp8:
        assert values["intent.fp8"] is True and facts["config.megatron.fp8_format"] == "hybrid"
        assert _line(prov["config.megatron.fp8_format"]) == (script.name, 22)
        assert facts["config.megatron.fp8_amax_history_len"] == 1024
    else:     # an arm with FP8 decided false: nothing of it reaches the command
        assert values["intent.fp8"] is False
        assert not any("fp8" in name for name in facts), sorted(facts)


SMALL = "#!/bin/bash\n{before}\ntorchrun pretrain_gpt.py --bf16 --num-layers 2 $EXTRA\n"


@pytest.mark.parametrize("before", [
    'echo "run with --fp8-format hybrid --tp-comm-overlap"',
    "# --fp8-format hybrid --tp-comm-overlap",
    'UNUSED="--fp8-format hybrid --tp-comm-overlap"',
    'EXTRA="--num-layers 2"\nOTHER="--fp8-format hybrid --tp-comm-overlap"',
    'cat <<EOF\n--fp8-format hybrid --tp-comm-overlap\nEOF',
    'if false; then\n  EXTRA="--fp8-format hybrid"\nfi',
])
def test_option_strings_that_never_reach_the_command_read_as_nothing(
        tmp_path: Path, before: str) -> None:
    script = tmp_path / "train.sh"
    script.write_text(SMALL.format(before=before))
    facts, _, values = _read(script)
    assert values["intent.fp8"] is False and values["intent.tp_comm_overlap"] is False
    assert "config.megatron.fp8_format" not in facts


@pytest.mark.parametrize("before", [
    'if [ "$MODE" = fp8 ]; then\n  EXTRA="--fp8-format hybrid"\nfi',
    'case "$MODE" in\n  fp8) EXTRA="--fp8-format hybrid" ;;\n  *) EXTRA="" ;;\nesac',
    'EXTRA="--fp8-format hybrid"\nif [ -n "$NO_FP8" ]; then\n  EXTRA=""\nfi',
    'A="--fp8-format hybrid"\nB=$A\nif [ "$X" = 1 ]; then B=""; fi\nEXTRA="$B"',
])
def test_an_undecided_arm_makes_its_flags_unknown_never_given(
        tmp_path: Path, before: str) -> None:
    script = tmp_path / "train.sh"
    script.write_text(SMALL.format(before=before))
    facts, _, values = _read(script)
    got = facts["config.megatron.fp8_format"]
    assert isinstance(got, Unknown) and "if/case branch" in got.reason
    assert isinstance(values["intent.fp8"], Unknown)
    assert facts["config.megatron.bf16"] is True       # the rest is read


@pytest.mark.parametrize("before", [
    # yanring/Megatron-MoE-ModelZoo @ 38ce2ed2 sbatch_benchmarking.sh: the PR arm appends the FP8
    # flags, then an arm decided only at run time (a yq result) appends to the same string
    'EXTRA="--fp8-format e4m3 --fp8-recipe blockwise"\n'
    'MAXPOS=$(yq .x m.yaml)\n'
    'if [[ -n ${MAXPOS} ]]; then\n  EXTRA="${EXTRA} --max-position-embeddings 8192"\nfi',
    'EXTRA="--fp8-format e4m3 --fp8-recipe blockwise"\n'
    'if [ -f /etc/long ]; then EXTRA="$EXTRA --seq-length 8192"; fi',
])
def test_an_undecided_arm_that_keeps_a_flag_leaves_it_given(
        tmp_path: Path, before: str) -> None:
    # holdout21 megatron-moe-modelzoo: both values the string may hold carry --fp8-format e4m3,
    # so it reaches the launch either way; only what the arm adds is Unknown
    script = tmp_path / "train.sh"
    script.write_text(SMALL.format(before=before))
    facts, _, values = _read(script)
    assert facts["config.megatron.fp8_format"] == "e4m3"
    assert facts["config.megatron.fp8_recipe"] == "blockwise"
    assert values["intent.fp8"] is True
    added = [k for k in ("config.megatron.max_position_embeddings",
                         "config.megatron.seq_length") if k in facts]
    assert added and all(isinstance(facts[k], Unknown) for k in added)


@pytest.mark.parametrize("before", [
    'EXTRA="--fp8-format e4m3"\nif [ -f /etc/x ]; then EXTRA="--fp8-format hybrid"; fi',
    'EXTRA="--fp8-format e4m3"\nif [ -f /etc/x ]; then EXTRA="$EXTRA --fp8-format hybrid"; fi',
    'EXTRA="--fp8-format e4m3"\nif [ -f /etc/x ]; then EXTRA="--bf16"; fi',
])
def test_an_undecided_arm_that_changes_or_drops_a_flag_leaves_it_unknown(
        tmp_path: Path, before: str) -> None:
    script = tmp_path / "train.sh"
    script.write_text(SMALL.format(before=before))
    facts, _, values = _read(script)
    assert isinstance(facts["config.megatron.fp8_format"], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)


def test_eval_of_a_variable_built_in_a_loop_is_not_fp8_no(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text('#!/bin/bash\nCMD="torchrun pretrain_gpt.py --bf16"\n'
                      'for f in --fp8-format=hybrid --fp8-recipe=blockwise; do\n'
                      '  CMD="$CMD $f"\ndone\neval $CMD\n')
    facts, _, values = _read(script)
    assert facts["config.megatron.bf16"] is True
    assert isinstance(values["intent.fp8"], Unknown)
    assert "for loop" in str(facts["config.megatron.unread_args"])
    # the loop's own values are the script's: a loop that only counts changes nothing
    script.write_text('#!/bin/bash\nCMD="torchrun pretrain_gpt.py --bf16 --num-layers 2"\nfor i in 1 2; do\n'
                      '  echo $i\ndone\neval $CMD\n')
    assert _read(script)[2]["intent.fp8"] is False


def test_two_digit_and_defaulted_positional_parameters(tmp_path: Path) -> None:
    args = " ".join(f"a{n}" for n in range(1, 12))
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\nFMT=${11}\nTP=${12:-4}\nLAYERS=${100}\n"
        "torchrun pretrain_gpt.py --fp8-format $FMT --tensor-model-parallel-size $TP "
        "--num-layers $LAYERS\n")
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\nbash train.sh {args.replace('a11', 'e4m3')}\n")
    facts, _, values = _read(tmp_path / "run.sh")
    assert facts["config.megatron.fp8_format"] == "e4m3"          # ${11}
    assert facts["config.megatron.tensor_model_parallel_size"] == 4  # ${12:-4}: 11 given
    assert values["intent.fp8"] is True
    assert not isinstance(facts.get("config.megatron.num_layers", 0), int) or \
        facts["config.megatron.num_layers"] != 0                   # ${100}: nothing invented


def test_shellvars_lookup_binds_two_digit_parameters() -> None:
    from preflight.reading.shellvars import COUNT, typed

    bound = {"1": "a", "10": "fp8", "15": "true", COUNT: "15"}
    assert typed("${10}", bound) == "fp8" and typed("${15}", bound) == "true"
    assert typed("$10", bound) == "$10"              # bash: $1 then "0", not the tenth
    assert typed("${16:-d}", bound) == "d"           # past the caller's arguments: default
    assert typed("${16:-d}", {k: v for k, v in bound.items() if k != COUNT}) == "${16:-d}"
    assert typed("${100}", {}) == "${100}"           # nobody gives them: not known


def test_variables_that_name_each_other_stay_bounded(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text('#!/bin/bash\nA="$B --bf16"\nB="$A"\nA="$B $A"\n' * 3 +
                      "torchrun pretrain_gpt.py $A --num-layers 2\n")
    facts, _, values = _read(script)
    assert facts["config.megatron.num_layers"] == 2 and values["intent.fp8"] is False


def test_ten_thousand_arms(tmp_path: Path) -> None:
    arms = "".join(f'elif [ "$PR" = p{n} ]; then\n  OPT="--fp8-format hybrid --x{n}"\n'
                   for n in range(10_000))
    body = (f'if [ "$PR" = bf16 ]; then\n  OPT="--bf16"\n{arms}fi\n'
            "torchrun pretrain_gpt.py $OPT --num-layers 2\n")
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\nPR=bf16\n" + body)
    facts, _, values = _read(script)
    assert values["intent.fp8"] is False and facts["config.megatron.bf16"] is True
    # undecided: more values than kept -> cut, FP8 Unknown, never "no"
    script.write_text("#!/bin/bash\n" + body)
    facts, _, values = _read(script)
    assert isinstance(values["intent.fp8"], Unknown)
