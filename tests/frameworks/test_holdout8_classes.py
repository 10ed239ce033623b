"""The reader misses of the blind holdout8 run (eval9, benchmarks/results/agreement-holdout8-*),
each as a class:

- a YAML whose only TrainingArguments-like keys are ones every trainer config has (``seed``) was
  read as HF Trainer arguments, and its FP8 came out "no" (AReaL's examples/math/*.yaml);
- slime's Megatron flags lived under ``config.slime.*`` only, so Megatron's rules (which read
  ``config.megatron.*``) never saw them (Megatron-LM issue 2582 on slime: FP8D-MEG-0009);
- a bare flag followed by an array expanded whole (``--colocate ${PRECISION_ARGS[@]}``) took the
  array as its value.
"""

from __future__ import annotations

from pathlib import Path

from preflight import api
from preflight.facts import Facts, Unknown
from preflight.frameworks import detect
from preflight.intent import derive
from preflight.jobs.read import read_paths


def test_generic_trainer_keys_alone_are_no_training_arguments(tmp_path: Path) -> None:
    assert detect("yaml", {"seed": 1, "experiment_name": "x", "actor": {"backend": "megatron"},
                           "learning_rate": 1e-5})[0] is None
    # output_dir is any trainer's too (frameworks/_claim.py): a TrainingArguments-only field claims
    assert detect("yaml", {"seed": 1, "output_dir": "o", "bf16": True})[0] is None
    assert detect("yaml", {"seed": 1, "output_dir": "o", "bf16": True,
                           "per_device_train_batch_size": 1})[0] == "hf_trainer"
    # inclusionAI/AReaL @ 4aef98d8 examples/math/gsm8k_sft_archon_fp8.yaml, reduced
    path = tmp_path / "sft.yaml"
    path.write_text("experiment_name: gsm8k-sft\nseed: 1\ntotal_train_epochs: 1\n"
                    "actor:\n  backend: 'archon:d8'\n  archon:\n    fp8_config:\n"
                    "      mode: blockwise\n")
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not False             # never "no" for a file not read


def test_slime_flags_are_megatron_arguments(tmp_path: Path, slime_script: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text(slime_script)
    read = read_paths([str(path)])
    assert read.facts["config.megatron.fp8_param_gather"] is True
    assert read.facts["config.megatron.optimizer_cpu_offload"] is True
    assert read.facts["config.slime.colocate"] is True        # the array is not its value
    assert read.facts["config.kinds"] == ["slime"]             # no Megatron job of its own
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.precision"] == "bf16"               # slime's, not Megatron's default
    assert "megatron" in values["intent.stack"]


def test_megatron_rules_reach_a_slime_job(tmp_path: Path, slime_script: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text(slime_script)
    report = api.run_check(api.CheckOptions(paths=(str(path),), smoke=False, assume={
        "gpu": "B200", "gpu.count": "8", "pkg.megatron-core": "0.15.0"}))
    assert "FP8D-MEG-0009" in {f.rule_id for f in report.findings}


def test_a_megatron_value_flag_still_takes_its_value(tmp_path: Path,
                                                      slime_script: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text(slime_script.replace("--fp8-recipe mxfp8", "--fp8-recipe \"${RECIPE[@]}\""))
    read = read_paths([str(path)])
    got = read.facts["config.megatron.fp8_recipe"]
    assert isinstance(got, Unknown)          # NEEDS_VALUE: refused, not the array as a value


# NVIDIA-NeMo/Megatron-Bridge @ 0dae7282 (2026-05): examples/models/nemotron/nemotron_3/super/
# slurm_pretrain.sh runs `run_recipe.py --recipe nemotron_3_super_pretrain_config`, whose body in
# src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py:102 sets the NVFP4 preset (BF16 in
# the v0.6.0 table); reduced.
RECIPE = '''from megatron.bridge.training.config import ConfigContainer


def nemotron_3_super_pretrain_config() -> ConfigContainer:
    cfg = _common()
    # Mixed Precision
    cfg.mixed_precision = "{preset}"
    return cfg
'''


def _mbridge_job(tmp_path: Path, presets: list[str]) -> Path:
    (tmp_path / ".git").mkdir()         # a checkout: its root is the job's (jobs/boundary.py)
    recipes = tmp_path / "src/megatron/bridge/recipes/nemotronh"
    recipes.mkdir(parents=True)
    body = RECIPE.format(preset=presets[0])
    if len(presets) > 1:
        body = body.replace(f'    cfg.mixed_precision = "{presets[0]}"\n',
                            f'    if FLAG:\n        cfg.mixed_precision = "{presets[0]}"\n'
                            f'    else:\n        cfg.mixed_precision = "{presets[1]}"\n')
    (recipes / "nemotron_3_super.py").write_text(body)
    script = tmp_path / "examples/models/nemotron/nemotron_3/super/slurm_pretrain.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/bash\nMODEL_NAME=nemotron_3_super\n"
                      'CMD="uv run --no-sync python scripts/training/run_recipe.py"\n'
                      'CMD="$CMD --recipe ${MODEL_NAME}_pretrain_config"\n$CMD\n')
    return script


def test_the_recipe_in_the_job_wins_over_the_table(tmp_path: Path) -> None:
    script = _mbridge_job(tmp_path, ["nemotron_3_super_bf16_with_nvfp4_mixed"])
    read = read_paths([str(script)])
    assert read.facts["config.megatron_bridge.recipe_preset"] == \
        "nemotron_3_super_bf16_with_nvfp4_mixed"
    values, prov = derive(Facts(read.facts, read.provenance))
    assert (values["intent.fp8"], values["intent.recipe"]) == (True, "nvfp4")
    assert "nemotron_3_super.py:7" in prov["intent.recipe"]
    # without the source in the job: the table of the installed release (v0.6.0: BF16); with no
    # version known, undetermined, as the releases differ (NVFP4 at v0.4.0 / v0.5.0)
    (tmp_path / "src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py").unlink()
    read = read_paths([str(script)])
    values, _ = derive(Facts({**read.facts, "pkg.megatron-bridge.version": "0.6.0"},
                             read.provenance))
    assert values["intent.fp8"] is False and values["intent.precision"] == "bf16"
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)


def test_a_recipe_with_two_presets_is_not_decided_by_its_source(tmp_path: Path) -> None:
    script = _mbridge_job(tmp_path, ["bf16_with_mxfp8_mixed", "bf16_mixed"])
    read = read_paths([str(script)])
    assert "config.megatron_bridge.recipe_preset" not in read.facts
