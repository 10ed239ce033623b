"""intent.derive: what the job asks for, per framework, and how frameworks combine."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import NAMES, NO_CONFIG, derive
from preflight.jobs.read import read_paths
from preflight.registry import registry

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "configs"


def intent_of(*rels: str, extra: dict | None = None) -> tuple[dict, dict]:
    read = read_paths([str(FIX / r) for r in rels])
    assert [p for p in read.problems if p.code != "not_read"] == []
    facts = Facts(read.facts, read.provenance)
    if extra:
        facts = facts.merged(extra, source="runtime")
    values, prov = derive(facts)
    return {k[len("intent."):]: v for k, v in values.items()}, \
        {k[len("intent."):]: v for k, v in prov.items()}


def test_no_config_gives_unknown_everywhere() -> None:
    values, prov = derive(Facts({"gpu.count": 1}))
    assert set(values) == {f"intent.{n}" for n in NAMES}
    assert all(v == Unknown(NO_CONFIG) for v in values.values())
    assert set(prov.values()) == {"intent"}


def test_every_intent_name_is_registered() -> None:
    for name in NAMES:
        assert registry().lookup(f"intent.{name}") is not None, name


# (fixtures, expected subset of intent values)
CASES = [
    (("accelerate/fp8_te_multi_gpu.yaml",),
     {"fp8": True, "backend": "te", "recipe": "delayed", "format": "hybrid", "distributed": "ddp",
      "precision": "bf16", "num_gpus": 8}),
    (("accelerate/wizard_v1_6_deepspeed_inline.yaml",),
     {"fp8": True, "distributed": "deepspeed", "zero_stage": 2, "format": "e4m3",
      "precision": "bf16"}),
    (("accelerate/docs_string_override_msamp.yaml",), {"fp8": True, "backend": "msamp"}),
    (("accelerate/ao_fsdp2_cpu_ram.yaml",),
     {"fp8": True, "backend": "torchao", "recipe": "tensorwise", "distributed": "fsdp2",
      "compile": True, "activation_checkpointing": True}),
    (("accelerate/fsdp1_bf16_old.yaml",),
     {"fp8": False, "backend": "none", "distributed": "fsdp1", "precision": "bf16"}),
    # accelerate fp8 + DeepSpeed JSON with fp16: FP8 still asked for (accelerate raises), fp16
    (("accelerate/ds_file_zero3.yaml",),
     {"fp8": True, "distributed": "deepspeed", "zero_stage": 3, "precision": "fp16",
      "frameworks": ["accelerate", "deepspeed"]}),
    (("deepspeed/zero1_bf16_off.json",),
     {"fp8": False, "distributed": "deepspeed", "zero_stage": 1, "precision": "fp32"}),
    (("deepspeed/legacy_bfloat16_msamp.json",),
     {"precision": "bf16", "zero_stage": 3, "fp8": True, "backend": "msamp"}),
    (("deepspeed/zero3_fp16.json",), {"fp8": False, "backend": "none"}),
    (("llmfoundry/mpt1b_fp8_ok_v09.yaml",),
     {"fp8": True, "backend": "te", "recipe": "delayed", "format": "hybrid",
      "distributed": "fsdp1", "activation_checkpointing": True, "compile": True,
      "shapes.hidden": 2048, "shapes.ffn": 8192, "shapes.tokens": 8192,
      "shapes.gemms": [[8192, 2048, 6144], [8192, 2048, 2048], [8192, 2048, 8192],
                       [8192, 8192, 2048]]}),
    (("llmfoundry/ckpt_wrapper_fc_mapping.yaml",),
     {"fp8": True, "shapes.ffn": 5632, "activation_checkpointing": True}),
    (("llmfoundry/single_gpu_te_act_fn.yaml",), {"distributed": "ddp", "shapes.tokens": 16384}),
    (("torchtitan/v02_rowwise_allgather.toml",),
     {"fp8": True, "backend": "torchao", "recipe": "rowwise", "distributed": "fsdp2",
      "compile": False, "activation_checkpointing": True, "shapes.hidden": 4096,
      "shapes.gemms": [[8192, 4096, 6144], [8192, 2048, 4096], [8192, 4096, 7168],
                       [8192, 7168, 4096]]}),
    (("torchtitan/v01_converters_float8.toml",),
     {"fp8": True, "recipe": "tensorwise", "compile": True, "shapes.tokens": 4096}),
    (("torchtitan/2024_enable_float8_linear.toml",), {"fp8": True, "backend": "torchao"}),
    # converters = "float8": the comma list torchtitan's 2025-04 argparse config split it into
    (("torchtitan/2025_04_string_converters.toml",),
     {"fp8": True, "backend": "torchao", "recipe": "tensorwise", "tp": 8, "compile": True}),
    (("torchtitan/2024_delayed_scaling.toml",),
     {"fp8": True, "recipe": "delayed", "compile": True, "shapes.hidden": 256,
      "shapes.tokens": 16384}),
    (("megatron/run_with_yaml_cfg.sh",),
     {"fp8": True, "backend": "none", "num_gpus": 8, "shapes.tokens": 4096}),
    (("accelerate/launch_fp8_fsdp.sh",),
     {"fp8": True, "backend": "te", "distributed": "fsdp2", "num_gpus": 8}),
    (("torchtitan/v02_legacy_float8.toml",), {"fp8": False, "backend": "none"}),
    (("megatron/pretrain_gpt_fp8_array.sh",),
     {"fp8": True, "backend": "te", "format": "hybrid", "recipe": "delayed",
      "distributed": "megatron", "precision": "bf16", "activation_checkpointing": True,
      "num_gpus": 8, "shapes.hidden": 4096, "shapes.ffn": 14336, "shapes.tokens": 4096}),
    (("megatron/pretrain_gpt_2023_string.sh",),
     {"fp8": True, "format": "hybrid", "precision": "fp16", "shapes.ffn": 8192}),
    (("megatron/mxfp8_no_overlap.args",), {"fp8": True, "recipe": "mxfp8"}),
    # --use-torch-fsdp2: Megatron wraps the model in torch FSDP2 (training.py), not its DDP
    (("megatron/nvfp4_fsdp2.args",),
     {"fp8": True, "recipe": "nvfp4", "backend": "te", "shapes.tokens": 4096,
      "distributed": "fsdp2"}),
    (("accelerate/te_mxfp8_deepspeed_inline.yaml",),
     {"fp8": True, "recipe": "mxfp8", "format": "e4m3", "zero_stage": 1,
      "distributed": "deepspeed", "precision": "bf16"}),
    (("llmfoundry/precision_config_fp8.yaml",),
     {"fp8": True, "format": "e4m3", "shapes.ffn": 16384, "distributed": "fsdp1"}),
    (("torchtitan/v02_emulate_pp.toml",),
     {"fp8": True, "distributed": "ddp", "recipe": "tensorwise", "shapes.hidden": 256}),
    (("megatron/gpt_yaml_cfg_local_impl.yaml",),
     {"fp8": True, "backend": "none", "format": "hybrid", "precision": "bf16",
      "activation_checkpointing": True}),
    (("megatron/functional_test_model_config.yaml",),
     {"fp8": True, "recipe": "tensorwise", "backend": "te"}),
    (("lightning/te_fsdp.yaml",),
     {"fp8": True, "backend": "te", "distributed": "fsdp1", "num_gpus": 8}),
    (("lightning/te_deepspeed_stage2.yaml",),
     {"fp8": True, "distributed": "deepspeed", "zero_stage": 2}),
    (("lightning/strategy_class_path_bf16.yaml",),
     {"fp8": False, "distributed": "ddp", "precision": "bf16"}),
    (("nemo/megatron_gpt_fp8_ok.yaml",),
     {"fp8": True, "backend": "te", "format": "hybrid", "num_gpus": 16,
      "activation_checkpointing": True, "shapes.gemms": [[4096, 8192, 6144], [4096, 2048, 8192],
                                                         [4096, 8192, 7168], [4096, 7168, 8192]]}),
    (("nemo/megatron_gpt_interp.yaml",),
     {"fp8": True, "format": "hybrid", "shapes.tokens": 8192, "shapes.tokens_align": 128,
      "shapes.gemms": [[8192, 4096, 6144], [8192, 2048, 4096], [8192, 4096, 7168],
                       [8192, 7168, 4096]]}),
    (("hf_trainer/train_args_bf16.yaml",),
     {"fp8": False, "precision": "bf16", "activation_checkpointing": True,
      "shapes.tokens": 8192}),
    (("hf_trainer/train_args_noprec.json",), {"fp8": False, "compile": True}),
    (("hf_trainer/llamafactory_fp8_bf16.yaml",),
     {"fp8": True, "backend": "te", "distributed": "deepspeed", "zero_stage": 2,
      "precision": "bf16", "frameworks": ["accelerate", "deepspeed", "llamafactory"],
      "stack": ["accelerate", "deepspeed", "llamafactory", "hf_trainer"]}),
    (("hf_trainer/axolotl_fp8_fsdp2.yaml",),
     {"fp8": True, "backend": "torchao", "recipe": "tensorwise", "distributed": "fsdp2",
      "compile": True, "activation_checkpointing": True, "shapes.tokens": 8192}),
    (("hf_trainer/run_sft_deepspeed.sh",),
     {"fp8": False, "distributed": "deepspeed", "zero_stage": 3, "precision": "bf16",
      "activation_checkpointing": True}),
]


@pytest.mark.parametrize("rels,expected", CASES, ids=[c[0][0] for c in CASES])
def test_intent_per_fixture(rels: tuple[str, ...], expected: dict) -> None:
    values, _ = intent_of(*rels)
    for name, value in expected.items():
        assert values[name] == value, name


def test_provenance_points_at_the_deciding_line() -> None:
    values, prov = intent_of("accelerate/fp8_te_multi_gpu.yaml")
    assert prov["fp8"].endswith("fp8_te_multi_gpu.yaml:19")
    assert values["fp8_source"] == prov["fp8"]
    assert prov["backend"].endswith("fp8_te_multi_gpu.yaml:10")


OLD_ACCELERATE = {"pkg.accelerate.version": "1.8.1"}


def test_hf_bf16_overrides_accelerate_fp8() -> None:
    values, prov = intent_of("accelerate/fp8_te_multi_gpu.yaml", "hf_trainer/train_args_bf16.yaml",
                             extra=OLD_ACCELERATE)
    assert values["fp8"] is False
    assert values["precision"] == "bf16"
    assert values["backend"] == "none"
    assert values["fp8_overridden_by"].endswith("train_args_bf16.yaml:7")
    assert values["fp8_source"].endswith("fp8_te_multi_gpu.yaml:19")
    assert "recipe" not in values and "format" not in values


def test_hf_bf16_in_the_same_launch_script_overrides_fp8() -> None:
    values, prov = intent_of("accelerate/launch_fp8_hf_bf16.sh", extra=OLD_ACCELERATE)
    assert values["fp8"] is False
    assert values["fp8_overridden_by"].endswith("launch_fp8_hf_bf16.sh:9")
    assert values["frameworks"] == ["accelerate", "hf_trainer"]
    assert values["shapes.tokens"] == 4 * 4096


@pytest.mark.parametrize("pair", [
    ("accelerate/fp8_te_multi_gpu.yaml", "hf_trainer/train_args_bf16.yaml"),
    ("accelerate/launch_fp8_hf_bf16.sh",),
])
def test_from_accelerate_1_9_the_exported_te_backend_survives_hf_bf16(pair: tuple[str, ...]) -> None:
    # accelerate >= 1.9.0 (PR 3677): Accelerator.fp8_backend falls back to the
    # ACCELERATE_FP8_BACKEND=TE `accelerate launch` exported; prepare() converts with
    # DelayedScaling() although the Trainer's bf16 replaced the mixed precision
    values, prov = intent_of(*pair, extra={"pkg.accelerate.version": "1.9.0"})
    assert values["fp8"] is True and values["backend"] == "te"
    assert values["recipe"] == "delayed" and values["format"] == "hybrid"
    assert values["precision"] == "bf16" and "fp8_overridden_by" not in values
    unknown, _ = intent_of(*pair)          # accelerate not installed here: not "no"
    assert isinstance(unknown["fp8"], Unknown) and "1.9.0" in unknown["fp8"].reason


def test_hf_without_precision_keeps_accelerate_fp8() -> None:
    values, _ = intent_of("accelerate/fp8_te_multi_gpu.yaml", "hf_trainer/train_args_noprec.json")
    assert values["fp8"] is True
    assert values["backend"] == "te"
    assert "fp8_overridden_by" not in values
    assert values["precision"] == "bf16"
    assert values["compile"] is True   # TrainingArguments.torch_compile: Trainer compiles


def test_nemo_fp8_without_transformer_engine_is_off() -> None:
    values, _ = intent_of("nemo/megatron_gpt_fp8_no_te.yaml")
    assert values["fp8"] is False
    assert values["fp8_overridden_by"].endswith("megatron_gpt_fp8_no_te.yaml:17")


def test_deepspeed_bf16_false_under_accelerate_fp8_runs_fp32(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text('{"bf16": {"enabled": false}, "zero_optimization": '
                                      '{"stage": 2}}')
    (tmp_path / "acc.yaml").write_text("distributed_type: DEEPSPEED\nmixed_precision: fp8\n"
                                       "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    read = read_paths([str(tmp_path / "acc.yaml")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.precision"] == "fp32"
    assert values["intent.fp8"] is True
    assert values["intent.zero_stage"] == 2


def test_env_mixed_precision_counts_when_the_yaml_is_silent() -> None:
    values, prov = intent_of("jobs/accel_ds_folder",
                             extra={"env.ACCELERATE_MIXED_PRECISION": "fp8"})
    assert values["fp8"] is True
    assert values["precision"] == "bf16"         # accelerate fills DeepSpeed "auto" bf16
    assert prov["fp8"] == "runtime"


def test_fp8_config_without_mixed_precision_leaves_fp8_unknown(tmp_path: Path) -> None:
    # With a deepspeed_config_file the YAML must not carry mixed_precision (FP8D-ACC-0003); the
    # fp8_config block says FP8 is meant, but the switch is on the launch line.
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}}')
    (tmp_path / "acc.yaml").write_text("distributed_type: DEEPSPEED\n"
                                       "deepspeed_config:\n  deepspeed_config_file: ds.json\n"
                                       "fp8_config:\n  backend: MSAMP\n")
    read = read_paths([str(tmp_path / "acc.yaml")])
    values, prov = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert "--mixed_precision fp8" in values["intent.fp8"].reason
    assert prov["intent.fp8"].endswith("acc.yaml:5")
    # ... and once the launcher's environment says fp8, it is on.
    values, _ = derive(Facts({**read.facts, "env.ACCELERATE_MIXED_PRECISION": "fp8"},
                             read.provenance))
    assert values["intent.fp8"] is True
    # No fp8_config block and no mixed_precision: nothing asks for FP8.
    (tmp_path / "acc.yaml").write_text("distributed_type: DEEPSPEED\n")
    read = read_paths([str(tmp_path / "acc.yaml")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False


def test_llmfoundry_null_fsdp_config_is_ddp_not_fsdp(tmp_path: Path) -> None:
    # `fsdp_config: null` is no FSDP (composer runs DDP; llm-foundry < 0.9 crashes on the None).
    (tmp_path / "y.yaml").write_text("model:\n  name: mpt_causal_lm\n  fc_type: te\n"
                                     "precision: amp_fp8\nfsdp_config: null\n")
    read = read_paths([str(tmp_path / "y.yaml")], kind="llmfoundry")
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.distributed"] == "ddp"
    (tmp_path / "y.yaml").write_text("model:\n  name: mpt_causal_lm\n  fc_type: te\n"
                                     "precision: amp_fp8\nfsdp_config:\n"
                                     "  state_dict_type: full\n")
    read = read_paths([str(tmp_path / "y.yaml")], kind="llmfoundry")
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.distributed"] == "fsdp1"


def test_nemo_e4m3_wins_over_hybrid(tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text("trainer:\n  precision: bf16\nmodel:\n"
                                     "  transformer_engine: true\n  fp8: true\n"
                                     "  fp8_e4m3: true\n  fp8_hybrid: true\n")
    read = read_paths([str(tmp_path / "n.yaml")], kind="nemo")
    values, prov = derive(Facts(read.facts, read.provenance))
    assert values["intent.format"] == "e4m3"
    assert prov["intent.format"].endswith("n.yaml:6")


def test_unstated_values_are_unknown_with_a_reason() -> None:
    values, _ = intent_of("accelerate/fp8_te_multi_gpu.yaml")
    # no dynamo_config: accelerate will not compile (FP8D-TAO-0004 relies on false here)
    assert values["compile"] is False
    assert isinstance(values["shapes.hidden"], Unknown)
    assert isinstance(values["activation_checkpointing"], Unknown)
    assert "zero_stage" not in values            # not DeepSpeed: absent, not unknown


def test_accelerate_backend_unset_is_unknown() -> None:
    values, _ = intent_of("accelerate/ds_file_zero3.yaml")
    assert isinstance(values["backend"], Unknown)
    assert "installed" in values["backend"].reason


def test_example_job_intent() -> None:
    from preflight.examples import example_paths

    read = read_paths(example_paths())
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert values["intent.distributed"] == "deepspeed"
    assert values["intent.zero_stage"] == 3
    assert values["intent.precision"] == "fp16"
    assert values["intent.backend"] == "te"


@pytest.mark.parametrize("path", sorted(str(p.relative_to(FIX)) for p in FIX.glob("*/*")
                                        if p.suffix in {".yaml", ".json", ".toml", ".sh",
                                                        ".args"}))
def test_intent_values_use_the_registered_vocabulary(path: str) -> None:
    read = read_paths([str(FIX / path)])
    values, prov = derive(Facts(read.facts, read.provenance))
    vocab = {"intent.backend": {"te", "torchao", "msamp", "none"},
             "intent.recipe": {"delayed", "current", "tensorwise", "rowwise", "rowwise_with_gw_hp",
                               "mxfp8", "blockwise", "nvfp4"},
             "intent.format": {"hybrid", "e4m3", "e5m2"},
             "intent.precision": {"bf16", "fp16", "fp32"},
             "intent.distributed": {"none", "ddp", "fsdp1", "fsdp2", "deepspeed", "megatron"}}
    for name, allowed in vocab.items():
        value = values.get(name)
        if value is not None and not isinstance(value, Unknown):
            assert value in allowed, (name, value)
    assert set(values) == set(prov)
    for name in values:
        assert registry().lookup(name) is not None, name


@pytest.mark.parametrize("hidden,ffn,tokens,dims,tok", [
    (4096, 14336, 4096, 128, 128),     # 14336 = 2^11 * 7
    (768, 3072, 16384, 128, 128),
    (2048, 5632, 8192, 128, 128),      # 5632 = 2^9 * 11
    (1000, 3000, 1000, 8, 8),
    (4100, 16400, 4100, 4, 4),
    (4096, 11008, 2040, 128, 8),       # 11008 = 2^8 * 43
])
def test_alignment(tmp_path: Path, hidden: int, ffn: int, tokens: int, dims: int,
                   tok: int) -> None:
    (tmp_path / "a.args").write_text(
        f"--hidden-size {hidden} --ffn-hidden-size {ffn} --seq-length {tokens} "
        "--micro-batch-size 1 --fp8-format hybrid\n")
    read = read_paths([str(tmp_path / "a.args")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.shapes.dims_align"] == dims
    assert values["intent.shapes.tokens_align"] == tok
    assert values["intent.shapes.dims_align"] & (values["intent.shapes.dims_align"] - 1) == 0


def test_sequence_parallel_splits_tokens_for_alignment(tmp_path: Path) -> None:
    (tmp_path / "a.args").write_text(
        "--hidden-size 4096 --seq-length 4104 --micro-batch-size 1 "
        "--tensor-model-parallel-size 2 --sequence-parallel --fp8-format hybrid\n")
    read = read_paths([str(tmp_path / "a.args")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.shapes.tokens"] == 4104
    assert values["intent.shapes.tokens_align"] == 4     # 4104 / 2 = 2052 = 4 * 513
    assert values["intent.shapes.gemms"][0] == [4104, 4096, 6144]


@pytest.mark.parametrize(("pad", "packing", "tok"), [
    (None, None, 4), (32, None, 32), (4, None, 4), (32, "packing: true\n", 4)])
def test_padding_to_a_multiple_aligns_the_token_dimension(tmp_path: Path, pad: int | None,
                                                          packing: str | None, tok: int) -> None:
    """Rows padded to a multiple (TRL / axolotl pad_to_multiple_of) give micro-batches whose token
    count is a multiple of it whatever max_seq_length says: FP8D-TE-0012's fix (its --diff edit
    sets 32) must clear it. Packed rows are FP8D-TE-0051's, not this."""
    text = "output_dir: out\nmax_seq_length: 4100\nper_device_train_batch_size: 1\n"
    text += f"pad_to_multiple_of: {pad}\n" if pad else ""
    (tmp_path / "sft.yaml").write_text(text + (packing or ""))
    read = read_paths([str(tmp_path / "sft.yaml")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.shapes.tokens"] == 4100
    assert values["intent.shapes.tokens_align"] == tok


def test_env_fp8_reaches_an_hf_trainer_job_without_accelerate_config() -> None:
    env = {"env.ACCELERATE_MIXED_PRECISION": "fp8"}
    values, _ = intent_of("hf_trainer/train_args_noprec.json", extra=env)
    assert values["fp8"] is True
    assert values["frameworks"] == ["hf_trainer"]
    values, _ = intent_of("hf_trainer/train_args_bf16.yaml", extra=env)
    assert values["fp8"] is False
    assert values["fp8_overridden_by"].endswith("train_args_bf16.yaml:7")


_NAMES = ["config.accelerate.mixed_precision", "config.accelerate.distributed_type",
          "config.accelerate.fp8_config.backend", "config.accelerate.fp8_config.fp8_format",
          "config.accelerate.fsdp_config.fsdp_version", "config.accelerate.num_processes",
          "config.accelerate.dynamo_config.dynamo_backend", "config.deepspeed.fp16.enabled",
          "config.deepspeed.bf16.enabled", "config.deepspeed.zero_optimization.stage",
          "config.llmfoundry.precision", "config.llmfoundry.model.d_model",
          "config.llmfoundry.model.expansion_ratio", "config.llmfoundry.max_seq_len",
          "config.llmfoundry.device_train_microbatch_size", "config.torchtitan.model.converters",
          "config.torchtitan.model.flavor", "config.torchtitan.training.seq_len",
          "config.megatron.fp8_format", "config.megatron.hidden_size",
          "config.megatron.seq_length", "config.megatron.tensor_model_parallel_size",
          "config.megatron.sequence_parallel", "config.lightning.trainer.precision",
          "config.lightning.trainer.strategy", "config.hf_trainer.bf16", "config.nemo.model.fp8",
          "config.nemo.model.transformer_engine", "config.nemo.model.hidden_size",
          "env.ACCELERATE_MIXED_PRECISION"]


def _values():
    from hypothesis import strategies as st

    return (st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=True) |
            st.sampled_from(["fp8", "bf16", "auto", "TE", "AO", "DEEPSPEED", "FSDP", "amp_fp8",
                             "hybrid", "transformer-engine", "8B", "float8", "deepspeed_stage_3"])
            | st.text(max_size=6) | st.lists(st.sampled_from(["float8", "mx", 1]), max_size=3)
            | st.builds(Unknown, st.text(max_size=5)))


def test_derive_never_raises_on_odd_facts() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from preflight.jobs.read import KINDS

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.sampled_from(_NAMES), _values(), max_size=12),
           st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique=True))
    def run(config: dict, kinds: list) -> None:
        facts = Facts({**config, "config.kinds": sorted(kinds)})
        values, prov = derive(facts)
        assert set(values) == set(prov)
        # bool, or Unknown when a config block implies FP8 but its switch is on the command line
        assert isinstance(values["intent.fp8"], (bool, Unknown))
        for name in ("intent.shapes.dims_align", "intent.shapes.tokens_align"):
            value = values.get(name)
            if isinstance(value, int):
                assert 1 <= value <= 128 and value & (value - 1) == 0

    run()


def test_values_outside_the_vocabulary_become_unknown(tmp_path: Path) -> None:
    (tmp_path / "a.args").write_text("--fp8-format hybird --hidden-size 64\n--fp8-recipe custom\n")
    read = read_paths([str(tmp_path / "a.args")])
    values, _ = derive(Facts(read.facts, read.provenance))
    # "hybird" is not an FP8 format Megatron accepts: FP8 is not (validly) asked for
    assert values["intent.fp8"] is False
    (tmp_path / "a.args").write_text("--fp8-format hybrid --fp8-recipe custom\n")
    read = read_paths([str(tmp_path / "a.args")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert isinstance(values["intent.recipe"], Unknown)
    assert "custom" in values["intent.recipe"].reason


@pytest.mark.parametrize("name,content", [
    ("tt.toml", '[model]\nname = "llama3"\nconverters = ["float8"]\n[float8]\n'
                'recipe_name = ["rowwise"]\n'),
    ("meg.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: [delayed]\n"
                 "TEST_TYPE: regular\n"),
    ("meg.args", "--fp8-format hybrid --fp8-recipe delayed\n"),
])
def test_list_valued_vocabulary_settings_are_unknown_not_a_crash(tmp_path: Path, name: str,
                                                                 content: str) -> None:
    # audit: `recipe_name = ["rowwise"]` raised TypeError (unhashable list) in intent
    (tmp_path / name).write_text(content)
    read = read_paths([str(tmp_path / name)])
    assert read.problems == []
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    if name == "meg.args":
        assert values["intent.recipe"] == "delayed"
    else:
        assert isinstance(values["intent.recipe"], Unknown)
        assert "not a single name" in values["intent.recipe"].reason


@pytest.mark.parametrize("content", [
    "--fp8-format hybrid --hidden-size 4096 --micro-batch-size {big} --seq-length {big}\n",
    "--fp8-format hybrid --hidden-size {big} --seq-length 4096\n",
    "--fp8-format hybrid --hidden-size 4096 --micro-batch-size 4 --seq-length {big5k}\n",
])
def test_implausible_sizes_are_unknown_and_json_safe(tmp_path: Path, content: str) -> None:
    import json

    path = tmp_path / "a.args"
    path.write_text(content.format(big="7" * 3000, big5k="9" * 5000))
    read = read_paths([str(path)])
    assert read.problems == []
    values, _ = derive(Facts(read.facts, read.provenance))
    json.dumps({k: v for k, v in values.items() if not isinstance(v, Unknown)})
    json.dumps(read.facts)
    unknown = [n for n in ("intent.shapes.tokens", "intent.shapes.hidden")
               if isinstance(values[n], Unknown) and "plausible" in values[n].reason]
    assert unknown, values


def test_implausible_size_given_as_a_string_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(f"language_model:\n  fp8: hybrid\n  hidden_size: '{'1' * 5000}'\n"
                    "  seq_length: 2048\ntransformer_impl: transformer_engine\n")
    read = read_paths([str(path)])
    assert read.problems == []
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.shapes.hidden"], Unknown)
    assert "plausible" in values["intent.shapes.hidden"].reason


def _intent_of_text(tmp_path: Path, name: str, text: str) -> dict:
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    assert read.problems == []
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[len("intent."):]: v for k, v in values.items()}


TT_8B = '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["quantize.linear.float8"]\n' \
        "[training]\nlocal_batch_size = 1\nseq_len = 8192\n"


@pytest.mark.parametrize("extra,expected", [
    ('[compile]\nenable = true\ncomponents = ["loss"]\n', False),   # only the loss is compiled
    ('[compile]\nenable = true\ncomponents = ["model", "loss"]\n', True),
    ("[compile]\nenable = true\n", True),                          # default: model and loss
    ('[compile]\nenable = false\ncomponents = ["model"]\n', False),
])
def test_torchtitan_compile_means_the_model(tmp_path: Path, extra: str, expected: bool) -> None:
    assert _intent_of_text(tmp_path, "tt.toml", TT_8B + extra)["compile"] is expected


@pytest.mark.parametrize("parallelism,expected", [
    ("data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 1\n"
     "tensor_parallel_degree = 8\n", "none"),                     # TP only: no FSDP, no DDP
    ("data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 8\n", "ddp"),
    ("data_parallel_shard_degree = 1\ncontext_parallel_degree = 2\n", "fsdp2"),  # fully_shard
    ("data_parallel_shard_degree = -1\ntensor_parallel_degree = 2\n", "fsdp2"),
    ("data_parallel_shard_degree = 4\ndata_parallel_replicate_degree = 2\n", "fsdp2"),  # HSDP
])
def test_torchtitan_data_parallel_wrapper(tmp_path: Path, parallelism: str,
                                          expected: str) -> None:
    values = _intent_of_text(tmp_path, "tt.toml", TT_8B + "[parallelism]\n" + parallelism)
    assert values["distributed"] == expected


@pytest.mark.parametrize("strategy,stage", [
    ("deepspeed_stage_3_offload", 3), ("deepspeed_stage_3_offload_nvme", 3),
    ("deepspeed_stage_2_offload", 2), ("deepspeed_stage_1", 1), ("deepspeed", 2),
])
def test_lightning_deepspeed_strategy_names_give_the_stage(tmp_path: Path, strategy: str,
                                                           stage: int) -> None:
    values = _intent_of_text(tmp_path, "lit.yaml", f"trainer:\n  devices: 8\n  strategy: "
                                                   f"{strategy}\n  precision: transformer-engine\n")
    assert values["distributed"] == "deepspeed" and values["zero_stage"] == stage


def test_lightning_deepspeed_strategy_class_with_stage(tmp_path: Path) -> None:
    values = _intent_of_text(tmp_path, "lit.yaml", (
        "trainer:\n  devices: 8\n  strategy:\n    class_path: lightning.pytorch.strategies."
        "DeepSpeedStrategy\n    init_args:\n      stage: 3\n  precision: transformer-engine\n"))
    assert values["zero_stage"] == 3


def test_megatron_nnodes_from_a_variable_with_a_default(tmp_path: Path) -> None:
    script = ("#!/bin/bash\nGPUS_PER_NODE=8\nNNODES=${SLURM_NNODES:-4}\n"
              'DIST="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES"\n'
              "torchrun $DIST pretrain_gpt.py --fp8-format hybrid --hidden-size 1024\n")
    assert _intent_of_text(tmp_path, "run.sh", script)["num_gpus"] == 32
    unset = script.replace("NNODES=${SLURM_NNODES:-4}", "NNODES=$SLURM_NNODES")
    values = _intent_of_text(tmp_path, "run.sh", unset)
    assert isinstance(values["num_gpus"], Unknown)     # not 8: the node count is set at launch


def test_megatron_torch_fsdp2_is_fsdp2(tmp_path: Path) -> None:
    values = _intent_of_text(tmp_path, "a.args", "--fp8-format hybrid --use-torch-fsdp2\n")
    assert values["distributed"] == "fsdp2"
    assert _intent_of_text(tmp_path, "a.args", "--fp8-format hybrid\n")["distributed"] == \
        "megatron"


@pytest.mark.parametrize("args,gemms", [
    # dense, no GQA, no gating: the plain shapes
    ("--hidden-size 4096 --ffn-hidden-size 16384 --num-attention-heads 32",
     [[4096, 4096, 12288], [4096, 4096, 4096], [4096, 4096, 16384], [4096, 16384, 4096]]),
    # Llama-3-70B-like: GQA 64 heads / 8 groups, SwiGLU, TP 4 (audit's D_megatron job)
    ("--hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64 "
     "--group-query-attention --num-query-groups 8 --swiglu --tensor-model-parallel-size 4",
     [[4096, 8192, 2560], [4096, 2048, 8192], [4096, 8192, 14336], [4096, 7168, 8192]]),
    # --num-query-groups without --group-query-attention is ignored by Megatron
    ("--hidden-size 4096 --num-attention-heads 32 --num-query-groups 8",
     [[4096, 4096, 12288], [4096, 4096, 4096], [4096, 4096, 16384], [4096, 16384, 4096]]),
    # --swiglu without --ffn-hidden-size: int(8h/3 / 64) * 64 = 10880, FC1 doubled
    ("--hidden-size 4096 --num-attention-heads 32 --swiglu",
     [[4096, 4096, 12288], [4096, 4096, 4096], [4096, 4096, 21760], [4096, 10880, 4096]]),
    # --kv-channels other than hidden / heads
    ("--hidden-size 2048 --num-attention-heads 16 --kv-channels 256 --group-query-attention "
     "--num-query-groups 2",
     [[4096, 2048, 5120], [4096, 4096, 2048], [4096, 2048, 8192], [4096, 8192, 2048]]),
])
def test_megatron_gemm_shapes_follow_gqa_and_swiglu(tmp_path: Path, args: str,
                                                    gemms: list) -> None:
    values = _intent_of_text(tmp_path, "a.args",
                             f"--fp8-format hybrid --seq-length 4096 --micro-batch-size 1 {args}\n")
    assert values["shapes.gemms"] == gemms


def test_nemo_gemm_shapes_follow_gqa_and_swiglu(tmp_path: Path) -> None:
    values = _intent_of_text(tmp_path, "nemo.yaml", (
        "name: megatron_gpt\ntrainer: {devices: 8}\nmodel:\n  mcore_gpt: true\n"
        "  micro_batch_size: 1\n  encoder_seq_length: 4096\n  hidden_size: 4096\n"
        "  ffn_hidden_size: 14336\n  num_attention_heads: 32\n  num_query_groups: 8\n"
        "  activation: fast-swiglu\n  transformer_engine: true\n  fp8: true\n"))
    assert values["shapes.gemms"] == [[4096, 4096, 6144], [4096, 4096, 4096],
                                      [4096, 4096, 28672], [4096, 14336, 4096]]


def test_torchtitan_pre_release_fp8_linear_string(tmp_path: Path) -> None:
    # before torchtitan PR #413 (2024-07-16): --training.fp8_linear was "" or "dynamic"
    values = _intent_of_text(tmp_path, "tt.toml", '[model]\nname = "llama3"\nflavor = "8B"\n'
                             '[training]\nbatch_size = 1\nseq_len = 8192\n'
                             'fp8_linear = "dynamic"\ncompile = true\n')
    assert values["fp8"] is True and values["recipe"] == "tensorwise"
    values = _intent_of_text(tmp_path, "tt.toml", '[model]\nname = "llama3"\n[training]\n'
                             'fp8_linear = ""\n')
    assert values["fp8"] is False


@pytest.mark.parametrize("value", ["{a: 1}", "[HYBRID]", "3"])
def test_llmfoundry_fp8_format_that_is_no_name_is_unknown(tmp_path: Path, value: str) -> None:
    values = _intent_of_text(tmp_path, "f.yaml", "model:\n  name: mpt_causal_lm\nprecision: amp_fp8\n"
                             f"max_duration: 1ba\nprecision_config:\n  fp8_format: {value}\n")
    assert isinstance(values["format"], Unknown)     # not the default "hybrid"


# --- several frameworks ask for FP8: a value the first leaves Unknown, another states -----------

TE_MODEL = """import transformer_engine.pytorch as te
from transformer_engine.common.recipe import Format, MXFP8BlockScaling
recipe = MXFP8BlockScaling(fp8_format=Format.E4M3)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = te.LayerNormMLP(hidden_size=3072, ffn_hidden_size=8192)

    def forward(self, x):
        with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
            return self.mlp(x)
"""
ACC_SCRIPT = """from accelerate import Accelerator
from model import Block
accelerator = Accelerator(mixed_precision="fp8", kwargs_handlers={handlers})
model, optimizer = accelerator.prepare(Block(), optimizer)
for batch in loader:
    loss = model(batch).sum()
    accelerator.backward(loss)
    optimizer.step()
"""


def _two_asking(tmp: Path, handlers: str) -> dict[str, object]:
    (tmp / ".git").mkdir(exist_ok=True)
    (tmp / "model.py").write_text(TE_MODEL)
    (tmp / "train.py").write_text(ACC_SCRIPT.format(handlers=handlers))
    (tmp / "run.sh").write_text("python train.py\n")
    read = read_paths([str(tmp / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[len("intent."):]: v for k, v in values.items()}


def test_an_unknown_handler_leaves_the_script_own_te_recipe(tmp_path: Path) -> None:
    # holdout18 llmfp8: accelerate's handler is built at run time (backend Unknown); the TE layers'
    # own fp8_autocast(MXFP8BlockScaling) says backend te, recipe mxfp8 (FP8D-TE-0014 on sm_120)
    got = _two_asking(tmp_path, "make_handlers()")
    assert got["fp8"] is True
    assert (got["backend"], got["recipe"], got["format"]) == ("te", "mxfp8", "e4m3")


def test_the_first_asking_framework_still_wins_where_it_states_the_value(tmp_path: Path) -> None:
    # quiet: accelerate's own TE handler states the backend; its value is kept
    got = _two_asking(tmp_path, "[TERecipeKwargs(fp8_format='HYBRID')]")
    assert got["backend"] == "te" and got["format"] == "hybrid"


def test_hostile_no_asking_framework_states_it_stays_unknown() -> None:
    from preflight.frameworks._derived import Derived
    from preflight.intent import _known
    why = Unknown("built at run time")
    per = {"accelerate": Derived(values={"backend": (why, "a")}),
           "pytorch": Derived(values={"backend": (Unknown("x" * 10000), "b")}),
           "deepspeed": Derived(values={"backend": ("msamp", "c")})}
    # deepspeed does not ask for FP8 here: its value is not taken
    assert _known("backend", (why, "a"), [("accelerate", "a"), ("pytorch", "b")], per) == \
        (why, "a")


# --- an FP8 switch that is Unknown goes through the test an asked FP8 does ---------------------

def _combined(per: dict[str, object]) -> dict[str, object]:
    from preflight.intent import _combine_fp8
    got: dict[str, object] = {}
    _combine_fp8(per, got)  # type: ignore[arg-type]
    return got


def test_an_unknown_switch_its_own_framework_ignores_is_no() -> None:
    # NeMo 1.x without model.transformer_engine ignores model.fp8, whatever it is (firing)
    from preflight.frameworks._derived import Derived
    per = {"nemo": Derived(values={"fp8": (Unknown("model.fp8 is ${oc.env:FP8}"), "c.yaml:3")},
                           overrides_fp8=(True, "c.yaml:9"))}
    got = _combined(per)
    assert got["fp8"] == (False, "c.yaml:9") and got["fp8_overridden_by"][0] == "c.yaml:9"


@pytest.mark.parametrize("derived", [
    {"overrides_fp8": (Unknown("transformer_engine is set on the command line"), "c.yaml:9")},
    {"overrides_fp8": None},
    {"overrides_fp8": (True, "c.yaml:9"), "survives_override": ("te", "c.yaml:1")},
])
def test_an_unknown_switch_not_certainly_replaced_stays_unknown(derived: dict[str, object]
                                                                ) -> None:
    from preflight.frameworks._derived import Derived
    why = Unknown("model.fp8 is ${oc.env:FP8}")
    got = _combined({"nemo": Derived(values={"fp8": (why, "c.yaml:3")}, **derived)})
    assert got["fp8"] == (why, "c.yaml:3") and "fp8_overridden_by" not in got
