"""A launch script that runs another script with knobs set (``VAR=v bash x.sh``, ``sbatch``,
``./x.sh``, ``export``, ``env``): the called script is read with that environment, so its
``${VAR:-default}`` takes the value (issue 22; holdout3: verl run_qwen3_30b_a3b_megatron.sh,
Megatron-Bridge slurm_sft.sh, torchao llama3.sh). Its ``case`` arms are matched, and a ``cd``
before a relative config path is applied (jobs/scripts.py, reading/shellcalls.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

NAME = "config.verl.actor_rollout_ref.rollout.name"
CALLEE = ("#!/bin/bash\nset -e\nINFER_BACKEND=${INFER_BACKEND:-vllm}\n"
          "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$INFER_BACKEND "
          "trainer.n_gpus_per_node=8\n")


def _job(tmp_path: Path, run: str, callee: str = CALLEE, name: str = "x.sh") -> Path:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(callee)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    return tmp_path / "run.sh"


def _fact(path: Path, name: str = NAME) -> Any:
    return read_paths([str(path)]).facts.get(name)


@pytest.mark.parametrize("run", [
    "INFER_BACKEND=trtllm bash x.sh\n",
    "INFER_BACKEND=trtllm sh ./x.sh --more\n",
    "INFER_BACKEND=trtllm ./x.sh\n",
    "INFER_BACKEND=trtllm sbatch --nodes 2 -p batch --exclusive x.sh\n",
    "INFER_BACKEND=trtllm sbatch --export=ALL x.sh\n",
    "sbatch --export=INFER_BACKEND=trtllm x.sh\n",
    "INFER_BACKEND=trtllm srun -N 1 bash x.sh\n",
    "export INFER_BACKEND=trtllm\nbash x.sh\n",
    "INFER_BACKEND=trtllm\nexport INFER_BACKEND\nnohup bash x.sh > log 2>&1 &\n",
    "set -a\nINFER_BACKEND=trtllm\nset +a\nbash x.sh\n",
    "env INFER_BACKEND=trtllm bash x.sh\n",
    "B=trtllm\nINFER_BACKEND=$B bash x.sh\n",
    'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\nINFER_BACKEND=trtllm bash $HERE/x.sh\n',
    "cd sub\nINFER_BACKEND=trtllm bash x.sh\n",
])
def test_the_called_script_sees_what_its_caller_gives_it(tmp_path: Path, run: str) -> None:
    name = "sub/x.sh" if run.startswith("cd sub") else "x.sh"
    assert _fact(_job(tmp_path, run, name=name)) == "trtllm"


@pytest.mark.parametrize("run", [
    "INFER_BACKEND=trtllm\nbash x.sh\n",                    # set, never exported
    "INFER_BACKEND=trtllm sbatch --export=NONE x.sh\n",     # sbatch passes nothing
    "export INFER_BACKEND=trtllm\nenv -i PATH=/bin bash x.sh\n",
    "INFER_BACKEND=trtllm echo bash x.sh\nbash x.sh\n",     # echo's own environment only
])
def test_what_bash_does_not_pass_leaves_the_default(tmp_path: Path, run: str) -> None:
    assert _fact(_job(tmp_path, run)) == "vllm"


@pytest.mark.parametrize("run", [
    "INFER_BACKEND=$(cat backend.txt) bash x.sh\n",
    "INFER_BACKEND=$MY_BACKEND bash x.sh\n",
    'if [ -n "$FAST" ]; then export INFER_BACKEND=trtllm; fi\nbash x.sh\n',
])
def test_a_value_the_caller_cannot_know_is_unknown_not_the_default(tmp_path: Path,
                                                                   run: str) -> None:
    got = _fact(_job(tmp_path, run))
    assert isinstance(got, Unknown)
    assert "INFER_BACKEND is given by run.sh" in got.reason


def test_the_wrapper_is_one_job_with_the_script_it_runs(tmp_path: Path) -> None:
    run = _job(tmp_path, "INFER_BACKEND=trtllm bash x.sh\n")
    read = read_paths([str(tmp_path)])
    assert read.facts[NAME] == "trtllm"
    assert not [p for p in read.problems if p.level == "error"]
    assert sorted(Path(p).name for p, _ in read.files) == ["run.sh", "x.sh"]
    # named in either order, the called script is read with its caller's values
    both = read_paths([str(tmp_path / "x.sh"), str(run)])
    assert both.facts[NAME] == "trtllm"


def test_scripts_calling_each_other_stop(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("#!/bin/bash\nINFER_BACKEND=sglang bash b.sh\n")
    (tmp_path / "b.sh").write_text("#!/bin/bash\nbash a.sh\n" + CALLEE.partition("\n")[2])
    read = read_paths([str(tmp_path / "a.sh")])
    assert read.facts[NAME] == "sglang"
    assert sorted(Path(p).name for p, _ in read.files) == ["a.sh", "b.sh"]
    # wrappers that only call each other: no kind, read as no framework's, and it ends
    for n in range(8):
        (tmp_path / f"w{n}.sh").write_text("#!/bin/bash\n" + "".join(
            f"bash w{k}.sh\n" for k in range(8)))
    assert read_paths([str(tmp_path / "w0.sh")]).facts.get("config.kinds") is None


def test_a_called_script_outside_the_job_is_a_warning_never_read(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "x.sh").write_text(CALLEE)
    (job / "run.sh").write_text("#!/bin/bash\nINFER_BACKEND=trtllm bash ../x.sh\n"
                                "python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n")
    read = read_paths([str(job / "run.sh")])
    assert NAME not in read.facts
    [out] = [p for p in read.problems if p.code == "outside_job"]
    assert (Path(out.path).name, out.line) == ("run.sh", 2)


# -- case arms ----------------------------------------------------------------------------

CASE = """#!/bin/bash
DATASET_NAME=${DATASET_NAME:-squad}
case "$DATASET_NAME" in
  openmath*|gsm8k)
    B="${B:-sglang}"
    ;;
  'lit*')
    B=hf
    ;;
  *)  # squad, custom datasets
    B="${B:-vllm}"
    ;;
esac
python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$B trainer.n_gpus_per_node=8
"""


@pytest.mark.parametrize(("run", "want"), [
    ("bash x.sh\n", "vllm"),
    ("DATASET_NAME=openmathinstruct2 bash x.sh\n", "sglang"),
    ("DATASET_NAME=gsm8k bash x.sh\n", "sglang"),
    ("DATASET_NAME=gsm8k_v2 bash x.sh\n", "vllm"),
    ("DATASET_NAME='lit*' bash x.sh\n", "hf"),           # a quoted pattern is literal
    ("DATASET_NAME=litx bash x.sh\n", "vllm"),
    ("B=trtllm bash x.sh\n", "trtllm"),
])
def test_case_picks_the_arm_the_value_matches(tmp_path: Path, run: str, want: str) -> None:
    assert _fact(_job(tmp_path, run, CASE)) == want


def test_case_on_a_value_not_known_here_leaves_what_the_arms_differ_on_unknown(
        tmp_path: Path) -> None:
    got = _fact(_job(tmp_path, "DATASET_NAME=$(cat name) bash x.sh\n", CASE))
    assert isinstance(got, Unknown)


def test_exit_in_an_undecided_branch_means_the_launch_is_past_it(tmp_path: Path) -> None:
    callee = ("#!/bin/bash\nif [ -n \"${A}\" ] && [ -n \"${M}\" ]; then\n  echo both; exit 1\n"
              "elif [ -n \"${A}\" ]; then\n  B=$A\nelse\n  B=vllm\nfi\n"
              "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$B "
              "trainer.n_gpus_per_node=8\n")
    assert _fact(_job(tmp_path, "A=sglang bash x.sh\n", callee)) == "sglang"
    # a subshell's exit ends the subshell only: the branch stays undecided
    sub = callee.replace("echo both; exit 1", "( exit 1 )")
    assert isinstance(_fact(_job(tmp_path, "A=sglang bash x.sh\n", sub)), Unknown)


# -- cd before a relative path -----------------------------------------------------------

TOML = '[model]\nname = "llama3"\nconverters = ["quantize.linear.float8"]\n'
TT = ("#!/bin/bash\n{cd}\nCONFIG_FILE=./cfg/a.toml torchrun --nproc_per_node 8 "
      "-m torchtitan.train --job.config_file ${{CONFIG_FILE}} --training.steps 10\n")


def _titan(tmp_path: Path, cd: str, run: str | None = None) -> Any:
    (tmp_path / ".git").mkdir()        # a checkout: its top is the job's root
    (tmp_path / "root" / "cfg").mkdir(parents=True)
    (tmp_path / "root" / "cfg" / "a.toml").write_text(TOML)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "t.sh").write_text(TT.format(cd=cd))
    if run is not None:
        (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    return read_paths([str(tmp_path / ("run.sh" if run is not None else "bench/t.sh"))])


def test_cd_before_a_relative_config_file_is_applied(tmp_path: Path) -> None:
    read = _titan(tmp_path, "cd ${ROOT}", "ROOT=./root ./bench/t.sh\n")
    assert read.facts["config.torchtitan.model.converters"] == ["quantize.linear.float8"]
    assert read.facts["config.torchtitan.base_config"] == str(tmp_path / "root/cfg/a.toml")


def test_cd_to_the_scripts_own_folder_then_relative(tmp_path: Path) -> None:
    read = _titan(tmp_path, 'cd "$(dirname "$0")"/../root')
    assert read.facts["config.torchtitan.model.converters"] == ["quantize.linear.float8"]


def test_cd_to_a_folder_not_known_here_leaves_the_base_unknown(tmp_path: Path) -> None:
    read = _titan(tmp_path, "cd $(mktemp -d)")
    base = read.facts["config.torchtitan.base_config"]
    assert isinstance(base, Unknown) and "line 2" in base.reason
    assert "config.torchtitan.model.converters" not in read.facts


def test_cd_out_of_the_job_is_the_outside_warning(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    _titan(job, "cd ../../elsewhere")
    (tmp_path / "elsewhere" / "cfg").mkdir(parents=True)
    (tmp_path / "elsewhere" / "cfg" / "a.toml").write_text(TOML)
    read = read_paths([str(job / "bench" / "t.sh")])
    assert "config.torchtitan.model.converters" not in read.facts
    assert [Path(p.path).name for p in read.problems if p.code == "outside_job"] == ["t.sh"]


def test_what_the_caller_gives_reaches_the_training_command_of_the_script(
        tmp_path: Path) -> None:
    run = _job(tmp_path, "ACCELERATE_MIXED_PRECISION=fp8 NVTE_X=1 bash x.sh\n",
               "#!/bin/bash\nNVTE_X=0\nexport NVTE_X\n" + CALLEE.partition("\n")[2])
    read = read_paths([str(run)])
    assert read.facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"
    assert read.provenance["env.ACCELERATE_MIXED_PRECISION"] == f"{run}:2"
    assert read.facts["env.NVTE_X"] == "0"            # the script's own export wins
    # ...and a script it runs in turn gets it too; one it only sets is not passed
    (tmp_path / "outer.sh").write_text("#!/bin/bash\nACCELERATE_MIXED_PRECISION=fp8 bash run.sh\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\nNVTE_Y=1\nbash x.sh\n")
    (tmp_path / "x.sh").write_text(CALLEE)
    read = read_paths([str(tmp_path / "outer.sh")])
    assert read.facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"
    assert "env.NVTE_Y" not in read.facts


@pytest.mark.parametrize(("cd", "read_it"), [
    ("cd src", True), ("cd src && ", True), ("cd $(mktemp -d)", False), ("", False),
    ("(cd src)", False)])
def test_the_python_script_a_launch_line_runs_is_found_after_cd(tmp_path: Path, cd: str,
                                                                 read_it: bool) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='bf16')\n")
    sep = "" if cd.endswith("&& ") else "\n"
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{cd}{sep}accelerate launch "
                                     "--mixed_precision fp8 train.py\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert ("config.accelerate.replaced.mixed_precision" in read.facts) is read_it
