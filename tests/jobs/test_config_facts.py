"""Facts and file:line provenance produced from each fixture, per kind."""

from __future__ import annotations

import os

import pytest
from cfg_helpers import line_of, read_fixture

# (fixture, fact name, value, line in the fixture)
CASES = [
    # accelerate: new layout, list override, every fp8_config key
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.mixed_precision", "fp8", 19),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.distributed_type", "MULTI_GPU", 4),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.fp8_config.backend", "TE", 10),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.fp8_config.amax_history_len", 1024, 9),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.fp8_config.override_linear_precision",
     [False, False, False], 14),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.downcast_bf16", "no", 5),
    ("accelerate/fp8_te_multi_gpu.yaml", "config.accelerate.tpu_env", [], 24),
    # accelerate: wizard spellings, bool override, inline deepspeed
    ("accelerate/wizard_v1_6_deepspeed_inline.yaml",
     "config.accelerate.fp8_config.amax_history_length", 1024, 16),
    ("accelerate/wizard_v1_6_deepspeed_inline.yaml",
     "config.accelerate.fp8_config.amax_compute_algorithm", "max", 15),
    ("accelerate/wizard_v1_6_deepspeed_inline.yaml",
     "config.accelerate.fp8_config.override_linear_precision", False, 21),
    ("accelerate/wizard_v1_6_deepspeed_inline.yaml",
     "config.accelerate.deepspeed_config.zero_stage", 2, 10),
    ("accelerate/wizard_v1_6_deepspeed_inline.yaml",
     "config.accelerate.deepspeed_config.offload_optimizer_device", "none", 7),
    # accelerate: docs string form, MS-AMP wizard key
    ("accelerate/docs_string_override_msamp.yaml",
     "config.accelerate.fp8_config.override_linear_precision", "(false, false, false)", 8),
    ("accelerate/docs_string_override_msamp.yaml",
     "config.accelerate.fp8_config.optimization_level", "O1", 7),
    # accelerate: fsdp2 + AO + dynamo
    ("accelerate/ao_fsdp2_cpu_ram.yaml", "config.accelerate.fsdp_config.fsdp_version", 2, 6),
    ("accelerate/ao_fsdp2_cpu_ram.yaml",
     "config.accelerate.fsdp_config.fsdp_cpu_ram_efficient_loading", True, 8),
    ("accelerate/ao_fsdp2_cpu_ram.yaml", "config.accelerate.dynamo_config.dynamo_backend",
     "INDUCTOR", 17),
    ("accelerate/fsdp1_bf16_old.yaml",
     "config.accelerate.fsdp_config.fsdp_sharding_strategy", 1, 9),
    # accelerate: `accelerate launch` flags in a script, normalized to the YAML's keys
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.mixed_precision", "fp8", 9),
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.num_processes", 8, 8),
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.fp8_config.backend", "te", 10),
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.fp8_config.fp8_format", "HYBRID", 11),
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.fsdp_config.fsdp_version", 2, 12),
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.dynamo_config.dynamo_backend", "no", 13),
    # ... the config file it names is read too; the script's flags win
    ("accelerate/launch_fp8_fsdp.sh", "config.accelerate.distributed_type", "FSDP", 3),
    ("accelerate/launch_fp8_hf_bf16.sh", "config.accelerate.distributed_type", "MULTI_GPU", 3),
    ("accelerate/launch_fp8_hf_bf16.sh", "config.accelerate.fp8_config.backend", "TE", 3),
    ("accelerate/launch_fp8_hf_bf16.sh", "config.hf_trainer.bf16", True, 9),
    ("accelerate/launch_fp8_hf_bf16.sh", "config.hf_trainer.max_seq_length", 4096, 8),
    ("hf_trainer/run_sft_deepspeed.sh", "config.hf_trainer.gradient_checkpointing", True, 8),
    ("hf_trainer/run_sft_deepspeed.sh", "config.hf_trainer.bf16", True, 9),
    ("hf_trainer/run_sft_deepspeed.sh", "config.hf_trainer.deepspeed",
     "../deepspeed/zero3_fp16.json", 10),
    ("accelerate/default_config_legacy.json", "config.accelerate.mixed_precision", "fp8", 9),
    ("accelerate/te_mxfp8_deepspeed_inline.yaml",
     "config.accelerate.fp8_config.use_mxfp8_block_scaling", True, 15),
    ("accelerate/te_mxfp8_deepspeed_inline.yaml",
     "config.accelerate.deepspeed_config.gradient_clipping", 1.0, 7),
    ("accelerate/default_config_legacy.json", "config.accelerate.main_process_ip", None, 6),
    # deepspeed
    ("deepspeed/zero3_fp16.json", "config.deepspeed.fp16.enabled", True, 3),
    ("deepspeed/zero3_fp16.json", "config.deepspeed.zero_optimization.stage", 3, 11),
    ("deepspeed/zero3_fp16.json", "config.deepspeed.zero_optimization.offload_param.device",
     "cpu", 13),
    ("deepspeed/zero3_fp16.json", "config.deepspeed.train_batch_size", "auto", 20),
    ("deepspeed/zero2_auto_optimizer.json", "config.deepspeed.bf16.enabled", "auto", 2),
    ("deepspeed/zero2_auto_optimizer.json", "config.deepspeed.optimizer.type", "AdamW", 5),
    ("deepspeed/zero2_auto_optimizer.json", "config.deepspeed.optimizer.params.lr", "auto", 6),
    ("deepspeed/zero2_auto_optimizer.json",
     "config.deepspeed.zero_optimization.allgather_bucket_size", 2e8, 9),
    ("deepspeed/legacy_bfloat16_msamp.json", "config.deepspeed.bfloat16.enabled", True, 4),
    ("deepspeed/legacy_bfloat16_msamp.json", "config.deepspeed.msamp.opt_level", "O3", 6),
    ("deepspeed/legacy_bfloat16_msamp.json", "config.deepspeed.data_types.grad_accum_dtype",
     "bf16", 7),
    ("deepspeed/legacy_bfloat16_msamp.json", "config.deepspeed.fp8.enabled", True, 8),
    ("deepspeed/zero1_bf16_off.json", "config.deepspeed.bf16.enabled", False, 4),
    # llm-foundry: old layout (${max_seq_len}), typo key kept as written
    ("llmfoundry/mpt1b_fp8_tutorial_typo.yaml", "config.llmfoundry.model.max_seq_len", 2048, 12),
    ("llmfoundry/mpt1b_fp8_tutorial_typo.yaml",
     "config.llmfoundry.model.ffn_config_defaults.ffn_type", "te_ln_mlp", 17),
    ("llmfoundry/mpt1b_fp8_tutorial_typo.yaml", "config.llmfoundry.precision", "amp_fp8", 18),
    ("llmfoundry/mpt1b_fp8_tutorial_typo.yaml", "config.llmfoundry.model.init_device", "meta", 7),
    ("llmfoundry/mpt1b_fp8_tutorial_typo.yaml", "config.llmfoundry.model.attn_config.attn_impl",
     "triton", 15),
    # llm-foundry: v0.9 variables
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml", "config.llmfoundry.max_seq_len", 2048, 6),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml", "config.llmfoundry.run_name", "mpt-1b-fp8", 7),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml", "config.llmfoundry.model.fc_type", "te", 17),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml", "config.llmfoundry.model.fc_type_is_mapping", False, 17),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml",
     "config.llmfoundry.fsdp_config.te_shard_fp8_weight", True, 30),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml",
     "config.llmfoundry.fsdp_config.activation_checkpointing_reentrant", False, 27),
    ("llmfoundry/mpt1b_fp8_ok_v09.yaml", "config.llmfoundry.compile_config", {}, 31),
    # llm-foundry: fc_type mapping
    ("llmfoundry/ckpt_wrapper_fc_mapping.yaml", "config.llmfoundry.model.fc_type", "te", 10),
    ("llmfoundry/ckpt_wrapper_fc_mapping.yaml", "config.llmfoundry.model.fc_type_is_mapping",
     True, 9),
    ("llmfoundry/ckpt_wrapper_fc_mapping.yaml",
     "config.llmfoundry.model.fc_type_kwargs.bias", False, 11),
    ("llmfoundry/ckpt_wrapper_fc_mapping.yaml",
     "config.llmfoundry.fsdp_config.te_checkpoint_wrapper", True, 20),
    ("llmfoundry/single_gpu_te_act_fn.yaml",
     "config.llmfoundry.model.ffn_config.ffn_act_fn.name", "gelu", 14),
    ("llmfoundry/hf_causal_lm_fp8.yaml",
     "config.llmfoundry.model.pretrained_model_name_or_path", "meta-llama/Llama-3.1-8B", 5),
    ("llmfoundry/precision_config_fp8.yaml", "config.llmfoundry.precision_config.fp8_format",
     "E4M3", 14),
    # torchtitan: three layouts
    ("torchtitan/v02_rowwise_allgather.toml", "config.torchtitan.model.converters",
     ["quantize.linear.float8"], 4),
    ("torchtitan/v02_rowwise_allgather.toml",
     "config.torchtitan.quantize.linear.float8.recipe_name", "rowwise", 21),
    ("torchtitan/v02_rowwise_allgather.toml", "config.torchtitan.compile.enable", False, 18),
    ("torchtitan/v02_rowwise_allgather.toml",
     "config.torchtitan.parallelism.data_parallel_shard_degree", -1, 11),
    ("torchtitan/v01_converters_float8.toml", "config.torchtitan.model.converters", ["float8"], 5),
    ("torchtitan/v01_converters_float8.toml", "config.torchtitan.training.compile", True, 10),
    ("torchtitan/v01_converters_float8.toml", "config.torchtitan.float8.recipe_name",
     "tensorwise", 20),
    ("torchtitan/2024_enable_float8_linear.toml", "config.torchtitan.float8.enable_float8_linear",
     True, 15),
    ("torchtitan/v02_legacy_float8.toml", "config.torchtitan.float8.filter_fqns", ["output"], 18),
    ("torchtitan/v02_emulate_pp.toml", "config.torchtitan.quantize.linear.float8.emulate", True,
     16),
    ("torchtitan/v02_emulate_pp.toml",
     "config.torchtitan.parallelism.pipeline_parallel_degree", 2, 11),
    ("torchtitan/2024_delayed_scaling.toml", "config.torchtitan.float8.scaling_type_input",
     "delayed", 18),
    # megatron: bash arrays, strings, argument file, --yaml-cfg, functional-test YAML
    ("megatron/pretrain_gpt_fp8_array.sh", "config.megatron.fp8_format", "hybrid", 39),
    ("megatron/pretrain_gpt_fp8_array.sh", "config.megatron.hidden_size", 4096, 15),
    ("megatron/pretrain_gpt_fp8_array.sh", "config.megatron.fp8_param_gather", True, 42),
    ("megatron/pretrain_gpt_fp8_array.sh", "config.megatron.recompute_modules",
     ["core_attn", "mlp"], 28),
    ("megatron/pretrain_gpt_fp8_array.sh", "config.megatron.transformer_impl",
     "transformer_engine", 38),
    ("megatron/pretrain_gpt_2023_string.sh", "config.megatron.fp8_hybrid", True, 14),
    ("megatron/pretrain_gpt_2023_string.sh", "config.megatron.fp16", True, 12),
    ("megatron/pretrain_gpt_2023_string.sh", "config.megatron.lr", 0.00015, 11),
    ("megatron/pretrain_gpt_2023_string.sh", "config.megatron.use_distributed_optimizer", True, 19),
    ("megatron/mxfp8_no_overlap.args", "config.megatron.fp8_recipe", "mxfp8", 3),
    ("megatron/nvfp4_fsdp2.args", "config.megatron.fp4_format", "e2m1", 4),
    ("megatron/nvfp4_fsdp2.args", "config.megatron.use_torch_fsdp2", True, 3),
    ("megatron/nvfp4_fsdp2.args", "config.megatron.context_parallel_size", 2, 2),
    # --yaml-cfg in a script: the YAML replaces the command line (its values win)
    ("megatron/run_with_yaml_cfg.sh", "config.megatron.yaml_cfg",
     "gpt_yaml_cfg_local_impl.yaml", 4),
    ("megatron/run_with_yaml_cfg.sh", "config.megatron.nproc_per_node", 4, 3),
    ("megatron/mxfp8_no_overlap.args",
     "config.megatron.reuse_grad_buf_for_mxfp8_param_ag", True, 4),
    ("megatron/mxfp8_no_overlap.args", "config.megatron.no_fp8_wgrad", True, 5),
    ("megatron/gpt_yaml_cfg_local_impl.yaml", "config.megatron.language_model.fp8", "hybrid", 7),
    ("megatron/gpt_yaml_cfg_local_impl.yaml", "config.megatron.transformer_impl", "local", 15),
    ("megatron/gpt_yaml_cfg_local_impl.yaml", "config.megatron.model_parallel.bf16", True, 14),
    ("megatron/functional_test_model_config.yaml", "config.megatron.fp8_format", "hybrid", 13),
    ("megatron/functional_test_model_config.yaml", "config.megatron.bf16", True, 15),
    ("megatron/functional_test_model_config.yaml",
     "config.megatron.ENV_VARS.CUDA_DEVICE_MAX_CONNECTIONS", 1, 3),
    # lightning, hf trainer, nemo
    ("lightning/te_fsdp.yaml", "config.lightning.trainer.precision", "transformer-engine", 7),
    ("lightning/te_fsdp.yaml", "config.lightning.trainer.strategy", "fsdp", 6),
    ("lightning/strategy_class_path_bf16.yaml", "config.lightning.trainer.strategy",
     "lightning.pytorch.strategies.DDPStrategy", 4),
    ("lightning/strategy_class_path_bf16.yaml",
     "config.lightning.trainer.strategy.init_args.find_unused_parameters", False, 6),
    ("hf_trainer/train_args_bf16.yaml", "config.hf_trainer.bf16", True, 7),
    ("hf_trainer/train_args_bf16.yaml", "config.hf_trainer.learning_rate", 2.0e-5, 6),
    ("hf_trainer/train_args_noprec.json", "config.hf_trainer.fp16", False, 5),
    ("hf_trainer/llamafactory_fp8_bf16.yaml", "config.llamafactory.fp8", True, 14),
    ("hf_trainer/llamafactory_fp8_bf16.yaml", "config.llamafactory.fp8_backend", "te", 15),
    ("hf_trainer/axolotl_fp8_fsdp2.yaml", "config.axolotl.bf16", "auto", 7),
    ("hf_trainer/axolotl_fp8_fsdp2.yaml",
     "config.axolotl.fsdp_config.cpu_ram_efficient_loading", True, 15),
    ("nemo/megatron_gpt_fp8_no_te.yaml", "config.nemo.model.transformer_engine", False, 17),
    ("nemo/megatron_gpt_fp8_no_te.yaml", "config.nemo.model.fp8_hybrid", True, 20),
    ("nemo/megatron_gpt_fp8_ok.yaml", "config.nemo.trainer.precision", "bf16-mixed", 5),
    # NeMo: OmegaConf interpolation, absolute and relative
    ("nemo/megatron_gpt_interp.yaml", "config.nemo.exp_manager.name", "megatron_gpt", 10),
    ("nemo/megatron_gpt_interp.yaml", "config.nemo.model.max_position_embeddings", 4096, 18),
    ("nemo/megatron_gpt_interp.yaml", "config.nemo.model.data.seq_length", 4096, 25),
    ("nemo/megatron_gpt_interp.yaml", "config.nemo.model.data.note", "len-4096", 26),
    ("nemo/megatron_gpt_interp.yaml", "config.nemo.defaults", ["_self_"], 2),
]


@pytest.mark.parametrize("rel,name,value,line", CASES)
def test_fact_value_and_line(rel: str, name: str, value: object, line: int) -> None:
    read = read_fixture(rel)
    assert read.problems == []
    assert read.facts[name] == value
    assert type(read.facts[name]) is type(value)
    assert line_of(read, name) == line
    source = read.provenance[name].rsplit(":", 1)[0]
    # the one fact here that comes from the file the script names (--config_file)
    linked = {("accelerate/launch_fp8_fsdp.sh", "config.accelerate.distributed_type"):
              "accelerate/fsdp1_bf16_old.yaml"}
    assert source.endswith(linked.get((rel, name), rel))


@pytest.mark.parametrize("rel,kind", [
    ("accelerate/fp8_te_multi_gpu.yaml", "accelerate"),
    ("accelerate/fsdp1_bf16_old.yaml", "accelerate"),
    ("accelerate/launch_fp8_fsdp.sh", "accelerate"),
    ("accelerate/default_config_legacy.json", "accelerate"),
    ("deepspeed/zero1_bf16_off.json", "deepspeed"),
    ("llmfoundry/hf_causal_lm_fp8.yaml", "llmfoundry"),
    ("llmfoundry/single_gpu_te_act_fn.yaml", "llmfoundry"),
    ("torchtitan/2024_enable_float8_linear.toml", "torchtitan"),
    ("megatron/mxfp8_no_overlap.args", "megatron"),
    ("megatron/run_with_yaml_cfg.sh", "megatron"),
    ("megatron/pretrain_gpt_2023_string.sh", "megatron"),
    ("megatron/gpt_yaml_cfg_local_impl.yaml", "megatron"),
    ("megatron/functional_test_model_config.yaml", "megatron"),
    ("lightning/te_deepspeed_stage2.yaml", "lightning"),
    ("hf_trainer/train_args_noprec.json", "hf_trainer"),
    ("hf_trainer/train_args_bf16.yaml", "hf_trainer"),
    ("hf_trainer/axolotl_fp8_fsdp2.yaml", "axolotl"),
    ("accelerate/launch_fp8_hf_bf16.sh", "accelerate"),
    ("nemo/megatron_gpt_fp8_no_te.yaml", "nemo"),
])
def test_kind_detected(rel: str, kind: str) -> None:
    read = read_fixture(rel)
    assert read.files[0][1] == kind
    assert kind in read.facts["config.kinds"]
    assert read.problems == []
    assert read.facts["config.files"][0]["kind"] == kind


def test_every_fact_is_registered_and_json_serializable() -> None:
    import json

    from cfg_helpers import FIXTURES

    from preflight.facts import Unknown
    from preflight.registry import registry

    for path in sorted(FIXTURES.glob("*/*")):
        if path.suffix not in {".yaml", ".json", ".toml", ".sh", ".args"}:
            continue
        read = read_fixture(str(path.relative_to(FIXTURES)))
        for name, value in read.facts.items():
            assert registry().lookup(name) is not None, name
            if isinstance(value, Unknown):     # written as {"$unknown": reason} in snapshots
                assert value.reason, name
                continue
            json.dumps(value)
            assert name in read.provenance


def test_wizard_misspellings_are_not_renamed() -> None:
    read = read_fixture("accelerate/wizard_v1_6_deepspeed_inline.yaml")
    assert "config.accelerate.fp8_config.amax_history_len" not in read.facts
    assert "config.accelerate.fp8_config.amax_compute_algo" not in read.facts


def test_megatron_last_occurrence_wins(tmp_path) -> None:
    from preflight.jobs.read import read_paths

    script = tmp_path / "run.sh"
    script.write_text("ARGS=\"--fp8-format e4m3 --hidden-size 1024\"\n"
                      "torchrun pretrain_gpt.py $ARGS --fp8-format=hybrid\n")
    read = read_paths([str(script)])
    assert read.facts["config.megatron.fp8_format"] == "hybrid"
    assert read.provenance["config.megatron.fp8_format"].endswith("run.sh:2")


def test_megatron_shell_variables_are_substituted() -> None:
    read = read_fixture("megatron/pretrain_gpt_fp8_array.sh")
    assert read.facts["config.megatron.nproc_per_node"] == 8
    assert "config.megatron.fp8_recipe" not in read.facts   # commented out in the script


def test_llmfoundry_unresolvable_reference_stays_literal(tmp_path) -> None:
    from preflight.jobs.read import read_paths

    cfg = tmp_path / "train.yaml"
    cfg.write_text("variables: {a: 1}\nmodel:\n  name: mpt_causal_lm\n  d_model: ${variables.b}\n"
                   "  n_heads: ${oc.env:HEADS}\nprecision: amp_fp8\nmax_duration: 1ba\n"
                   "run_name: run-${variables.a}\n")
    read = read_paths([str(cfg)])
    assert read.facts["config.llmfoundry.model.d_model"] == "${variables.b}"
    assert read.facts["config.llmfoundry.model.n_heads"] == "${oc.env:HEADS}"
    assert read.facts["config.llmfoundry.run_name"] == "run-1"


def test_llmfoundry_reference_cycle_terminates(tmp_path) -> None:
    from preflight.jobs.read import read_paths

    cfg = tmp_path / "train.yaml"
    cfg.write_text("variables: {a: '${variables.b}', b: '${variables.a}'}\n"
                   "model: {name: mpt_causal_lm, d_model: '${variables.a}'}\nprecision: amp_fp8\n")
    read = read_paths([str(cfg)])
    assert read.problems == []
    assert str(read.facts["config.llmfoundry.model.d_model"]).startswith("${variables.")


def test_yaml_cfg_values_replace_the_command_line() -> None:
    read = read_fixture("megatron/run_with_yaml_cfg.sh")
    assert [os.path.basename(p) for p, _ in read.files] == ["run_with_yaml_cfg.sh",
                                                           "gpt_yaml_cfg_local_impl.yaml"]
    # the script says --micro-batch-size 4; Megatron loads the YAML instead (value 2)
    assert read.facts["config.megatron.micro_batch_size"] == 2
    assert read.provenance["config.megatron.micro_batch_size"].endswith(
        "gpt_yaml_cfg_local_impl.yaml:17")


def test_accelerate_launch_flags_win_over_the_config_file() -> None:
    read = read_fixture("accelerate/launch_fp8_fsdp.sh")
    assert [os.path.basename(p) for p, _ in read.files] == ["launch_fp8_fsdp.sh",
                                                           "fsdp1_bf16_old.yaml"]
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"   # the YAML says bf16
    assert read.facts["config.accelerate.fsdp_config.fsdp_sharding_strategy"] == 1
    # the training script's own arguments are not accelerate's
    assert "config.accelerate.model_name_or_path" not in read.facts
    assert "config.accelerate.bf16" not in read.facts


def test_accelerate_launch_missing_config_file(tmp_path) -> None:
    from preflight.jobs.read import read_paths

    script = tmp_path / "go.sh"
    script.write_text("accelerate launch --config_file nope.yaml --mixed_precision fp8 t.py\n")
    read = read_paths([str(script)])
    assert read.problems[0].line == 1 and "nope.yaml" in read.problems[0].message
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_launcher_flags_are_not_trainer_arguments() -> None:
    read = read_fixture("hf_trainer/run_sft_deepspeed.sh")
    assert "config.hf_trainer.nproc_per_node" not in read.facts
    assert [k for _, k in read.files] == ["hf_trainer", "deepspeed"]
    assert read.facts["config.kinds"] == ["deepspeed", "hf_trainer"]


def test_one_script_two_kinds() -> None:
    read = read_fixture("accelerate/launch_fp8_hf_bf16.sh")
    assert read.facts["config.kinds"] == ["accelerate", "hf_trainer"]
    assert "config.accelerate.model_name_or_path" not in read.facts
    assert "config.hf_trainer.mixed_precision" not in read.facts
