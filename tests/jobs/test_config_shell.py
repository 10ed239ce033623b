"""Cut-off and mis-quoted launch scripts: a problem at the line, never flags read from them.

``bash -n`` is the reference: whatever :func:`unterminated` reports, bash must refuse too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cfg_helpers import FIXTURES
from hypothesis import example, given, settings
from hypothesis import strategies as st

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shell import unterminated

BASH = shutil.which("bash")

# (file, text, expected words, line) - audit 4: each gave no finding and intent.fp8 = false
CASES = [
    ("trunc.sh", "#!/bin/bash\nGPT_ARGS=(\n  --num-layers 24\n  --fp8-format hy", "a (", 2),
    ("quote.sh", '#!/bin/bash\ntorchrun pretrain_gpt.py --fp8-format "hybrid --hidden-size 4096 '
                 "--seq-length 'x\n", 'a "..." string', 2),
    ("single.sh", '#!/bin/bash\nGPT_ARGS="--num-layers 24 --hidden-size 4096\nFP8="--fp8-format '
                  "hybrid --fp8-recipe delayed\ntorchrun pretrain_gpt.py $GPT_ARGS $FP8 --name "
                  "'oops\n", "a '...' string", 4),
    ("subst.sbatch", "#!/bin/bash\nNODES=$(scontrol show hostnames | head -n 1\n"
                     "torchrun --fp8-format hybrid x.py\n", "a $(", 2),
]


@pytest.mark.parametrize("name,text,words,line", CASES, ids=[c[0] for c in CASES])
def test_unterminated_script_is_a_problem(tmp_path: Path, name: str, text: str, words: str,
                                          line: int) -> None:
    path = tmp_path / name
    path.write_text(text)
    read = read_paths([str(path)])
    assert read.files == []
    assert len(read.problems) == 1
    assert read.problems[0].line == line and words in read.problems[0].message
    if BASH:
        assert subprocess.run([BASH, "-n", str(path)], capture_output=True).returncode != 0


def test_argument_file_cut_off_after_a_flag_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "trunc.args"
    path.write_text("--num-layers 24\n--hidden-size 4096\n--fp8-format")
    read = read_paths([str(path)])
    assert [(p.line, "--fp8-format has no value" in p.message) for p in read.problems] == \
        [(3, True)]
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)       # not silently "no FP8"
    assert "--fp8-format has no value" in values["intent.fp8"].reason


@pytest.mark.parametrize("path", sorted(str(p) for p in FIXTURES.rglob("*")
                                        if p.suffix in {".sh", ".slurm", ".sbatch"}))
def test_fixture_scripts_are_balanced(path: str) -> None:
    assert unterminated(Path(path).read_text()) is None


@pytest.mark.parametrize("text", [
    'echo "$(dirname "$0")"\n',                       # quotes inside $( ) inside quotes
    "case $x in\n  a) echo a;;\n  (b) echo b;;\nesac\n",  # ) without ( in case patterns
    "cat <<EOF\ndon't \"stop\" (here\nEOF\necho ok\n",  # here-document bodies are text
    "cat <<-'END'\n\tit's\n\tEND\n",
    "echo ${#ARR[@]} $# it\\'s # don't\n",            # # that is no comment; escapes; comments
    "x=$'it\\'s'\n",                                  # $'...' with an escaped quote
    "N=$((1<<3)) M=$(( (2+3) * 4 ))\n",
    "echo `date` \"`hostname`\"\n",
    "ARGS=(\n  --a 1 # (note\n  --b \"x y\"\n)\n",
])
def test_valid_shell_is_not_flagged(text: str) -> None:
    assert unterminated(text) is None


@pytest.mark.parametrize("text, flagged", [
    ("x \\\n# c'm\n", False),     # continuation: "x # c'm", a comment (bash -n accepts)
    ("x\\\n# c'm\n", True),       # "x# c'm": no comment, an open quote (bash -n refuses)
    ("x \\\\\n# c'm\n", False),  # an escaped backslash, then a real newline: a comment
])
def test_a_line_continuation_before_a_hash(text: str, flagged: bool) -> None:
    assert (unterminated(text) is not None) is flagged
    if BASH:
        assert (subprocess.run([BASH, "-n"], input=text.encode()).returncode != 0) is flagged


def test_arithmetic_is_skipped_as_a_whole_and_what_follows_still_checked() -> None:
    # "(" and quotes inside $(( )) are arithmetic text; the quote opened after it is real
    assert unterminated("N=$(( (2+3) * 4 )) M=$((1<<3))\necho 'open\n") == ("a '...' string", 2)


@pytest.mark.parametrize("text", ['echo $(("))"))\n', "echo $(( '))' ))\n", '(( "))" ))\n',
                                  'echo "$(("))"))"\n'])
def test_quotes_inside_arithmetic_are_read_as_bash_reads_them(text: str) -> None:
    # bash 5.2 reads quotes inside $(( )) and (( )): each is valid (redteam3's hypothesis
    # example); the checker flagged an open "..." string
    assert unterminated(text) is None
    if BASH:
        assert subprocess.run([BASH, "-n"], input=text.encode()).returncode == 0


@pytest.mark.parametrize("text, flagged", [
    ('"$((#))"\n', False), ('echo "$(( # ))" x\n', False), ('$("$((#))")\n', False),
    ('"$((\n#))"\n', False),
    ('echo "$(( 1 ))\n', True), ('"$((#))" \'open\n', True), ('echo "$(( 1 )) $(x\n', True),
])
def test_arithmetic_inside_a_string_is_read_as_a_whole(text: str, flagged: bool) -> None:
    # hypothesis found "$((#))" flagged (its `#` taken for a comment) though bash -n accepts it
    assert (unterminated(text) is not None) is flagged
    if BASH:
        assert (subprocess.run([BASH, "-n"], input=text.encode(),
                               capture_output=True).returncode != 0) is flagged


_PIECES = ["(", ")", '"', "'", "$(", "`", "\\", "\n", " ", "#", "<<EOF\n", "EOF\n", "$'",
           "--fp8-format hybrid", "echo", "case x in a)", "esac", "${X}", "$#", "x", "'x'",
           '"a b"', "\\'", '\\"', "$(( 1 ))", "# c'm\n", "<<-E\n\tx'\n\tE\n", "\\(", "\\#",
           "$((", "))"]


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=int(__import__("os").environ.get("SHELL_EXAMPLES", "500")), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
@example(['"', "$((", "#", "))", '"'])      # "$((#))": arithmetic inside a string (session 43)
def test_what_we_flag_bash_refuses(pieces: list[str]) -> None:
    # the checker may miss errors, never invent one: bash -n must fail whenever it reports
    text = "".join(pieces) + "\n"
    if unterminated(text) is not None:
        proc = subprocess.run([BASH, "-n"], input=text.encode(), capture_output=True)
        assert proc.returncode != 0, text


@pytest.mark.parametrize("text", [
    "torchrun pretrain_gpt.py --fp8-format \\\n    hybrid --bf16\n",       # continuation line
    "GPT_ARGS=(\n  --fp8-format\n  hybrid\n)\ntorchrun pretrain_gpt.py ${GPT_ARGS[@]}\n",
])
def test_a_value_on_the_next_line_is_read(tmp_path: Path, text: str) -> None:
    # before: --fp8-format read as a bare flag (true), so intent said no FP8
    path = tmp_path / "run.sh"
    path.write_text(text)
    read = read_paths([str(path)])
    assert read.problems == []
    assert read.facts["config.megatron.fp8_format"] == "hybrid"
