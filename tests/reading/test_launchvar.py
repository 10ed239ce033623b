"""Launch lines whose launcher a variable holds (reading/launchvar.py): holdout24 mlperf51
(AMD's MLPerf v5.1 llama2_70b_lora run_and_time.sh: ``CMD=( 'torchrun' '--nproc_per_node=8' )``
then ``${CMD[@]} src/train.py``) ran no script at all: the job was unread."""

from __future__ import annotations

import pytest

from preflight.reading.launchvar import python_scripts


@pytest.mark.parametrize("text", [
    "declare -a CMD\nCMD=( 'torchrun' '--nproc_per_node=8' )\n${CMD[@]} src/train.py --a 1\n",
    'LAUNCHER=(srun --ntasks=8)\n"${LAUNCHER[@]}" python src/train.py --a 1\n',
    'RUNNER="torchrun --nproc_per_node 8"\n$RUNNER src/train.py --a 1\n',
    'P=python3\nif [ -n "$X" ]; then echo x; fi\n$P src/train.py --a 1\n',
])
def test_a_launcher_held_in_a_variable_runs_the_script(text: str) -> None:
    (got,) = python_scripts(text)
    script, argv, at = got
    assert script == "src/train.py" and argv == ("--a", "1")
    assert text[at:at + len(script)] == script         # the script's own word, its line


@pytest.mark.parametrize("text", [
    "torchrun src/train.py\n",                          # a literal launcher: the text finder's
    "$LAUNCH src/train.py\n",                           # from the environment: not known
    "CMD=(rm -f)\n${CMD[@]} src/train.py\n",            # no launcher
    'CMD=(torchrun)\necho "${CMD[@]} src/train.py"\n',  # only printed
    "CMD=(torchrun)\nf() {\n  ${CMD[@]} src/train.py\n}\n",   # a function never called
    "CMD=(torchrun)\nif false; then ${CMD[@]} src/train.py; fi\n",
    "CMD=$(which torchrun)\n$CMD src/train.py\n",       # a run-time value
])
def test_quiet_where_no_known_launcher_runs_it(text: str) -> None:
    assert python_scripts(text) == []


def test_a_huge_expansion_is_bounded() -> None:
    text = "A=(torchrun)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 40 + "${A[@]} x.py\n"
    assert python_scripts(text) == []


def test_more_launches_than_kept_stop_at_the_bound() -> None:
    text = "CMD=(torchrun)\n" + "${CMD[@]} t.py\n" * 100
    assert len(python_scripts(text)) == 8
