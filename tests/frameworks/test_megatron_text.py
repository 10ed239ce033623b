"""Megatron flags read text-wide (no training launch walked) keep the branch they stand in
(frameworks/megatron_text.py, via megatron_args.read_args_text).

Session 41: a reduced ModelZoo wrapper (yanring/Megatron-MoE-ModelZoo @ 1ed4179f
sbatch_benchmarking.sh, its launch hidden in ``$LAUNCH``) was read as MXFP8 + CPU offload under
``PR=fp8``, every ``${PR}`` arm merged. Firing (a branch not decided: Unknown with its line),
quiet (outside any branch, decided arms, the same value in every arm, Python text), hostile
(500 nested ifs, a case of 1,000 arms, an unclosed if, a cut text)."""

from __future__ import annotations

from typing import Any

from preflight.facts import Unknown
from preflight.frameworks.megatron_args import read_args_text
from preflight.frameworks.slime import read_text as slime_text

P = "config.megatron."

# yanring/Megatron-MoE-ModelZoo @ 1ed4179f72e4873bc246501a976ed21628e99582
# sbatch_benchmarking.sh:68-98 (the precision and offload arms), reduced; the launch is a
# variable the walk cannot follow, so the text is read whole
MODELZOO = """#!/bin/bash
PR=${PR:-bf16}
TRAINING_PARAMS="--num-layers 56 --hidden-size 6144"
OPTIMIZER_OFFLOAD=${OPTIMIZER_OFFLOAD:-0}
if [[ ${OPTIMIZER_OFFLOAD} == 1 ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --optimizer-cpu-offload"
fi
if [[ ${PR} == "fp8" ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --fp8-recipe blockwise --fp8-format e4m3"
    if [[ ${OPTIMIZER_OFFLOAD} == 0 ]]; then
        TRAINING_PARAMS="${TRAINING_PARAMS} --fp8-param-gather"
    fi
fi
if [[ ${PR} == "mxfp8" ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --fp8-recipe mxfp8 --fp8-format e4m3"
fi
if [[ ${EXTRA} == 1 ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --moe-router-padding-for-fp8"
fi
export TRAINING_CMD="python ${TRAINING_SCRIPT_PATH} ${TRAINING_PARAMS}"
$LAUNCH
"""


def _read(text: str, outer: dict[str, str] | None = None, path: str = "/job/run.sh"
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    out = read_args_text(path, text, outer or {})
    return out.facts, out.provenance


def _line(prov: dict[str, Any], name: str) -> int | None:
    return getattr(prov[P + name], "line", None)


def test_decided_arms_under_pr_fp8() -> None:
    facts, prov = _read(MODELZOO, {"PR": "fp8"})
    assert facts[P + "fp8_recipe"] == "blockwise" and _line(prov, "fp8_recipe") == 9
    assert facts[P + "fp8_param_gather"] is True
    assert P + "optimizer_cpu_offload" not in facts       # OPTIMIZER_OFFLOAD=0: never runs
    assert facts[P + "num_layers"] == 56                  # outside any branch: as before


def test_undecided_arm_is_unknown_naming_its_line() -> None:
    facts, prov = _read(MODELZOO, {"PR": "fp8"})
    got = facts[P + "moe_router_padding_for_fp8"]
    assert isinstance(got, Unknown) and "line 17" in got.reason
    assert _line(prov, "moe_router_padding_for_fp8") == 18


def test_pr_from_the_environment_leaves_precision_unknown() -> None:
    text = MODELZOO.replace("PR=${PR:-bf16}\n", "")
    facts, _ = _read(text)
    assert isinstance(facts[P + "fp8_recipe"], Unknown)
    assert isinstance(facts[P + "fp8_format"], Unknown)


def test_same_value_in_every_arm_is_decided() -> None:
    text = ('if [ "$X" = 1 ]; then\n  A="--fp8-format hybrid"\nelif [ "$X" = 2 ]; then\n'
            '  A="--fp8-format hybrid --seq-length 8"\nelse\n  A="--fp8-format hybrid"\nfi\n'
            '$RUN $A\n')
    facts, _ = _read(text)
    assert facts[P + "fp8_format"] == "hybrid"
    assert isinstance(facts[P + "seq_length"], Unknown)


def test_same_value_without_else_is_unknown() -> None:
    text = ('if [ "$X" = 1 ]; then\n  A="--fp8-format hybrid"\nelif [ "$X" = 2 ]; then\n'
            '  A="--fp8-format hybrid"\nfi\n$RUN $A\n')
    assert isinstance(_read(text)[0][P + "fp8_format"], Unknown)


def test_case_with_a_default_arm_same_value_is_decided() -> None:
    text = ('case "$M" in\n  a) A="--fp8-format e4m3";;\n  b|c) A="--fp8-format e4m3";;\n'
            '  *) A="--fp8-format e4m3";;\nesac\n$RUN $A\n')
    assert _read(text)[0][P + "fp8_format"] == "e4m3"


def test_case_arms_differ_is_unknown() -> None:
    text = ('case "$M" in\n  a) A="--fp8-format e4m3";;\n  *) A="--fp8-format hybrid";;\n'
            'esac\n$RUN $A\n')
    assert isinstance(_read(text)[0][P + "fp8_format"], Unknown)


def test_sure_value_then_undecided_other_value_is_unknown() -> None:
    text = 'A="--fp8-format e4m3"\nif [ -n "$H" ]; then A="$A --fp8-format hybrid"; fi\n$RUN $A\n'
    facts, _ = _read(text)
    assert isinstance(facts[P + "fp8_format"], Unknown)
    text = 'A="--fp8-format e4m3"\nif [ -n "$H" ]; then A="$A --fp8-format e4m3"; fi\n$RUN $A\n'
    assert _read(text)[0][P + "fp8_format"] == "e4m3"


def test_and_or_list_and_uncalled_function_are_unknown() -> None:
    text = ('[ -n "$Y" ] && A="--fp8-param-gather"\n'
            'f() {\n  B="--use-distributed-optimizer"\n}\n$RUN $A $B\n')
    facts, _ = _read(text)
    assert isinstance(facts[P + "fp8_param_gather"], Unknown)
    assert "line 1" in facts[P + "fp8_param_gather"].reason
    got = facts[P + "use_distributed_optimizer"]
    assert isinstance(got, Unknown) and "line 2" in got.reason


def test_called_function_is_read() -> None:
    text = 'f() {\n  B="--use-distributed-optimizer"\n}\nf\n$RUN $B\n'
    assert _read(text)[0][P + "use_distributed_optimizer"] is True


def test_no_branch_reads_as_before() -> None:
    text = "--fp8-format hybrid\n--fp8-recipe delayed\n--use-distributed-optimizer\n"
    facts, _ = _read(text, path="/job/args.txt")
    assert facts[P + "fp8_format"] == "hybrid" and facts[P + "use_distributed_optimizer"] is True


def test_python_text_is_no_shell() -> None:
    # miles' run_*.py read by slime: Python's `if` opens no shell branch
    text = ('def main(args):\n    if args.x:\n        pass\n    cmd = (\n'
            '        "--fp8-format e4m3 "\n        "--fp8-recipe blockwise "\n    )\n')
    out = slime_text("/job/run_x.py", text, {})
    assert out.facts[P + "fp8_format"] == "e4m3"


def test_hostile_500_nested_ifs() -> None:
    text = "".join(f'if [ "$V{n}" = 1 ]; then\n' for n in range(500)) + \
        'A="--fp8-format hybrid"\n' + "fi\n" * 500 + "$RUN $A\n"
    facts, prov = _read(text)
    got = facts[P + "fp8_format"]
    assert isinstance(got, Unknown) and "line 500" in got.reason
    assert _line(prov, "fp8_format") == 501


def test_hostile_case_of_1000_arms() -> None:
    arms = "".join(f'  m{n}) A="--fp8-format e4m3";;\n' for n in range(999))
    text = f'case "$M" in\n{arms}  *) A="--fp8-format e4m3";;\nesac\n$RUN $A\n'
    assert _read(text)[0][P + "fp8_format"] == "e4m3"
    text = text.replace('m7) A="--fp8-format e4m3"', 'm7) A="--fp8-format hybrid"')
    facts, _ = _read(text)
    assert isinstance(facts[P + "fp8_format"], Unknown)
    assert _read(text, {"M": "m8"})[0][P + "fp8_format"] == "e4m3"    # decided: one arm runs


def test_hostile_unclosed_if() -> None:
    text = 'if [ -n "$X" ]; then\nA="--fp8-format hybrid"\n$RUN $A\n'
    assert isinstance(_read(text)[0][P + "fp8_format"], Unknown)


def test_hostile_arm_decided_false_gives_nothing() -> None:
    text = 'if false; then\n  A="--fp8-format hybrid"\nfi\n$RUN $A --seq-length 8\n'
    facts, _ = _read(text)
    assert P + "fp8_format" not in facts and facts[P + "seq_length"] == 8
