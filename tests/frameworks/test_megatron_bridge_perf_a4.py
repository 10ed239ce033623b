"""The Megatron-Bridge perf launcher as AI-Hypercomputer gpu-recipes a4 runs it (@ 1f338bb4,
training/a4/deepseek_v3/megatron-bridge-gke/nemo2602/.../launcher.sh, reduced): the worker's line
``numactl ... nsys profile ... nice -10 python scripts/performance/custom_setup_experiment.py
--compute_dtype fp8_mx ...`` with the job's copy of the launcher beside it. Once read (the
heredoc-to-file launch is the shell reader's), its facts reach Megatron-Bridge's, Megatron's, TE's
and the hardware rules: judged on B200 with the NeMo 26.02 container's versions (Megatron-Bridge
docs/releases/software-versions.md @ 067f987d) no error fires, on H100 MXFP8-needs-Blackwell does."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight

COPY = ("from argument_parser import parse_cli_args\n\n"
        "def main(model_recipe_name: str, compute_dtype: str) -> None:\n"
        "    args, _ = parse_cli_args().parse_known_args()\n")
WORKER = """cd /opt/Megatron-Bridge ;

numactl \\
  --cpunodebind=$((LOCAL_RANK/4)) \\
  --membind=$((LOCAL_RANK/4))           nsys profile \\
  -t nvtx,cuda \\
  --capture-range=cudaProfilerApi \\
  -o "/logs/rank-$RANK" \\
  --force-overwrite true \\
nice -10 \\
python scripts/performance/custom_setup_experiment.py \\
  --gpu b200 \\
  --model_family_name deepseek \\
  --model_recipe_name deepseek_v3 \\
  --gpus_per_node 8 \\
  --num_gpus 256 \\
  --seq_length 4096 \\
  --compute_dtype {dtype} \\
  --global_batch_size 4096 \\
  --micro_batch_size 1 \\
  --tensor_model_parallel_size 1 \\
  --pipeline_model_parallel_size 16 \\
  --expert_model_parallel_size 8 \\
  --cuda_graph_impl transformer_engine \\
  --cuda_graph_scope moe_router,moe_preprocess,attn \\
  --max_steps 30
"""
NEMO_2602 = {"pkg.torch": "2.10.0a0", "pkg.transformer-engine": "2.12.0",
             "pkg.megatron-core": "0.16.0", "pkg.megatron-bridge": "0.3.0"}
QUIET = {"FP8D-HW-0004", "FP8D-HW-0001", "FP8D-MEG-0011", "FP8D-TE-0059"}


def _check(tmp_path: Path, gpu: str, dtype: str = "fp8_mx") -> list[preflight.Finding]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    job = tmp_path / "recipe"
    job.mkdir(exist_ok=True)
    (job / "custom_setup_experiment.py").write_text(COPY)
    (job / "worker_command.sh").write_text(WORKER.format(dtype=dtype))
    report = preflight.check([str(job / "worker_command.sh")], smoke=False,
                             assume={"gpu": gpu, "gpu.count": "8", **NEMO_2602})
    assert report.facts["intent.fp8"] is (dtype != "bf16")
    if dtype == "fp8_mx":
        assert report.facts["intent.recipe"] == "mxfp8"
        assert report.facts["config.megatron_bridge.model.expert_model_parallel_size"] == 8
    return list(report.findings)


def test_a4_worker_on_b200_no_error(tmp_path: Path) -> None:
    found = _check(tmp_path, "B200")
    assert not [f.rule_id for f in found if f.severity == "error"]
    assert not QUIET & {f.rule_id for f in found}


def test_a4_worker_mxfp8_on_hopper_fires(tmp_path: Path) -> None:
    found = _check(tmp_path, "H100")
    assert "FP8D-HW-0004" in {f.rule_id for f in found}


@pytest.mark.parametrize("dtype", ["bf16", "fp8_mx"])
def test_a4_worker_recipe(tmp_path: Path, dtype: str) -> None:
    (tmp_path / dtype).mkdir()
    found = _check(tmp_path / dtype, "B200", dtype)
    assert not [f.rule_id for f in found if f.severity == "error"]
