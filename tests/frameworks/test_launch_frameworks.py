"""Megatron-Bridge, verl, NeMo-RL, NeMo-Automodel and slime read from their public launch
scripts and YAML (issue 22 items 2 and 4; fixtures cite repository and commit)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.findings import Location
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
NRL = FIX / "nemo_rl" / "examples" / "configs"


def _read(*paths: Path | str, kind: str | None = None) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], kind)
    values, prov = derive(Facts(read.facts, read.provenance))
    intent = {k[7:]: (v, prov[k]) for k, v in values.items()}
    return intent, read


def _line(source: str) -> tuple[str, int]:
    # a provenance may end with a note, "run.sh:34 (assumes $MODEL_ARGS is empty)" (shell19):
    # read it as the report's Location does
    loc = Location.from_source(source)
    assert loc is not None and loc.line is not None, source
    return Path(loc.path).name, loc.line


# ---- verl ------------------------------------------------------------------------------------

def test_verl_fp8_end_to_end_from_bash_arrays() -> None:
    intent, read = _read(FIX / "verl" / "run_nemotron_nano_v3_30b_a3b_megatron_fp8.sh")
    assert [k for _, k in read.files] == ["verl"]
    assert intent["fp8"][0] is True and intent["backend"][0] == "te"
    assert intent["recipe"][0] == "blockwise" and intent["format"][0] == "e4m3"
    assert _line(intent["recipe"][1]) == ("run_nemotron_nano_v3_30b_a3b_megatron_fp8.sh", 86)
    assert intent["distributed"][0] == "megatron"          # model_engine=megatron
    assert intent["tp"][0] == 8 and intent["ep"][0] == 8
    assert intent["rollout.engine"][0] == "vllm" and intent["rollout.fp8"][0] is True
    assert intent["rollout.recipe"][0] == "blockwise"
    assert intent["rollout.kv_cache_fp8"][0] is False


def test_verl_commented_fp8_lines_mean_bf16() -> None:
    intent, _ = _read(FIX / "verl" / "run_nemotron_nano_v3_30b_a3b_megatron.sh")
    assert intent["fp8"][0] is False and intent["rollout.fp8"][0] is False


def test_verl_fp8_rollout_behind_an_unset_knob_is_off_by_default() -> None:
    # `if [ "${ROLLOUT_QUANTIZATION}" = fp8 ]` with ROLLOUT_QUANTIZATION=${...:-}: the branch
    # that adds +actor_rollout_ref.rollout.quantization=fp8 does not run
    intent, read = _read(FIX / "verl" / "run_qwen3_30b_a3b_megatron.sh")
    assert intent["fp8"][0] is False and intent["rollout.fp8"][0] is False
    assert "config.verl.actor_rollout_ref.rollout.quantization" not in read.facts
    # `if [ "${infer_tp}" = 4 ] || [ "${infer_tp}" = 2 ]` is decided (reading/shellchain.py):
    # infer_tp is rollout_tp's default 4, so the first arm's 1024
    seqs = read.facts["config.verl.actor_rollout_ref.rollout.max_num_seqs"]
    assert seqs == 1024
    assert intent["seq_len"][0] == 2048 + 8192


def test_verl_job_yaml_named_by_config_path_is_merged_under_the_overrides(
        tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "my_trainer.yaml").write_text(
        "defaults:\n  - ppo_megatron_trainer\n  - _self_\nactor_rollout_ref:\n  actor:\n"
        "    megatron:\n      override_transformer_config:\n        fp8: hybrid\n"
        "        fp8_recipe: tensorwise\n  rollout:\n    name: sglang\n")
    run = tmp_path / "run.sh"
    # an absolute --config-path (a relative one is taken from verl/trainer/: the next tests)
    run.write_text(f"python3 -m verl.trainer.main_ppo --config-path={conf} "
                   "--config-name=my_trainer \\\n  actor_rollout_ref.actor.megatron."
                   "override_transformer_config.fp8_recipe=blockwise\n")
    intent, read = _read(run)
    assert sorted(k for _, k in read.files) == ["verl", "verl"]
    assert intent["format"][0] == "hybrid" and _line(intent["format"][1])[0] == "my_trainer.yaml"
    assert intent["recipe"][0] == "blockwise" and _line(intent["recipe"][1]) == ("run.sh", 2)
    assert intent["distributed"][0] == "megatron"          # defaults: ppo_megatron_trainer
    assert intent["rollout.engine"][0] == "sglang"


def test_relative_config_path_is_taken_from_the_module_that_declares_hydra_main(
        tmp_path: Path) -> None:
    # verl v0.9.0 recipe scripts: `-m verl.trainer.main_ppo --config-path=config
    # --config-name=ppo_megatron_trainer.yaml` is verl's packaged Megatron trainer config
    # (Hydra resolves --config-path from verl/trainer/), whose rollout quantization is null
    run = tmp_path / "run.sh"
    run.write_text("python3 -m verl.trainer.main_ppo --config-path=config "
                   "--config-name='ppo_megatron_trainer.yaml' actor_rollout_ref.rollout.name=vllm "
                   "+actor_rollout_ref.actor.megatron.override_transformer_config.fp8=e4m3\n")
    intent, read = _read(run)
    assert not [p for p in read.problems if p.code == "reference"]
    assert intent["distributed"][0] == "megatron" and intent["fp8"][0] is True
    assert intent["rollout.fp8"][0] is False and intent["rollout.is_correction"][0] is False
    # a folder of its own next to the launch script is not where Hydra looks
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "mine.yaml").write_text("actor_rollout_ref:\n  rollout:\n"
                                                 "    name: sglang\n")
    run.write_text("python3 -m verl.trainer.main_ppo --config-path=conf --config-name=mine\n")
    intent, read = _read(run)
    assert isinstance(intent["fp8"][0], Unknown)
    assert "verl/trainer/conf/mine.yaml" in intent["fp8"][0].reason
    # run from a checkout of verl, where verl/trainer/conf is the job's: as a module or a script
    (tmp_path / "verl" / "trainer").mkdir(parents=True)
    (tmp_path / "conf").rename(tmp_path / "verl" / "trainer" / "conf")
    for line in ("python3 -m verl.trainer.main_ppo", "python3 verl/trainer/main_ppo.py"):
        run.write_text(f"{line} --config-path=conf --config-name=mine\n")
        intent, _ = _read(run)
        assert intent["rollout.engine"][0] == "sglang", line


def test_verl_job_yaml_that_is_not_here_leaves_fp8_undetermined(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("python3 -m verl.trainer.main_ppo --config-path=elsewhere "
                   "--config-name=my_trainer trainer.nnodes=1\n")
    intent, read = _read(run)
    assert isinstance(intent["fp8"][0], Unknown)
    assert any(p.code == "reference" for p in read.problems)


# ---- NeMo-RL ---------------------------------------------------------------------------------

def test_nemo_rl_yaml_is_nemo_rl_not_lightning() -> None:
    # before issue 22 a NeMo-RL YAML was read as Lightning ("lightning is not installed")
    intent, read = _read(NRL / "grpo_math_8B_megatron_fp8.yaml")
    assert {k for _, k in read.files} == {"nemo_rl"} and len(read.files) == 4
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"
    assert _line(intent["recipe"][1]) == ("grpo_math_8B_megatron_fp8.yaml", 17)
    assert intent["precision"][0] == "bf16" and intent["distributed"][0] == "megatron"
    assert intent["rollout.fp8"][0] is True and intent["rollout.engine"][0] == "vllm"
    assert read.facts["config.nemo_rl.policy.megatron_cfg.env_vars."
                      "NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"
    # make_sequence_length_divisible_by is 1, but on the Megatron path NeMo-RL pads every packed
    # row to 128 tokens for blockwise FP8 by itself (data.py at v0.7.0)
    assert intent["packing"][0] is True and intent["pad_multiple"][0] == 128


def test_nemo_rl_fp8_kv_cache_and_interpolated_padding() -> None:
    intent, _ = _read(NRL / "recipes" / "llm" / "grpo-qwen3-8b-base-1n8g-fp8-kvcache-megatron.yaml")
    assert intent["rollout.kv_cache_fp8"][0] is True and intent["fp8"][0] is False
    assert intent["tp"][0] == 4


def test_launch_line_override_beats_the_yaml_with_its_own_line(tmp_path: Path) -> None:
    # the configs inside the job (a YAML outside it is never read: the read boundary)
    shutil.copytree(NRL, tmp_path / "configs")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nuv run examples/run_grpo.py \\\n"
                   "  --config configs/grpo_math_8B_megatron_fp8.yaml \\\n"
                   "  policy.megatron_cfg.fp8_cfg.fp8_recipe=tensorwise \\\n"
                   "  ++policy.megatron_cfg.fp8_cfg.fp8='hybrid' \\\n"
                   "  ~policy.generation.vllm_cfg.precision\n")
    intent, read = _read(run)
    assert intent["recipe"][0] == "tensorwise" and _line(intent["recipe"][1]) == ("run.sh", 4)
    assert intent["format"][0] == "hybrid" and _line(intent["format"][1]) == ("run.sh", 5)
    # values the line does not touch keep the YAML's place
    assert _line(intent["fp8"][1]) == ("grpo_math_8B_megatron_fp8.yaml", 15)
    # a deleted key stays deleted although the YAML is read too
    assert read.facts["config.nemo_rl.policy.generation.vllm_cfg.precision"] is None
    assert intent["rollout.fp8"][0] is False


def test_nemo_rl_test_suite_script_reads_the_recipe_its_name_gives() -> None:
    # common.env: CONFIG_PATH=$(echo $SCRIPT_DIR/${EXP_NAME}.yaml | sed ...), EXP_NAME from
    # $(basename $0 .sh): the recipe beside the script (reading/shellnames.py, holdout17)
    script = FIX / "nemo_rl" / "tests" / "test_suites" / "llm" / \
        "grpo-llama3.1-8b-instruct-2n8g-megatron-fp8-e2e.sh"
    intent, read = _read(script)
    recipe = FIX / "nemo_rl" / "examples" / "configs" / "recipes" / "llm" / (script.stem + ".yaml")
    assert [p for p, _ in read.files][:2] == [str(script), str(recipe)]
    assert intent["fp8"][0] is True and intent["fp8"][1].startswith(f"{recipe}:")


def test_nemo_rl_config_decided_at_run_time_is_undetermined_not_no(tmp_path: Path) -> None:
    # the same layout whose sed is beyond the literal forms read (`sed -E`): never "no"
    root = tmp_path / "nemo_rl"
    shutil.copytree(FIX / "nemo_rl", root)
    env = root / "tests" / "test_suites" / "llm" / "common.env"
    env.write_text(env.read_text().replace("| sed '", "| sed -E '"))
    intent, read = _read(root / "tests" / "test_suites" / "llm" /
                         "grpo-llama3.1-8b-instruct-2n8g-megatron-fp8-e2e.sh")
    assert [k for _, k in read.files] == ["nemo_rl"]
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and "$CONFIG_PATH" in fp8.reason


def test_a_run_sft_script_with_trainer_flags_is_not_nemo_rl() -> None:
    _, read = _read(FIX / "hf_trainer" / "run_sft_deepspeed.sh")
    assert "nemo_rl" not in {k for _, k in read.files}


# ---- Megatron-Bridge -------------------------------------------------------------------------

def test_megatron_bridge_recipe_preset_through_srun_bash_lc() -> None:
    intent, read = _read(FIX / "megatron_bridge" / "deepseek_v4_slurm_pretrain.sh")
    assert [k for _, k in read.files] == ["megatron_bridge"]
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert "deepseek_v4_flash_pretrain_mxfp8_config" in intent["recipe"][1]
    assert intent["fp8_params"][0] is True and intent["seq_len"][0] == 4096
    tp = intent["tp"][0]
    assert isinstance(tp, Unknown) and "$TP" in tp.reason     # from `IFS=, read -r TP ...`


def test_megatron_bridge_model_fp8_override_is_replaced_by_the_recipes_preset() -> None:
    intent, read = _read(FIX / "megatron_bridge" / "slurm_pretrain_fsdp.sh")
    assert read.facts["config.megatron_bridge.model.fp8"] == "e4m3"
    fp8, src = intent["fp8"]
    assert fp8 is False and "replaced by mixed_precision" in src and "bf16_mixed" in src


@pytest.mark.parametrize("line, fp8, recipe", [
    ("mixed_precision=bf16_with_mxfp8_mixed", True, "mxfp8"),
    ("mixed_precision=bf16-with-fp8-subchannel-scaling-mixed", True, "blockwise"),
    ("mixed_precision.fp8=hybrid mixed_precision.fp8_recipe=delayed", True, "delayed"),
    ("model.fp8=e4m3", False, None),
])
def test_megatron_bridge_presets_on_the_launch_line(tmp_path: Path, line: str, fp8: bool,
                                                    recipe: str | None) -> None:
    run = tmp_path / "run.sh"
    run.write_text("torchrun --nproc_per_node=8 scripts/training/run_recipe.py "
                   f"--recipe llama3_8b_pretrain_config -tp 2 {line}\n")
    intent, read = _read(run)
    assert intent["fp8"][0] is fp8 and intent["tp"][0] == 2
    if recipe:
        assert intent["recipe"][0] == recipe


def test_megatron_bridge_unknown_recipe_leaves_fp8_undetermined(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("python scripts/training/run_recipe.py --recipe my_own_config\n")
    fp8 = _read(run)[0]["fp8"][0]
    assert isinstance(fp8, Unknown) and "my_own_config" in fp8.reason


def test_megatron_bridge_recipe_table_knows_names_that_mislead() -> None:
    from preflight.frameworks.megatron_bridge_presets import for_recipe

    # named bf16, but its body sets the nemotron_h FP8 current-scaling preset (v0.6.0)
    got = for_recipe("nemotronh_47b_pretrain_8gpu_h100_bf16_config")
    assert got is not None and got[0]["fp8"] == "hybrid"
    assert for_recipe("llama3_8b_pretrain_config") is not None
    assert for_recipe("llama3_8b_pretrain_config")[0]["fp8"] is None     # type: ignore[index]
    assert for_recipe("no_such_recipe_config") is None


# ---- NeMo-Automodel --------------------------------------------------------------------------

def test_automodel_torchao_and_te_fp8_blocks() -> None:
    intent, read = _read(FIX / "automodel" / "llama3_1_8b_hellaswag_fp8.yaml")
    assert [k for _, k in read.files] == ["automodel"]
    assert (intent["backend"][0], intent["recipe"][0]) == ("torchao", "tensorwise")
    assert intent["compile"][0] is True and intent["pad_multiple"][0] == 16
    intent, _ = _read(FIX / "automodel" / "deepseek_v3_te_mxfp8_gb200.yaml")
    assert (intent["backend"][0], intent["recipe"][0]) == ("te", "mxfp8")
    assert intent["ep"][0] == 64


def test_automodel_dotted_flags_override_the_yaml(tmp_path: Path) -> None:
    shutil.copy(FIX / "automodel" / "llama3_1_8b_hellaswag_fp8.yaml", tmp_path)
    run = tmp_path / "run.sh"
    run.write_text("automodel llama3_1_8b_hellaswag_fp8.yaml "
                   "--nproc-per-node 8 --fp8.recipe_name rowwise --compile.enabled=False\n")
    intent, _ = _read(run)
    assert intent["recipe"][0] == "rowwise" and _line(intent["recipe"][1]) == ("run.sh", 1)
    assert intent["compile"][0] is False and intent["num_gpus"][0] == 8


# ---- slime -----------------------------------------------------------------------------------

def test_slime_blockwise_training_and_sglang_rollout() -> None:
    intent, read = _read(FIX / "slime" / "low_precision" / "run-qwen3-30b-a3b-fp8.sh")
    assert read.files[0][1] == "slime"
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"
    assert intent["backend"][0] == "te" and intent["rollout.engine"][0] == "sglang"
    # SGLang serves the checkpoint in its quantization_config's precision (not read): the
    # checkpoint slime's docs have users convert for FP8 rollout is named ...-FP8
    assert intent["rollout.fp8"][0] is True
    assert _line(intent["rollout.fp8"][1]) == ("run-qwen3-30b-a3b-fp8.sh", 34)
    assert read.facts["config.slime.env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"] == "1"
    # the model arguments come from the script it sources (scripts/models/qwen3-30B-A3B.sh)
    assert intent["moe.experts"][0] == 128 and intent["moe.top_k"][0] == 8
    assert _line(intent["moe.experts"][1])[0] == "qwen3-30B-A3B.sh"


def test_slime_fp8_named_script_without_fp8_flags_trains_in_bf16() -> None:
    intent, _ = _read(FIX / "slime" / "low_precision" / "run-qwen3-4b-fp8.sh")
    assert intent["fp8"][0] is False and intent["precision"][0] == "bf16"
    assert intent["rollout.fp8"][0] is True          # --hf-checkpoint /root/Qwen3-4B-FP8


@pytest.mark.parametrize(("ckpt", "fp8"), [
    # a model Qwen publishes in BF16 (Qwen/Qwen3-4B; its FP8 weights are Qwen/Qwen3-4B-FP8),
    # or a folder marked bf16: the rollout is BF16 (holdout3-slime-qwen3-30b-a3b-bf16)
    ("/root/Qwen3-4B", False), ("/root/Qwen3-30B-A3B/", False), ("/ckpt/model_bf16", False),
    ("/root/Meta-Llama-3.1-8B-Instruct", False),
    # a name that says nothing (or a family that ships FP8 weights under the plain name): the
    # checkpoint's quantization_config decides, not read here
    ("/root/my-model", None), ("/root/DeepSeek-V3", None), ("/root/Qwen3-4B-fp8-block", True),
])
def test_slime_checkpoint_not_named_fp8(tmp_path: Path, ckpt: str, fp8: bool | None) -> None:
    src = FIX / "slime" / "low_precision" / "run-qwen3-4b-fp8.sh"
    (tmp_path / "low_precision").mkdir()
    shutil.copytree(FIX / "slime" / "scripts", tmp_path / "scripts")
    run = tmp_path / "low_precision" / src.name
    run.write_text(src.read_text().replace("--hf-checkpoint /root/Qwen3-4B-FP8\n",
                                           f"--hf-checkpoint {ckpt}\n", 1))
    intent, _ = _read(run)
    if fp8 is None:
        assert isinstance(intent["rollout.fp8"][0], Unknown)
        assert "quantization_config" in intent["rollout.fp8"][0].reason
    else:
        assert intent["rollout.fp8"][0] is fp8


# ---- detection, --kind, bounds ---------------------------------------------------------------

def test_kind_on_a_script_without_that_launch_line_is_an_error(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("echo hello\n")
    _, read = _read(run, kind="verl")
    assert not read.files
    assert [(Path(p.path).name, p.level) for p in read.problems] == [("run.sh", "error")]


def test_ten_thousand_overrides_are_bounded(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    over = " ".join(f"a.k{i}={i}" for i in range(10_050))
    run.write_text(f"python3 -m verl.trainer.main_ppo {over} "
                   f"actor_rollout_ref.rollout.name=x{'y' * 70_000}\n")
    _, read = _read(run)
    assert any("more than 10,000 overrides" in p.message for p in read.problems)


# ---- torchtitan launch lines -----------------------------------------------------------------

TT = FIX / "torchtitan" / "launch"


def test_torchtitan_flags_override_the_toml_with_their_line() -> None:
    intent, read = _read(TT / "float8_rowwise.sh")
    # the line runs ./run_train.sh (CONFIG_FILE=... in its environment): it is of the job too
    assert [(Path(p).name, k) for p, k in read.files] == [
        ("float8_rowwise.sh", "torchtitan"), ("llama3_8b.toml", "torchtitan"),
        ("run_train.sh", "torchtitan")]
    assert intent["fp8"][0] is True and intent["recipe"][0] == "rowwise"
    assert _line(intent["recipe"][1]) == ("float8_rowwise.sh", 3)
    assert read.facts["config.torchtitan.model.converters"] == ["quantize.linear.float8"]
    # what the line does not set comes from the TOML, with its line
    assert _line(read.provenance["config.torchtitan.training.seq_len"]) == ("llama3_8b.toml", 33)


def test_torchtitan_tyro_spellings(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text("[compile]\nenable = true\n[model]\nconverters = []\n")
    run = tmp_path / "run.sh"
    run.write_text("torchrun --nproc_per_node=8 -m torchtitan.train --job.config-file=c.toml "
                   "--compile.no-enable --model.converters quantize.linear.float8,"
                   "quantize.grouped_mm.float8 --parallelism.tensor-parallel-degree 2\n")
    _, read = _read(run)
    assert read.facts["config.torchtitan.compile.enable"] is False
    assert read.facts["config.torchtitan.model.converters"] == [
        "quantize.linear.float8", "quantize.grouped_mm.float8"]
    assert read.facts["config.torchtitan.parallelism.tensor_parallel_degree"] == 2


def test_torchtitan_run_train_without_its_toml_is_undetermined() -> None:
    intent, read = _read(TT / "run_train.sh")
    assert isinstance(intent["fp8"][0], Unknown)
    assert any(p.code == "reference" for p in read.problems)


def test_an_entry_point_in_a_comment_does_not_decide_the_framework(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("# converted from: python3 -m verl.trainer.main_ppo ...\n"
                   "torchrun pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n")
    _, read = _read(run)
    assert [k for _, k in read.files] == ["megatron"]


def test_wrappers_before_the_entry_point(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text('ray job submit --address="http://127.0.0.1:8265" --runtime-env=env.yaml '
                   "-- python3 -m verl.trainer.main_ppo model_engine=megatron "
                   "+actor_rollout_ref.actor.megatron.override_transformer_config.fp8=hybrid\n"
                   "uv run --no-sync python -m verl.trainer.main_ppo trainer.nnodes=2\n")
    intent, read = _read(run)
    # both wrapped commands are read as launches; they train differently, and the first is no
    # longer taken for the job (redteam2: a decoy first line hid the FP8 one)
    assert isinstance(intent["fp8"][0], Unknown) and "lines 1, 2" in intent["fp8"][0].reason
    assert isinstance(read.facts["config.verl.trainer.nnodes"], Unknown)


def test_a_megabyte_value_is_a_problem_with_its_line(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("python3 -m verl.trainer.main_ppo \\\n  a.b=1 \\\n"
                   f"  c.d={'x' * 900_000}\n")
    _, read = _read(run)
    assert read.facts["config.verl.a.b"] == 1 and "config.verl.c.d" not in read.facts
    assert [(p.line, p.level) for p in read.problems] == [(3, "warning")]


def test_rollout_importance_sampling_correction_of_each_rl_stack() -> None:
    verl = FIX / "verl"
    assert _read(verl / "run_nemotron_nano_v3_30b_a3b_megatron_fp8.sh")[0][
        "rollout.is_correction"][0] is False       # verl's packaged rollout_is: null
    tis = _read(verl / "run_nemotron_nano_v3_30b_a3b_megatron_fp8_tis.sh")[0]
    assert tis["rollout.is_correction"][0] is True
    assert _line(tis["rollout.is_correction"][1])[1] == 206
    assert _read(NRL / "grpo_math_8B_megatron_fp8.yaml")[0]["rollout.is_correction"][0] is True
    assert _read(NRL / "grpo_math_1B.yaml")[0]["rollout.is_correction"][0] is False
    slime = _read(FIX / "slime" / "low_precision" / "run-qwen3-30b-a3b-fp8.sh")[0]
    assert slime["rollout.is_correction"][0] is True            # --use-tis


@pytest.mark.parametrize("line", [
    'NGPU=8 CONFIG_FILE="./c/qwen3_32b.toml" ./run_train.sh',
    "CONFIG_FILE=./c/qwen3_32b.toml NGPU=8 bash run_train.sh",
    "LOG_RANK=0 CONFIG_FILE='c/qwen3_32b.toml' ./run_train.sh",
])
def test_torchtitan_bare_run_train_follows_its_toml(tmp_path: Path, line: str) -> None:
    """The README's launch with no override (holdout17): the TOML CONFIG_FILE names is read."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "qwen3_32b.toml").write_text(
        '[model]\nname = "qwen3"\n# converters = ["quantize.linear.float8"]\n'
        '[float8]\nfilter_fqns = ["output"]\n[compile]\nenable = true\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + line + "\n")
    intent, read = _read(tmp_path / "run.sh")
    assert ("qwen3_32b.toml", "torchtitan") in [(Path(p).name, k) for p, k in read.files]
    assert intent["fp8"][0] is False


@pytest.mark.parametrize("line", [
    "CONFIG_FILE=conf.yaml ./run_train.sh",          # not torchtitan's TOML
    "echo CONFIG_FILE=x.toml; ./run_train.sh",        # the value is not the command's
    "# CONFIG_FILE=c/x.toml ./run_train.sh",
])
def test_other_run_train_scripts_are_not_torchtitan(tmp_path: Path, line: str) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + line + "\n")
    _, read = _read(tmp_path / "run.sh")
    assert "torchtitan" not in [k for _, k in read.files]
