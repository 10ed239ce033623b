"""A wrapper run several times with different environment prefixes (``bash ./w.sh``, then
``PR=fp8 bash ./w.sh``): each run is read with its own environment, a sourced
``export PR=${PR:-bf16}`` keeps the caller's value, and ``sbatch ${SBATCH_ARG} <<EOF`` runs its
here-document (holdout21: Megatron-MoE-ModelZoo's sbatch_benchmarking.sh had all its ``${PR}``
branches merged, so MXFP8 and CPU-offload flags from branches no run takes fired rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.jobs.read import read_paths

WRAPPER = """#!/bin/bash
set -euxo pipefail
export MEGATRON_PATH=${MEGATRON_PATH:-"/opt/megatron"}
export WORKSPACE=$(dirname "$(readlink -f "$0")")
source "${WORKSPACE}/conf/common.conf"
TRAINING_PARAMS=""
OPTIMIZER_OFFLOAD=${OPTIMIZER_OFFLOAD:-0}
if [[ ${OPTIMIZER_OFFLOAD} == 1 ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --optimizer-cpu-offload"
fi
if [[ ${PR} == "fp8" ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --fp8-recipe blockwise --fp8-format e4m3"
fi
if [[ ${PR} == "mxfp8" ]]; then
    TRAINING_PARAMS="${TRAINING_PARAMS} --fp8-recipe mxfp8 --fp8-format e4m3"
fi
export TRAINING_CMD="python ${TRAINING_SCRIPT_PATH} ${TRAINING_PARAMS} --bf16"
SBATCH_ARG=""
if [[ ${DRY_RUN:-0} -eq 1 ]]; then
    echo "${TRAINING_CMD}"
else
    sbatch ${SBATCH_ARG} <<EOF
#!/bin/bash
#SBATCH --nodes=2
srun --mpi=pmix bash -c \\\\\\${TRAINING_CMD} 2>&1 | tee x.log
EOF
fi
"""
CONF = ('export TRAINING_SCRIPT_PATH=${TRAINING_SCRIPT_PATH:-"${MEGATRON_PATH}/pretrain_gpt.py"}\n'
        'export PR=${PR:-"bf16"}\n')
RECIPE = "config.megatron.fp8_recipe"


def _job(tmp_path: Path, run: str, wrapper: str = WRAPPER) -> Path:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "common.conf").write_text(CONF)
    (tmp_path / "w.sh").write_text(wrapper)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    return tmp_path / "run.sh"


def _facts(path: Path) -> dict[str, Any]:
    return dict(read_paths([str(path)]).facts)


JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout21-megatron-moe-modelzoo-mixtral-8x22b-pr-fp8-env-blockwise-e4m3-param-gather-16x8-h100"
       / "files")


def test_the_modelzoo_runs_are_read_each_with_its_prefix() -> None:
    # three runs of sbatch_benchmarking.sh, the third with PR=fp8: the job is the FP8 run (the
    # lead's multi-launch policy, session 43), its recipe blockwise, never the mxfp8 branch no
    # run takes; OPTIMIZER_OFFLOAD=0 is decided
    facts = _facts(JOB / "best_practice" / "mixtral" / "run_mixtral_8x22B.sh")
    assert facts.get(RECIPE) == "blockwise"
    assert "config.megatron.optimizer_cpu_offload" not in facts
    assert facts.get("config.megatron.decoder_first_pipeline_num_layers") != "${PP_FIRST}"
    # its yq flags: the launch after `mkdir -p ${SLURM_LOGS} || {\n ... exit 1\n}` runs
    # (reading/shellreach.py: an exit in a { } group is no stop; shell18)
    assert facts.get("config.megatron.use_distributed_optimizer") is True


def test_scripts_calling_each_other_with_prefixes_end(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("#!/bin/bash\nPR=fp8 bash ./b.sh\npython pretrain_gpt.py --bf16\n")
    (tmp_path / "b.sh").write_text("#!/bin/bash\nPR=bf16 bash ./a.sh\nPR=mxfp8 bash ./a.sh\n")
    facts = _facts(tmp_path / "a.sh")        # bounded: no recursion error, no hang
    assert RECIPE not in facts


def test_a_reduced_wrapper_decides_its_branches_from_the_prefix(tmp_path: Path) -> None:
    # the sourced conf's `${TRAINING_SCRIPT_PATH:-"${MEGATRON_PATH}/pretrain_gpt.py"}` needs the
    # MEGATRON_PATH the wrapper sets above its `source`; without it no launch was found and the
    # whole text was read, every ${PR} branch merged: mxfp8 + CPU offload under PR=fp8
    facts = _facts(_job(tmp_path, "PR=fp8 bash ./w.sh\n"))
    assert facts.get(RECIPE) == "blockwise"
    assert "config.megatron.optimizer_cpu_offload" not in facts


def test_a_required_variable_takes_the_callers_prefix(tmp_path: Path) -> None:
    """``PR=${PR:?set PR}`` in the called script (holdout23 Lambda gb300: ``CONFIG=${CONFIG:?set
    CONFIG=...}`` under ``CONFIG=x sbatch run.slurm``): the caller's value, as ``${PR:-d}`` takes
    it; it was "computed at run time", so the launch named no config. Unset, the shell stops the
    script: no value is made up."""
    wrapper = WRAPPER.replace(
        "TRAINING_PARAMS=\"\"\n", "PR=${PR:?set PR to bf16, fp8 or mxfp8}\nTRAINING_PARAMS=\"\"\n", 1)
    assert wrapper != WRAPPER
    for run, recipe in (("PR=fp8 bash ./w.sh\n", "blockwise"), ("PR=mxfp8 bash ./w.sh\n", "mxfp8")):
        job = tmp_path / recipe
        job.mkdir()
        (job / "conf").mkdir()
        (job / "conf" / "common.conf").write_text(CONF.replace('export PR=${PR:-"bf16"}\n', ""))
        (job / "w.sh").write_text(wrapper)
        (job / "run.sh").write_text("#!/bin/bash\n" + run)
        assert _facts(job / "run.sh").get(RECIPE) == recipe
