"""``$(pwd)`` / ``$PWD`` in a launch script (reading/shellpwd.py, shellcalls' walk): holdout22's
``CONFIG_FILE="$(pwd)/configs/x.toml" sbatch run.sh`` left the config Unknown. The folder is
the script's own where no script of the job runs it (said in a note), the caller's where one
does, moved by every ``cd``; a folder not known here or out of the job stays Unknown."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellcalls import CWD, walk
from preflight.reading.shellvars import runtime_reason


def _env(text: str, outer: dict[str, str] | None = None) -> dict[str, str]:
    got = walk("/job/run.sh", text, outer or {})
    return {n: v for c in got.calls for n, v in c.env}


@pytest.mark.parametrize("word", ['"$(pwd)"', "$PWD", "${PWD}", "`pwd`", '"$(pwd -P)"', "$( pwd )"])
def test_pwd_is_the_scripts_folder(word: str) -> None:
    assert _env(f"X={word}/c.toml bash x.sh\n")["X"] == "/job/c.toml"
    assert walk("/job/run.sh", f"X={word}/c.toml bash x.sh\n", {}).assumed == 0


def test_a_cd_moves_it_and_a_subshell_keeps_its_own() -> None:
    env = _env("cd sub/deeper\ncd ..\nA=$(pwd) bash a.sh\n( cd other; B=$PWD bash b.sh )\n"
               "C=$PWD bash c.sh\n")
    assert (env["A"], env["B"], env["C"]) == ("/job/sub", "/job/sub/other", "/job/sub")


def test_a_caller_gives_the_folder() -> None:
    env = _env("X=$(pwd)/c.toml bash x.sh\n", {CWD: "/job/launch"})
    assert env["X"] == "/job/launch/c.toml"
    assert walk("/job/run.sh", "X=$(pwd) bash x.sh\n", {CWD: "/job/l"}).assumed is None


@pytest.mark.parametrize("before", ["cd $(find_it)\n", "if [ -n \"$Z\" ]; then cd x; fi\n",
                                    "cd\n", "cd -\n", "popd\n"])
def test_a_folder_not_known_stays_unknown(before: str) -> None:
    assert runtime_reason(_env(before + "X=$(pwd)/c.toml bash x.sh\n")["X"]) is not None


def test_the_script_setting_pwd_itself_wins() -> None:
    assert _env("PWD=/elsewhere\nX=$PWD bash x.sh\n")["X"] == "/elsewhere"


def test_not_pwd_stays_a_runtime_value() -> None:
    for word in ['"$(pwd; echo x)"', '"$(pwd | tr a b)"', '"$(pwdx)"', '"$(cat pwd)"']:
        assert runtime_reason(_env(f"X={word} bash x.sh\n")["X"]) is not None, word


TOML = textwrap.dedent("""\
    [model]
    name = "llama3"
    flavor = "8B"
    converters = ["float8"]
    [float8]
    enable_fsdp_float8_all_gather = true
    [training]
    local_batch_size = 1
    seq_len = 8192
    [compile]
    enable = true
    """)
CALLED = textwrap.dedent("""\
    #!/bin/bash
    #SBATCH --nodes=2
    CONFIG_FILE=${CONFIG_FILE:-"$(dirname "$0")/configs/llama3_8b.toml"}
    srun torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file ${CONFIG_FILE}
    """)


def _intent(root: Path, run: str) -> tuple[dict[str, Any], list[Any]]:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "configs").mkdir(exist_ok=True)
    (root / "configs" / "fp8.toml").write_text(TOML)
    (root / "configs" / "llama3_8b.toml").write_text(TOML.replace('converters = ["float8"]\n', ""))
    (root / "train.sh").write_text(CALLED)
    (root / "run.sh").write_text(run)
    read = read_paths([str(root / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}, list(read.problems)


@pytest.mark.parametrize("run", [
    'CONFIG_FILE="$(pwd)/configs/fp8.toml" sbatch train.sh\n',
    'export CONFIG_FILE=$PWD/configs/fp8.toml\nsbatch train.sh\n',
    'cd configs\nCONFIG_FILE="$(pwd)/fp8.toml" sbatch ../train.sh\n',
])
def test_a_job_reads_the_config_pwd_names(tmp_path: Path, run: str) -> None:
    got, problems = _intent(tmp_path, run)
    assert got["fp8"] is True
    assert any(p.code == "assumed_folder" and p.path.endswith("run.sh") for p in problems)


@pytest.mark.parametrize("run", [
    'cd /\nCONFIG_FILE="$(pwd)/configs/fp8.toml" sbatch /job/train.sh\n',   # out of the job
    'cd "$WORK"\nCONFIG_FILE="$(pwd)/configs/fp8.toml" sbatch train.sh\n',
])
def test_a_job_whose_folder_is_not_known_is_not_fp8_no(tmp_path: Path, run: str) -> None:
    got, _ = _intent(tmp_path, run)
    assert got.get("fp8") is not False


def test_a_script_written_from_the_job_root_runs_there(tmp_path: Path) -> None:
    (tmp_path / "launch").mkdir()
    got, problems = _intent(tmp_path, "")
    (tmp_path / "launch" / "run.sh").write_text(
        'CONFIG_FILE="$(pwd)/configs/fp8.toml" sbatch train.sh\n')
    read = read_paths([str(tmp_path / "launch" / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    note = next(p for p in read.problems if p.code == "assumed_folder")
    assert str(tmp_path) in note.message and "train.sh" in note.message


def test_no_path_of_the_script_says_where_it_runs_its_own_folder_does(tmp_path: Path) -> None:
    from preflight.reading import shellpwd
    from preflight.reading.boundary import _CURRENT, boundary_for

    (tmp_path / ".git").mkdir()
    (tmp_path / "a").mkdir()
    script = tmp_path / "a" / "run.sh"
    script.write_text("X=$(pwd)/nothing/here.toml bash other.sh\n")
    token = _CURRENT.set(boundary_for([str(script)]))
    try:
        assert shellpwd.launch_folder(str(script), script.read_text()) == (str(tmp_path / "a"), ())
    finally:
        _CURRENT.reset(token)
