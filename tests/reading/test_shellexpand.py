"""Launch commands found and expanded as bash would, never run (issue 22 item 2)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.reading.shellexpand import MAX_CHARS, Launch, TooLarge, launch_args
from preflight.reading.shellwords import MAX_PARTS, split

ENTRY = re.compile(r"(?:^|/)train\.py$")


def _launch(text: str, outer: dict[str, str] | None = None) -> Launch:
    got = launch_args(split(text), lambda w: bool(ENTRY.search(w)), outer)
    assert got is not None
    return got


def _args(text: str, outer: dict[str, str] | None = None) -> list[str]:
    return [a.text for a in _launch(text, outer).args]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def test_arrays_strings_and_quotes_expand_into_one_argument_each() -> None:
    text = ('A=(\n  a.b=1   # comment\n  "x y"\n)\nA+=(c.d=\'q r\')\nS="s.t=2 u.v=3"\n'
            'python3 train.py "${A[@]}" $S "$S" \\\n   --flag=v\n')
    assert _args(text) == ["a.b=1", "x y", "c.d=q r", "s.t=2", "u.v=3", "s.t=2 u.v=3",
                           "--flag=v"]


def test_each_argument_keeps_the_line_it_is_written_on() -> None:
    text = "OVR=(\n  x.y=1\n  z.w=2\n)\n\n\ntorchrun --nproc_per_node 8 train.py \"${OVR[@]}\"\n"
    launch = _launch(text)
    assert [(a.text, _line(text, a.offset)) for a in launch.args] == [("x.y=1", 2),
                                                                       ("z.w=2", 3)]
    assert [a.text for a in launch.before] == ["torchrun", "--nproc_per_node", "8"]


def test_self_appending_strings_and_nested_defaults() -> None:
    text = ('TP=${TP:-4}\nDIR=${OUT:-${HOME_DIR:-/w}/out}\nCMD="train.py"\n'
            'CMD="$CMD a.tp=$TP"\nCMD="$CMD a.dir=$DIR"\npython $CMD\n')
    assert _args(text) == ["a.tp=4", "a.dir=/w/out"]


def test_bash_c_and_eval_strings_are_split_again_with_their_offsets() -> None:
    text = ('O="m.x=1 \\\n  m.y=2"\nCMD="uv run python train.py $O"\n'
            'srun --mpi=pmix bash -lc "\n  set -e\n  cd /w\n  $CMD\n"\n')
    launch = _launch(text)
    assert [a.text for a in launch.args] == ["m.x=1", "m.y=2"]
    assert [_line(text, a.offset) for a in launch.args] == [1, 2]
    assert _args('X="train.py k=v"\neval "$X"\n') == ["k=v"]


def test_values_from_outside_the_script_are_opaque_with_the_reason() -> None:
    text = 'python train.py a.tp=$TP b=$(date) c=`hostname` "$@"\n'
    launch = _launch(text)
    assert [a.text for a in launch.args][:1] == ["a.tp=$TP"]
    reasons = [a.opaque for a in launch.args]
    assert "environment" in (reasons[0] or "")
    assert "run time" in (reasons[1] or "") and "run time" in (reasons[2] or "")
    assert launch.forwarded           # "$@": the caller may pass more


def test_variables_of_a_sourced_script_are_used() -> None:
    assert _args("python train.py m.layers=$NUM_LAYERS\n", {"NUM_LAYERS": "36"}) == \
        ["m.layers=36"]


def test_a_value_set_in_another_if_branch_is_conditional() -> None:
    text = ("E=()\nif [ \"$Q\" = fp8 ]; then\n  E+=(r.quant=fp8)\nfi\n"
            "if [ -n \"$X\" ]; then K=1; else K=2; fi\n"
            "python train.py \"${E[@]}\" k=$K plain=1\n")
    launch = _launch(text)
    by = {a.text: a for a in launch.args}
    assert by["r.quant=fp8"].conditional is not None
    assert _line(text, by["r.quant=fp8"].conditional) == 3
    assert by["k=2"].conditional is not None      # else-branch value: not certain either
    assert by["plain=1"].conditional is None


@pytest.mark.parametrize("setting, args, conditional", [
    ("Q=fp8", ["x=1", "k=1"], False),          # the test holds: its branch runs
    ("Q=bf16", ["y=2", "k=2"], False),         # it does not: the else branch runs
    ("Q=${QUANT:-}", ["z=3", "k=3"], False),   # an unset knob takes its default ("")
    ("Q=$QUANT", ["x=1", "y=2", "k=2"], True),  # from the environment: cannot tell
])
def test_simple_tests_on_known_values_decide_the_branch(setting: str, args: list[str],
                                                        conditional: bool) -> None:
    text = (setting + "\nE=()\nif [ \"$Q\" = fp8 ]; then\n  E+=(x=1); K=1\n"
            "elif [[ -n \"$Q\" ]]; then\n  E+=(y=2); K=2\nelse\n  E+=(z=3); K=3\nfi\n"
            "python train.py \"${E[@]}\" k=$K\n")
    launch = _launch(text)
    if not conditional:
        assert [a.text for a in launch.args] == args
        assert all(a.conditional is None for a in launch.args)
    else:
        assert all(a.conditional is not None for a in launch.args)


def test_the_launch_in_a_branch_that_does_not_run_is_skipped() -> None:
    text = ('MODE=${MODE:-""}\nif [ -n "$MODE" ]; then\n  python train.py debug=1\nelse\n'
            '  torchrun train.py real=1\nfi\n')
    assert _args(text) == ["real=1"]


def test_a_launch_inside_a_branch_sees_its_own_branch_values_as_certain() -> None:
    text = "if true; then\n  A=(x=1)\n  python train.py \"${A[@]}\"\nfi\n"
    assert [a.conditional for a in _launch(text).args] == [None]


def test_redirections_heredocs_and_keywords_are_no_arguments() -> None:
    text = ("cat <<EOF > notes.txt\npython train.py inside=heredoc\nEOF\n"
            "export A=(x=1)\n"
            "python train.py \"${A[@]}\" 2>&1 > log.txt | tee out.log\n")
    assert _args(text) == ["x=1"]


def test_no_launch_command_is_none() -> None:
    assert launch_args(split("echo train.py is great\nls\n"), lambda w: w == "train.py") is None
    # the entry must be a whole word, not part of an echoed string
    assert launch_args(split('echo "run train.py now"\n'), lambda w: w == "train.py") is None


def test_exponential_expansion_is_refused_in_bounded_time() -> None:
    text = "A=x\n" + "A=\"$A $A\"\n" * 40 + "python train.py $A\n"
    with pytest.raises(TooLarge) as exc:
        launch_args(split(text), lambda w: w == "train.py")
    assert exc.value.offset > 0
    assert MAX_CHARS < 2 ** 40


def test_too_many_parts_stop_the_split_with_the_place() -> None:
    text = "python train.py " + "a=1 " * (MAX_PARTS + 10) + "\n"
    words = split(text)
    assert words.truncated_at is not None and words.truncated_at < len(text)


def test_unterminated_constructs_do_not_raise() -> None:
    for text in ['A=(x=1\npython train.py "${A[@]}"', 'python train.py "unterminated',
                 "python train.py ${X:-${Y", "python train.py $(echo (", "X=$'a\\'b'\n"]:
        split(text)            # bash would refuse these; the reader must not raise


def test_assignments_after_and_or_are_conditional() -> None:
    text = ('PP=2\n[ "$PP" -gt 1 ] && V=2 || V=null\ncd /w && python train.py v=$V\n')
    launch = _launch(text)
    assert launch.args[0].conditional is not None


def test_a_compound_if_test_is_decided_as_a_whole() -> None:
    # `[ a ] || [ b ]` / `[ a ] && [ b ]`, left to right as bash runs them (shellchain.py;
    # Pai-Megatron-Patch run_mcore_qwen3.sh:349 `if [ $SP = true ] && [ $TP -gt 1 ]`)
    text = ('T=2\nif [ "$T" = 4 ] || [ "$T" = 2 ]; then\n  S=1024\nelse\n  S=384\nfi\n'
            'python train.py s=$S\n')
    got = _launch(text).args[0]
    assert (got.text, got.conditional) == ("s=1024", None)
    both = text.replace("||", "&&")
    assert (_launch(both).args[0].text, _launch(both).args[0].conditional) == ("s=384", None)
    # a part that cannot be decided leaves the whole undecided (unless the other decides it)
    assert _launch(text.replace('"$T" = 2', '"$U" = 2')).args[0].conditional is not None
    assert _launch(text.replace('"$T" = 4', '"$U" = 4')).args[0].conditional is None
    assert _launch(both.replace('"$T" = 2', '"$U" = 2')).args[0].conditional is None  # F && ?
    # a pipe in the test is not decided
    piped = text.replace('|| [ "$T" = 2 ]', '| grep -q x')
    assert _launch(piped).args[0].conditional is not None


_SHELLISH = st.lists(st.sampled_from(
    list("ab=.$@{}[]()\"'\\`#;&|<>\n -:+~") +
    ["train.py", "A=(", "${A[@]}", "bash -c ", "if ", "then ", "fi", "else ", "[ ", " ]",
     "<<EOF\n", "$(", "${X:-", "elif "]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(_SHELLISH)
def test_any_script_splits_and_expands_without_raising(text: str) -> None:
    try:
        launch_args(split(text), lambda w: w.endswith("train.py"), {"A": "x y"})
    except TooLarge:
        pass
