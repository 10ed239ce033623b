"""finetrainers' launch scripts (a-r-r-o-w/finetrainers v0.1.0, examples/training/sft/*/train.sh
shape): flags built in arrays and strings and expanded into ``torchrun ... train.py``; the
``BACKEND`` branch decided; layerwise upcasting is FP8 weight storage (intent.fp8 false,
intent.fp8_weight_storage true) for LoRA only; the parallel degrees give distributed / num_gpus;
FP8D-TORCH-0005 fires on replicated float8 storage and stays quiet on one GPU; hostile scripts
(an unexpanded variable, a string no command expands, a huge array) never give a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preflight.api import check
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

SCRIPT = """#!/bin/bash
set -e -x
BACKEND="{backend}"
NUM_GPUS={gpus}
DDP_1="--parallel_backend $BACKEND --pp_degree 1 --dp_degree 1 --dp_shards 1 --cp_degree 1 --tp_degree 1"
DDP_2="--parallel_backend $BACKEND --pp_degree 1 --dp_degree 2 --dp_shards 1 --cp_degree 1 --tp_degree 1"
FSDP_2="--parallel_backend $BACKEND --pp_degree 1 --dp_degree 1 --dp_shards 2 --cp_degree 1 --tp_degree 1"
parallel_cmd=(
  {parallel}
)
model_cmd=(
  --model_name "wan"
  --pretrained_model_name_or_path "Wan-AI/Wan2.1-T2V-1.3B-Diffusers"
  {upcast}
)
training_cmd=(
  --training_type "{training}"
  --batch_size 1
  --gradient_checkpointing
)
if [ "$BACKEND" == "accelerate" ]; then
  accelerate launch --config_file "x.yaml" train.py \\
    "${{parallel_cmd[@]}}" "${{model_cmd[@]}}" "${{training_cmd[@]}}"
elif [ "$BACKEND" == "ptd" ]; then
  torchrun --standalone --nnodes=1 --nproc_per_node=$NUM_GPUS train.py \\
    "${{parallel_cmd[@]}}" "${{model_cmd[@]}}" "${{training_cmd[@]}}"
fi
"""
UPCAST = "--layerwise_upcasting_modules transformer\n  --layerwise_upcasting_storage_dtype float8_e4m3fn"


def _job(tmp_path: Path, *, parallel: str = "$DDP_2", gpus: int = 2, backend: str = "ptd",
         upcast: str = UPCAST, training: str = "lora") -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    script = tmp_path / "train.sh"
    script.write_text(SCRIPT.format(parallel=parallel, gpus=gpus, backend=backend, upcast=upcast,
                                    training=training))
    return script


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _fired(path: Path, torch: str = "2.6.0", gpu: str = "H100") -> set[str]:
    report = check([str(path)], assume={"gpu": gpu, "gpu.count": "2", "pkg.torch": torch})
    return {f.rule_id for f in report.findings}


def test_layerwise_upcasting_is_fp8_storage_not_fp8_compute(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path))
    assert read.facts["config.kinds"] == ["finetrainers"]
    assert intent["fp8"][0] is False
    assert intent["fp8_weight_storage"][0] is True
    assert intent["fp8_weight_storage"][1].endswith("train.sh:14")   # --layerwise_upcasting_modules
    assert intent["precision"][0] == "bf16"
    assert intent["activation_checkpointing"][0] is True


def test_the_expanded_string_decides_the_parallel_degrees(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path))
    # DDP_1 and FSDP_2 are written but never expanded: only DDP_2's --dp_degree 2 counts
    assert read.facts["config.finetrainers.dp_degree"] == 2
    assert intent["distributed"][0] == "ddp"
    assert intent["num_gpus"][0] == 2
    assert intent["distributed"][1].endswith("train.sh:6")


def test_one_gpu_and_sharding(tmp_path: Path) -> None:
    one, _ = _intent(_job(tmp_path / "a", parallel="$DDP_1", gpus=1))
    assert (one["distributed"][0], one["num_gpus"][0]) == ("none", 1)
    fsdp, _ = _intent(_job(tmp_path / "b", parallel="$FSDP_2"))
    assert (fsdp["distributed"][0], fsdp["num_gpus"][0]) == ("fsdp2", 2)


def test_no_upcasting_or_full_finetune_keeps_bf16_weights(tmp_path: Path) -> None:
    none, _ = _intent(_job(tmp_path / "a", upcast=""))
    assert none["fp8_weight_storage"][0] is False
    full, _ = _intent(_job(tmp_path / "b", training="full-finetune"))
    assert full["fp8_weight_storage"][0] is False


def test_the_accelerate_branch_is_read_when_the_script_picks_it(tmp_path: Path) -> None:
    intent, read = _intent(_job(tmp_path, backend="accelerate"))
    assert read.facts["config.finetrainers.parallel_backend"] == "accelerate"
    assert intent["fp8_weight_storage"][0] is True


def test_rule_fires_on_replicated_fp8_storage_and_not_on_one_gpu(tmp_path: Path) -> None:
    assert "FP8D-TORCH-0005" in _fired(_job(tmp_path / "a"))
    assert "FP8D-TORCH-0005" not in _fired(_job(tmp_path / "b", parallel="$DDP_1", gpus=1))
    assert "FP8D-TORCH-0005" not in _fired(_job(tmp_path / "c"), torch="2.9.1")
    assert "FP8D-TORCH-0005" in _fired(_job(tmp_path / "d"), torch="2.9.1", gpu="A100")
    # no FP8-compute rule reads this job as asking for FP8
    assert "FP8D-HW-0001" not in _fired(_job(tmp_path / "e"), gpu="A100")


def test_hostile_a_degree_from_the_environment_is_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, parallel="--parallel_backend ptd --dp_degree $DP"))
    assert isinstance(intent["num_gpus"][0], Unknown)
    assert isinstance(intent["distributed"][0], Unknown)
    assert "FP8D-TORCH-0005" not in _fired(_job(tmp_path / "b", parallel="--dp_degree $DP "
                                                "--parallel_backend ptd"))


def test_hostile_modules_from_the_environment_are_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_job(tmp_path, upcast="--layerwise_upcasting_modules $MODS"))
    assert isinstance(intent["fp8_weight_storage"][0], Unknown)


def test_hostile_a_huge_array_is_bounded(tmp_path: Path) -> None:
    upcast = " ".join(f"--flow_shift {n}" for n in range(20_000)) + "\n  " + UPCAST
    intent, read = _intent(_job(tmp_path, upcast=upcast))
    assert intent["fp8"][0] is not True   # read or cut short (Unknown), never a traceback
    assert read.facts["config.kinds"] == ["finetrainers"]


def test_a_script_without_finetrainers_flags_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    script = tmp_path / "run.sh"
    script.write_text("torchrun --nproc_per_node=2 train.py --output_dir out "
                      "--per_device_train_batch_size 1 --bf16\n")
    read = read_paths([str(script)], None)
    assert "finetrainers" not in (read.facts.get("config.kinds") or [])
