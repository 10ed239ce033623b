"""slime hands its command line to Megatron-LM's parser: Megatron's own flags reach the Megatron
rules as ``config.megatron.*`` (slime's, SGLang's and the router's do not), and a store_true
flag never takes the next word as its value (holdout8 meg-2582; slime/utils/arguments.py at
v0.3.1, Megatron-LM megatron/training/arguments.py at core_v0.16.0)."""

from __future__ import annotations

from pathlib import Path

import preflight
from preflight.facts import Facts
from preflight.frameworks import megatron_args, slime
from preflight.frameworks.megatron_flags import MEGATRON_BARE, SLIME_BARE, SLIME_FLAGS
from preflight.intent import derive
from preflight.jobs.read import read_paths


def _facts(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "run.sh"
    path.write_text(text)
    return dict(slime.read_text(str(path), text, {}).facts)


def test_megatron_flags_of_a_slime_job_are_megatron_facts(tmp_path: Path,
                                                         slime_script: str) -> None:
    facts = _facts(tmp_path, slime_script)
    for flag, value in (("fp8_recipe", "mxfp8"), ("fp8_param_gather", True),
                        ("optimizer_cpu_offload", True), ("fp8_format", "e4m3")):
        assert facts[f"config.megatron.{flag}"] == value
        assert facts[f"config.slime.{flag}"] == value
    for own in ("actor_num_nodes", "rollout_batch_size", "colocate",
                "sglang_mem_fraction_static"):
        assert f"config.slime.{own}" in facts
        assert f"config.megatron.{own}" not in facts


def test_handed_over_facts_do_not_make_megatron_a_kind_of_the_job(tmp_path: Path,
                                                                  slime_script: str) -> None:
    # Megatron's derive (fp32 unless --bf16) must not overrule slime's (bf16 unless --fp16)
    path = tmp_path / "run.sh"
    path.write_text(slime_script)
    read = read_paths([str(path)])
    assert read.facts["config.kinds"] == ["slime"]
    assert read.facts["config.megatron.args_of"] == "slime"
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.precision"] == "bf16" and values["intent.fp8"] is True


def test_store_true_flags_take_no_value(tmp_path: Path, slime_script: str) -> None:
    facts = _facts(tmp_path, slime_script)
    assert facts["config.slime.colocate"] is True
    text = "torchrun pretrain_gpt.py --use-distributed-optimizer \\\n  $EXTRA --fp8-format hybrid\n"
    out = megatron_args.read_args_text(str(tmp_path / "m.sh"), text, {})
    assert out.facts["config.megatron.use_distributed_optimizer"] is True


def test_bare_tables_hold_the_upstream_actions() -> None:
    # store_true in slime v0.3.1 / Megatron-LM; value-taking flags are not in the tables
    assert {"colocate", "offload", "use-tis"} <= SLIME_BARE <= SLIME_FLAGS
    assert {"fp8-param-gather", "optimizer-cpu-offload", "bf16"} <= MEGATRON_BARE
    assert not {"fp8-format", "fp8-recipe", "rollout-batch-size"} & (SLIME_BARE | MEGATRON_BARE)
    assert "fp8-recipe" not in SLIME_FLAGS


def test_a_slime_job_with_cpu_offload_and_mxfp8_param_gather_fires_meg_0009(
        tmp_path: Path, slime_script: str) -> None:
    path = tmp_path / "run.sh"
    path.write_text(slime_script)
    report = preflight.check(str(path), smoke=False, assume={"gpu": "B200",
                                                             "pkg.megatron-core": "0.15.0"})
    assert "FP8D-MEG-0009" in {f.rule_id for f in report.findings}
    fixed = slime_script.replace("--fp8-recipe mxfp8", "--fp8-recipe delayed")
    path.write_text(fixed)
    report = preflight.check(str(path), smoke=False, assume={"gpu": "B200",
                                                             "pkg.megatron-core": "0.15.0"})
    assert "FP8D-MEG-0009" not in {f.rule_id for f in report.findings}



def test_ms_swift_megatron_flags_are_not_handed_to_megatron_lm_rules(tmp_path: Path) -> None:
    # ms-swift v4.5.2 `megatron sft` builds on megatron.core with its own initialize_megatron
    # (swift/megatron/utils/megatron_lm_utils.py l.85-97: mpu and seeds only; nothing under
    # swift/megatron imports megatron.training), so Megatron-LM's argument checks do not run,
    # and its defaults differ (use_distributed_optimizer: True, megatron_args.py l.587)
    path = tmp_path / "train.sh"
    path.write_text("megatron sft --model Qwen/Qwen3-8B --fp8_recipe blockwise --fp8_format e4m3"
                    " --fp8_param_gather true\n")
    read = read_paths([str(path)])
    assert read.facts["config.kinds"] == ["swift"]
    assert not any(n.startswith("config.megatron.") for n in read.facts)
