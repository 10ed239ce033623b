"""The script's own folder (reading/shelldir.py, issue 22): every idiom read as bash computes it
(each case is run by bash too and compared), paths built on it, nested defaults, and hostile
folders (out of the job, symlinked, 10^4 deep) that stay unknown with the reason and are never
read. All these failed before shelldir: the value was a run-time ``$(...)``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.reading import shelldir
from preflight.reading.boundary import enforced
from preflight.reading.shellargs import PARAMS
from preflight.reading.shellexpand import launches
from preflight.reading.shellvars import collect_variables
from preflight.reading.shellwords import split

BASH = shutil.which("bash")

IDIOMS = [
    # XTuner examples/v1/scripts/run_sft.sh:12-14 @ b934f462095c1e750229de35367c50ae36caa786
    'SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
    'REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"\n'
    'CONFIG_PATH="${1:-${REPO_ROOT}/examples/v1/config/sft.py}"\nlaunch "${CONFIG_PATH}"',
    # Megatron-Bridge scripts/training/train.sh:17 @ 51885cf1
    'SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
    'launch "${SCRIPT_DIR}/setup_experiment.py"',
    'launch "$(dirname "$0")/x.yaml"',
    'D=$(dirname $0)\nlaunch $D/../y',
    'D="$(cd "$(dirname "$0")" >/dev/null 2>&1 && pwd)"\nlaunch "$D"',
    'D="$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd )"\nlaunch "$D"/x',
    'D=$(cd "$(dirname "$0")"; pwd -P)\nlaunch "$D/z"',
    'P=$(readlink -f "$0")\nD=$(dirname "$P")\nlaunch "$D/../w"',
    'launch "$(realpath "$(dirname "$0")/..")/v"',
    'launch "${BASH_SOURCE%/*}/u"',
    'launch "$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")/t"',
    'R=$(cd "$(dirname "$0")/../.." && pwd)\nlaunch "${R}"/a/b.py "${2:-${R}/c}"',
]


def _job(tmp_path: Path) -> Path:
    root = tmp_path / "job"
    (root / "scripts" / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    return root / "scripts" / "sub" / "x.sh"


def _bash(script: Path, body: str) -> list[str]:
    assert BASH is not None
    script.write_text('launch() { for a in "$@"; do printf "%s\\0" "$a"; done; }\n' + body + "\n")
    out = subprocess.run([BASH, "--norc", "--noprofile", str(script)], cwd=script.parents[2],
                         capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return out.stdout.decode().split("\0")[:-1]


def _read(script: Path, body: str, params: str = "[]") -> list[tuple[str | None, str | None]]:
    found = launches(split(body), lambda w: w == "launch", {PARAMS: params})
    assert found, body
    out = []
    for arg in found[0].args:
        if arg.opaque:
            out.append((None, arg.opaque))
        else:
            out.append(shelldir.resolve(arg.text, str(script)))
    return out


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", IDIOMS)
def test_the_scripts_folder_as_bash_computes_it(tmp_path: Path, body: str) -> None:
    script = _job(tmp_path)
    want = [os.path.normpath(w) for w in _bash(script, body)]
    got = _read(script, body)
    assert [g for g, _ in got] == want, got


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_a_symlinked_script_folder_logical_and_physical(tmp_path: Path) -> None:
    script = _job(tmp_path)
    real = tmp_path / "job" / "real"
    real.mkdir()
    (tmp_path / "job" / "linked").symlink_to(real, target_is_directory=True)
    body = ('L=$(cd "$(dirname "$0")" && pwd)\nP=$(cd "$(dirname "$0")" && pwd -P)\n'
            'Q=$(realpath "$(dirname "$0")")\nlaunch "$L" "$P" "$Q"')
    linked = tmp_path / "job" / "linked" / "x.sh"
    _bash(script, "")
    want = _bash(linked, body)
    assert want == [str(tmp_path / "job" / "linked"), str(real), str(real)]
    assert [g for g, _ in _read(linked, body)] == want


def test_a_path_that_leaves_the_job_is_unknown_and_says_why(tmp_path: Path) -> None:
    script = _job(tmp_path)
    body = 'R=$(cd "$(dirname "$0")/../../../.." && pwd)\nlaunch "$R/etc/passwd" "$R"'
    with enforced([str(script)]):
        got = _read(script, body)
    assert all(g is None for g, _ in got)
    assert all("outside the job" in (why or "") for _, why in got)


def test_absolute_and_relative_folders(tmp_path: Path) -> None:
    script = _job(tmp_path)
    # `cd /` and `dirname /etc/passwd` are known text (no file is read here: the readers'
    # boundary decides); a relative `cd` and `pwd` alone are the folder the script starts in
    body = ('A=$(cd / && pwd)\nB=$(dirname /etc/passwd)\nC=$(cd sub && pwd)\nD=$(pwd)\n'
            'launch "$A" "$B" "$C" "$D" "$(dirname "$X")"')
    got = _read(script, body)
    assert [g for g, _ in got[:2]] == ["/", "/etc"]
    assert all(g is None and why for g, why in got[2:])


def test_other_commands_and_alone_script_paths_stay_run_time_values(tmp_path: Path) -> None:
    script = _job(tmp_path)
    body = ('launch "$0" "${BASH_SOURCE[0]}" "$(dirname "$0" | tr a b)" "$(cd "$(dirname "$0")" '
            '|| pwd)" "$(basename "$0")" "$(dirname -z "$0")" "$(readlink "$0")"')
    assert all(g is None and why for g, why in _read(script, body))


def test_nested_defaults_as_deep_as_bash_and_no_deeper(tmp_path: Path) -> None:
    script = _job(tmp_path)
    body = 'R=/r\nlaunch "${1:-${A:-${2:-${R}/x}}}"'
    assert _read(script, body) == [("/r/x", None)]
    deep = "${1:-" * 10_000 + "v" + "}" * 10_000
    got = _read(script, "launch " + deep)
    assert got[0][0] is None and got[0][1]      # never the text itself
    subs = "$(dirname " * 3_000 + '"$0"' + ")" * 3_000
    got = _read(script, "launch " + subs)
    assert got[0][0] is None


def test_a_caller_given_first_argument_wins_over_the_default(tmp_path: Path) -> None:
    script = _job(tmp_path)
    body = 'R=$(cd "$(dirname "$0")" && pwd)\nlaunch "${1:-${R}/default.py}"'
    given = '[["mine.py", -1, null, false, "/job/run.sh:3"]]'
    assert _read(script, body, given) == [("mine.py", None)]


def test_collect_variables_reads_the_folder_with_the_script(tmp_path: Path) -> None:
    script = _job(tmp_path)
    text = ('SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
            'REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"\n'
            'CFG="${REPO_ROOT}/cfg.yaml"\nOUT=$(cd "$(dirname "$0")/../../../.." && pwd)\n')
    with enforced([str(script)]):
        got = collect_variables(text, script=str(script))
    assert got["SCRIPT_DIR"] == str(script.parent)
    assert got["REPO_ROOT"] == str(tmp_path / "job")
    assert got["OUT"].startswith("\x00") and "outside the job" in got["OUT"]
    assert "SCRIPT_DIR" not in collect_variables(text)      # no script: left out, as before


def test_bash_source_in_a_sourced_file_is_that_file(tmp_path: Path) -> None:
    from preflight.jobs.sourcing import sourced

    root = tmp_path / "job"
    (root / "lib").mkdir(parents=True)
    (root / "run").mkdir()
    (root / ".git").mkdir()
    (root / "lib" / "env.sh").write_text(
        'LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\nTOP=$(cd "$(dirname "$0")" && pwd)\n')
    run = root / "run" / "go.sh"
    text = 'source "$(dirname "$0")/../lib/env.sh"\nlaunch "$LIB" "$TOP"\n'
    run.write_text(text)
    with enforced([str(run)]):
        files, variables = sourced(str(run), text)
    assert files and variables["LIB"] == str(root / "lib")
    assert variables["TOP"] == str(root / "run")      # $0 is the sourcing script


@pytest.mark.parametrize(("line", "followed"), [
    # Megatron-LM examples/rl/model_configs/nemotron5_56b.sh:8-9 @ d98e8a64
    ('SCRIPT_PATH="${BASH_SOURCE[0]}"\nsource $(dirname $SCRIPT_PATH)/common.sh', True),
    ('source "$(cd "$(dirname "$0")" && pwd)/common.sh"', True),
    ('source "$(dirname "$ELSEWHERE")/common.sh"', False),      # not the script's: not guessed
])
def test_a_sourced_path_under_the_scripts_folder(tmp_path: Path, line: str, followed: bool
                                                 ) -> None:
    from preflight.jobs.sourcing import sourced

    script = _job(tmp_path)
    (script.parent / "common.sh").write_text("X=1\n")
    script.write_text(line + "\n")
    with enforced([str(script)]):
        files, variables = sourced(str(script), line + "\n")
    assert bool(files) is followed and (variables.get("X") == "1") is followed


def test_recursive_and_self_sourcing_folders_end(tmp_path: Path) -> None:
    from preflight.jobs.sourcing import sourced

    script = _job(tmp_path)
    body = 'X=$(dirname "$X")\nY=$(cd "$(dirname "$0")" && pwd)\nY=$(cd "$Y/.." && pwd)\nlaunch "$X" "$Y"'
    got = _read(script, body)
    assert got[0][0] is None and got[1] == (str(script.parents[1]), None)
    text = 'source "$(dirname "$0")/$(basename "$0")"\nsource "${BASH_SOURCE%/*}/x.sh"\n'
    script.write_text(text)
    with enforced([str(script)]):
        files, _ = sourced(str(script), text)      # itself: followed at most once
    assert len(files) <= 1
