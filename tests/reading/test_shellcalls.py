"""reading/shellcalls.py: the scripts a launch script runs, with the environment and folder
bash gives them, and reading/shellwords.py's ``case`` arms; nothing is run."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.reading.shellcalls import MAX_CALLS, SELF, Folder, folder_of, walk
from preflight.reading.shellexpand import launch_args
from preflight.reading.shellvars import runtime, runtime_reason
from preflight.reading.shellwords import split


def _calls(text: str, **kw: dict[str, str]) -> list[tuple[str, dict[str, str], str]]:
    return [(c.script, dict(c.env), c.folder.path) for c in walk("/j/run.sh", text,
                                                                 **kw).calls]


@pytest.mark.parametrize(("line", "script", "env"), [
    ("A=1 bash x.sh", "x.sh", {"A": "1"}),
    ("A=1 bash -x -o pipefail -- x.sh y", "x.sh", {"A": "1"}),
    ("A=1 sbatch -N 2 --partition batch --exclusive --export=ALL,B=2 job.slurm", "job.slurm",
     {"A": "1", "B": "2"}),
    ("A=1 sbatch --export=B=2,A x.sh", "x.sh", {"A": "1", "B": "2"}),
    ("A=1 sbatch --export=NONE x.sh", "x.sh", {}),
    ("A=1 env -u A B=2 bash x.sh", "x.sh", {"B": "2"}),
    ("A=1 nohup setsid ./scripts/x.sh", "./scripts/x.sh", {"A": "1"}),
    ("A=1 srun --mpi=pmix -N 2 bash x.sh", "x.sh", {"A": "1"}),
])
def test_each_way_of_running_a_script(line: str, script: str, env: dict[str, str]) -> None:
    assert _calls(line + "\n") == [(script, env, "")]


@pytest.mark.parametrize("line", [
    "bash -c 'x.sh'", "echo bash x.sh", "python train.py", "x.sh", "./train.py",
    "srun python train.py", "bash $(ls *.sh)", "sbatch --wrap='bash x.sh'"])
def test_what_is_no_script_run_here(line: str) -> None:
    assert _calls(line + "\n") == []


def test_a_value_the_caller_cannot_know_travels_as_a_marker() -> None:
    [(_, env, _)] = _calls("A=$(date)\nexport A\nB=$HOSTNAME bash x.sh\n")
    assert "command substitution" in (runtime_reason(env["A"]) or "")
    assert "run.sh:1" in (runtime_reason(env["A"]) or "")
    assert "comes from the environment" in (runtime_reason(env["B"]) or "")


def test_its_own_environment_is_passed_on_and_a_marker_stays_one() -> None:
    environ = {"@environ": "A,C", "A": "1", "C": runtime("why"), "S": "sourced"}
    [(_, env, _)] = _calls("bash x.sh\n", outer=environ, environ=environ)
    assert env == {"A": "1", "C": runtime("why")}


def test_cd_is_scoped_to_subshells_and_branches() -> None:
    text = ("cd a\n( cd b; bash x.sh )\n( cd c )\nbash y.sh\n"
            "if [ -n \"$Q\" ]; then cd d; fi\nbash z.sh\ncd /abs\nbash w.sh\n")
    calls = walk("/j/run.sh", text).calls
    assert [c.folder.path for c in calls[:2]] == ["a/b", "a"]
    assert calls[2].folder.why is not None and "line 5" in calls[2].folder.why
    assert calls[3].folder == Folder("/abs")


def test_the_scripts_own_folder() -> None:
    text = 'D="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"\ncd "$D/.."\n'
    folder = walk("/j/sub/run.sh", text + "bash x.sh\n").calls[0].folder
    assert folder.path == SELF + "/.."
    assert folder_of(folder, "/j/sub/run.sh", None) == ("/j", None)
    assert folder_of(Folder("x"), "/j/run.sh", {"@cwd": "/top"}) == ("/top/x", None)


def test_calls_are_bounded() -> None:
    assert len(walk("/j/run.sh", "bash x.sh\n" * (MAX_CALLS * 4)).calls) == MAX_CALLS


ENTRY = re.compile(r"train\.py$")


def _arg(text: str, outer: dict[str, str] | None = None) -> str | None:
    got = launch_args(split(text), lambda w: bool(ENTRY.search(w)), outer)
    assert got is not None
    return None if got.args[0].opaque or got.args[0].conditional else got.args[0].text


@pytest.mark.parametrize(("subject", "want"), [
    ("a", "1"), ("b", "1"), ("bx", "2"), ("c1", "3"), ("cz", "4"), ("*", "5"), ("zz", "4")])
def test_case_arms_on_one_line_and_many(subject: str, want: str) -> None:
    text = (f"S='{subject}'\ncase $S in a|b) V=1;; b?) V=2;;\n  (c[0-9]) V=3 ;;\n"
            "  '*') V=5 ;;\n  *) V=4 ;;\nesac\npython train.py $V\n")
    assert _arg(text) == want


def test_fallthrough_arms_are_not_decided() -> None:
    text = "S=a\ncase $S in a) V=1 ;& b) V=2 ;; esac\npython train.py $V\n"
    assert _arg(text) is None


def test_a_case_subject_from_the_caller_marker_is_unknown() -> None:
    text = "case $S in a) V=1;; *) V=2;; esac\npython train.py $V\n"
    assert _arg(text, {"S": runtime("from $(x)")}) is None
    assert _arg(text, {"S": "a"}) == "1"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab*?[]!|) \n;$'\"", max_size=40))
def test_any_case_text_splits_without_error(body: str) -> None:
    split("case $X in " + body + "\nesac\npython train.py\n")
    walk("/j/run.sh", "case $X in " + body + "\nesac\nbash x.sh\n")


def test_a_hostile_case_pattern_costs_no_backtracking() -> None:
    subject = "a" * 2000
    text = f"S={subject}\ncase $S in {'*a' * 40}b) V=1;; *) V=2;; esac\npython train.py $V\n"
    assert _arg(text) == "2"          # each arm decided in linear time
    huge = "x" * 150_000
    assert _arg(f"S={huge}\ncase $S in *y) V=1;; esac\npython train.py $V\n") is None


@pytest.mark.parametrize(("pattern", "subject", "hit"), [
    ("[a-c]x", "bx", True), ("[!a-c]x", "bx", False), ("[^a]?", "zq", True),
    ("*.yaml", "a.yaml", True), ("*.yaml", "a.yml", False), ("a*b*c", "axxbyyc", True),
    ("a*b*c", "axxbyy", False), ('"a*"', "ab", False), ('"a*"', "a*", True)])
def test_globs_as_bash_matches_them(pattern: str, subject: str, hit: bool) -> None:
    text = f"S='{subject}'\ncase $S in {pattern}) V=1;; *) V=2;; esac\npython train.py $V\n"
    assert _arg(text) == ("1" if hit else "2")
