"""Frameworks reading Python job files (issue 22 item 1): each record's ``read_python`` maps the
calls it knows onto the same ``config.<kind>.*`` facts its YAML gives, at the script's lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_training_arguments_and_trl_configs_are_the_hf_trainer_keys(tmp_path: Path) -> None:
    script = _write(tmp_path, "sft.py", """
        from trl import SFTConfig
        cfg = SFTConfig(output_dir="o", bf16=True, gradient_checkpointing=True,
                        deepspeed="ds.json", fsdp_config={"fsdp_version": 2})
    """)
    read = read_paths([script])
    facts, prov = read.facts, read.provenance
    assert facts["config.hf_trainer.bf16"] is True and prov["config.hf_trainer.bf16"].line == 3
    assert facts["config.hf_trainer.gradient_checkpointing"] is True
    assert facts["config.hf_trainer.fsdp_config.fsdp_version"] == 2
    assert facts["config.hf_trainer.code.args_class"] == "SFTConfig"
    assert read.files == [(script, "hf_trainer")]
    assert any(p.code == "reference" and "ds.json" in p.message for p in read.problems)


def test_a_subclass_in_the_script_is_training_arguments(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        from dataclasses import dataclass
        import transformers
        @dataclass
        class Args(transformers.TrainingArguments):
            extra: int = 1
        Args(output_dir="o", fp16=True)
    """)
    assert read_paths([script]).facts["config.hf_trainer.fp16"] is True


def test_an_unknown_double_star_makes_the_precision_unknown_not_absent(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        import json
        from transformers import TrainingArguments
        TrainingArguments(output_dir="o", **json.load(open("args.json")))
    """)
    facts = read_paths([script]).facts
    assert isinstance(facts["config.hf_trainer.bf16"], Unknown)
    assert "**" in facts["config.hf_trainer.bf16"].reason


def test_accelerator_with_a_recipe_handler(tmp_path: Path) -> None:
    # the shape of huggingface/accelerate v1.14.0 benchmarks/fp8/transformer_engine/*.py
    script = _write(tmp_path, "train.py", """
        from accelerate import Accelerator
        from accelerate.utils import TERecipeKwargs
        from transformer_engine.common.recipe import Format
        handler = TERecipeKwargs(fp8_format=Format.E4M3, amax_history_len=32,
                                 use_mxfp8_block_scaling=True)
        accelerator = Accelerator(mixed_precision="fp8", kwargs_handlers=[handler])
    """)
    read = read_paths([script])
    f = read.facts
    assert f["config.accelerate.mixed_precision"] == "fp8"
    assert f["config.accelerate.kwargs_handlers"] == ["TERecipeKwargs"]
    assert f["config.accelerate.fp8_config.backend"] == "TE"
    assert f["config.accelerate.kwargs_handlers.TERecipeKwargs.fp8_format"] == "E4M3"
    assert not any(n.startswith("config.accelerate.fp8_config.amax") for n in f)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.recipe"] == "mxfp8" and values["intent.format"] == "e4m3"


def test_torchao_handler_recipe_and_filter(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        from accelerate import Accelerator
        from accelerate.utils import AORecipeKwargs
        from torchao.float8 import Float8LinearConfig
        def keep(module, fqn):
            return "lm_head" not in fqn
        cfg = Float8LinearConfig.from_recipe_name("rowwise")
        Accelerator(mixed_precision="fp8",
                    kwargs_handlers=[AORecipeKwargs(config=cfg, module_filter_func=keep)])
    """)
    read = read_paths([script])
    assert read.facts["config.accelerate.kwargs_handlers.AORecipeKwargs.recipe_name"] == "rowwise"
    assert read.facts["config.accelerate.kwargs_handlers.AORecipeKwargs.module_filter_func"]
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.backend"] == "torchao" and values["intent.recipe"] == "rowwise"


def test_the_script_a_launch_line_runs_is_read_with_its_arguments(tmp_path: Path) -> None:
    _write(tmp_path, "train.py", """
        import argparse
        from transformers import TrainingArguments
        p = argparse.ArgumentParser()
        p.add_argument("--precision", default="bf16")
        a = p.parse_args()
        TrainingArguments(output_dir="o", bf16=a.precision)
    """)
    launch = _write(tmp_path, "run.sh", """\
        #!/bin/bash
        accelerate launch --mixed_precision fp8 train.py --precision fp16
    """)
    read = read_paths([launch])
    # the launch line's "fp16" reaches TrainingArguments(bf16="fp16"), a dataclass that keeps
    # the string: its truth turns bf16 on (readfix9: Framework.python_strings)
    assert read.facts["config.hf_trainer.bf16"] is True
    assert str(read.provenance["config.hf_trainer.bf16"]).endswith("train.py:7")
    assert [k for _, k in read.files] == ["accelerate", "hf_trainer"]


def test_hf_argument_parser_takes_the_yaml_the_launch_line_passes(tmp_path: Path) -> None:
    # TRL's trl/scripts/sft.py (huggingface/trl v1.9.0): TrlParser((..., SFTConfig, ...))
    _write(tmp_path, "sft.py", """
        from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser
        def make_parser():
            dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)
            return TrlParser(dataclass_types)
        parser = make_parser()
        script_args, training_args, model_args = parser.parse_args_and_config()
    """)
    _write(tmp_path, "recipe.yaml", "output_dir: o\nbf16: true\nper_device_train_batch_size: 2\n")
    launch = _write(tmp_path, "run.sh", "accelerate launch --mixed_precision fp8 sft.py "
                                        "--config recipe.yaml\n")
    read = read_paths([launch])
    assert read.facts["config.hf_trainer.bf16"] is True
    assert read.provenance["config.hf_trainer.bf16"].endswith("recipe.yaml:2")


def test_a_python_file_with_nothing_known_is_said_so(tmp_path: Path) -> None:
    script = _write(tmp_path, "model.py", "import torch\nclass Net(torch.nn.Module):\n    pass\n")
    read = read_paths([script])
    assert read.files == []
    assert [p.code for p in read.problems][:1] == ["not_a_config"]
    assert "was parsed, not run" in read.problems[0].message


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
REGISTRY = FIXTURES / "torchtitan/python/torchtitan/models/llama3/config_registry.py"


def _intent(paths: list[str]) -> dict:
    read = read_paths(paths)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values


def test_a_lightning_script_with_the_te_plugin() -> None:
    script = str(FIXTURES / "lightning/python/train_te.py")
    read = read_paths([script])
    assert read.files == [(script, "lightning")] and read.problems == []
    plugin = "config.lightning.trainer.plugins.TransformerEnginePrecision"
    assert read.facts[f"{plugin}.recipe.amax_history_len"] == 16
    values = _intent([script])
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.recipe"] == "delayed" and values["intent.format"] == "hybrid"
    assert values["intent.precision"] == "bf16" and values["intent.distributed"] == "fsdp1"
    assert values["intent.num_gpus"] == 8


def test_a_lightning_precision_string_and_a_strategy_object(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        import pytorch_lightning as pl
        from pytorch_lightning.strategies import DeepSpeedStrategy
        pl.Trainer(precision="transformer-engine-float16", strategy=DeepSpeedStrategy(stage=3))
    """)
    values = _intent([script])
    assert values["intent.fp8"] is True and values["intent.precision"] == "fp16"
    assert values["intent.zero_stage"] == 3 and "deepspeed" in values["intent.stack"]


def test_a_torchtitan_config_function_is_its_toml() -> None:
    values = _intent([f"{REGISTRY}::llama3_405b"])
    assert values["intent.fp8"] is True and values["intent.backend"] == "torchao"
    assert values["intent.recipe"] == "rowwise"     # Float8LinearConverter.Config default
    assert values["intent.tp"] == 8 and values["intent.compile"] is True
    assert values["intent.shapes.hidden"] == 16384 and values["intent.shapes.tokens"] == 16384
    mx = _intent([f"{REGISTRY}::llama3_8b_mxfp8"])
    assert mx["intent.recipe"] == "mxfp8" and mx["intent.activation_checkpointing"] is True
    plain = _intent([f"{REGISTRY}::llama3_8b"])
    assert plain["intent.fp8"] is False


def test_a_torchtitan_registry_read_whole_states_only_what_its_configs_agree_on() -> None:
    read = read_paths([str(REGISTRY)])
    assert [k for _, k in read.files] == ["torchtitan"]
    f = read.facts
    converters = f["config.torchtitan.model.converters"]
    assert isinstance(converters, Unknown)
    assert "llama3_405b" in converters.reason and "not set in llama3_8b" in converters.reason
    assert "::llama3_8b" in converters.reason         # how to name one
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    # some configs ask for FP8 and some do not: never "no", never one config taken for the job
    for name in ("intent.fp8", "intent.tp", "intent.compile"):
        assert isinstance(values[name], Unknown), name
    named = read_paths([f"{REGISTRY}::no_such_config"])
    assert "'no_such_config' is none of them" in named.problems[0].message


REGISTRY_2026_04 = FIXTURES / "torchtitan/python_2026_04/torchtitan/models/llama3/config_registry.py"


def test_the_2026_04_registry_layout_model_converters_and_ac_mode() -> None:
    # pytorch/torchtitan 00d1c0e4: model_converters=ModelConvertersContainer.Config(converters=[
    # Float8LinearConverter.Config(...)]), recipe_name None (tensorwise), ActivationCheckpointConfig
    big = _intent([f"{REGISTRY_2026_04}::llama3_405b"])
    assert big["intent.fp8"] is True and big["intent.recipe"] == "tensorwise"
    assert big["intent.tp"] == 8 and big["intent.compile"] is True
    assert big["intent.activation_checkpointing"] is True
    debug = _intent([f"{REGISTRY_2026_04}::llama3_debugmodel_float8_emulate"])
    assert debug["intent.fp8"] is True and debug["intent.compile"] is False
    assert _intent([f"{REGISTRY_2026_04}::llama3_8b"])["intent.fp8"] is False
    whole = _intent([str(REGISTRY_2026_04)])
    assert isinstance(whole["intent.fp8"], Unknown)
    assert whole["intent.distributed"] == "fsdp2"      # every config leaves dp_shard at -1


def test_a_launch_line_picks_the_registry_config(tmp_path: Path) -> None:
    # torchtitan 00d1c0e4 run_train.sh: MODULE / CONFIG -> -m torchtitan.train --module M --config C
    home = tmp_path / "torchtitan/models/llama3"
    home.mkdir(parents=True)
    (home / "config_registry.py").write_text(REGISTRY_2026_04.read_text())
    env_line = _write(tmp_path, "run.sh", "MODULE=llama3 CONFIG=llama3_405b ./run_train.sh "
                                          "--training.steps 10\n")
    read = read_paths([env_line])
    assert read.facts["config.torchtitan.job.config_function"] == "llama3_405b"
    assert read.facts["config.torchtitan.training.steps"] == 10        # the line wins
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True and values["intent.tp"] == 8
    flags = _write(tmp_path, "run2.sh", "torchrun --nproc_per_node 8 -m torchtitan.train "
                                        "--module llama3 --config llama3_8b\n")
    assert _intent([flags])["intent.fp8"] is False


def test_a_registry_the_launch_line_names_but_not_here_leaves_fp8_unknown(tmp_path: Path) -> None:
    line = _write(tmp_path, "run.sh", "MODULE=llama3 CONFIG=llama3_405b ./run_train.sh\n")
    read = read_paths([line])
    assert any(p.code == "reference" for p in read.problems)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert "llama3_405b" in values["intent.fp8"].reason


def test_a_te_training_loop_with_torch_checkpoint(tmp_path: Path) -> None:
    # the calls of NVIDIA/TransformerEngine v2.18 examples/pytorch (te.autocast, recipes)
    script = _write(tmp_path, "train.py", """
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling, Format
        from torch.utils.checkpoint import checkpoint
        model = te.TransformerLayer(4096, 16384, 32)
        recipe = DelayedScaling(fp8_format=Format.E4M3, amax_history_len=16)
        with te.autocast(enabled=True, recipe=recipe):
            out = checkpoint(model, torch.randn(8, 8, 4096), use_reentrant=True)
    """)
    read = read_paths([script])
    assert read.files == [(script, "pytorch")]
    values = _intent([script])
    assert values["intent.fp8"] is True and values["intent.backend"] == "te"
    assert values["intent.recipe"] == "delayed" and values["intent.format"] == "e4m3"
    assert values["intent.activation_checkpointing"] is True
    from preflight.engine import evaluate, load_rules

    facts = Facts(read.facts, read.provenance).merged(*intent.derive(
        Facts(read.facts, read.provenance)))
    fired = {f.rule_id for f in evaluate(load_rules(with_tests=False), facts).findings}
    assert "FP8D-TE-0002" in fired


def test_te_autocast_off_and_fp8_autocast_defaults(tmp_path: Path) -> None:
    off = _write(tmp_path, "off.py", """
        import transformer_engine.pytorch as te
        with te.fp8_autocast(enabled=False):
            pass
    """)
    assert _intent([off])["intent.fp8"] is False
    default = _write(tmp_path, "default.py", """
        from transformer_engine.pytorch import fp8_autocast
        from transformer_engine.common.recipe import MXFP8BlockScaling
        with fp8_autocast(fp8_recipe=MXFP8BlockScaling()):
            pass
    """)
    values = _intent([default])
    assert values["intent.fp8"] is True          # enabled defaults to True from TE 1.0
    assert values["intent.recipe"] == "mxfp8" and values["intent.format"] == "e4m3"


def test_torchao_conversion_recipe_and_filter(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        import torch
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
        config = Float8LinearConfig.from_recipe_name("rowwise")
        convert_to_float8_training(model, config=config)
        model = torch.compile(model)
    """)
    read = read_paths([script])
    assert read.facts["config.pytorch.torchao.module_filter_fn"] is False
    values = _intent([script])
    assert values["intent.backend"] == "torchao" and values["intent.recipe"] == "rowwise"
    assert values["intent.compile"] is True


def test_a_trl_config_is_read_as_trl_on_the_hf_trainer(tmp_path: Path) -> None:
    script = _write(tmp_path, "train.py", """
        from trl import GRPOConfig
        GRPOConfig(output_dir="o", gradient_checkpointing=True)
    """)
    read = read_paths([script])
    assert read.facts["config.trl.config_class"] == "GRPOConfig"
    assert read.facts["config.hf_trainer.gradient_checkpointing"] is True
    values = _intent([script])
    assert values["intent.stack"][:3] == ["hf_trainer", "trl", "accelerate"] or \
        {"hf_trainer", "trl", "accelerate"} <= set(values["intent.stack"])


def test_te_autocast_with_no_recipe_leaves_it_to_te(tmp_path: Path) -> None:
    # TE's get_default_fp8_recipe() depends on its version and the GPU: no recipe is stated
    script = _write(tmp_path, "train.py", """
        import transformer_engine.pytorch as te
        with te.autocast():
            pass
    """)
    values = _intent([script])
    assert values["intent.fp8"] is True and values["intent.recipe_by_backend"] is True
    assert isinstance(values["intent.recipe"], Unknown)


# -- a setting under a condition (issue 22 item 5): the branch the launch line decides, else
# Unknown with the condition -- never "FP8: no".

_FSDP2_FP8 = """
    # huggingface/accelerate 638759bb examples/torch_native_parallelism/fsdp2_fp8.py, reduced
    import argparse
    from torchao.float8 import Float8LinearConfig
    from accelerate import Accelerator
    from accelerate.utils import AORecipeKwargs, FullyShardedDataParallelPlugin, TorchDynamoPlugin
    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", type=str, default="fp8", choices=["fp8", "bf16"])
        return parser.parse_args()
    def main():
        args = parse_args()
        fsdp2_plugin = FullyShardedDataParallelPlugin(fsdp_version=2,
                                                      cpu_ram_efficient_loading=False)
        dynamo_plugin = TorchDynamoPlugin(backend="inductor", use_regional_compilation=True)
        fp8_config = Float8LinearConfig(enable_fsdp_float8_all_gather=True)
        kwargs = []
        if args.precision == "fp8":
            kwargs = [AORecipeKwargs(config=fp8_config)]
        accelerator = Accelerator(fsdp_plugin=fsdp2_plugin, dynamo_plugin=dynamo_plugin,
                                  kwargs_handlers=kwargs)
    if __name__ == "__main__":
        main()
"""


def _derive(paths: list[str]) -> dict[str, object]:
    read = read_paths(paths)
    return intent.derive(Facts(read.facts, read.provenance))[0]


def test_a_recipe_handler_chosen_by_the_launch_line_asks_for_fp8(tmp_path: Path) -> None:
    _write(tmp_path, "fsdp2_fp8.py", _FSDP2_FP8)
    launch = _write(tmp_path, "run.sh", "accelerate launch fsdp2_fp8.py --precision fp8\n")
    values = _derive([launch])
    # no mixed_precision anywhere: the AO handler alone makes prepare() convert the model
    assert values["intent.fp8"] is True and values["intent.backend"] == "torchao"
    assert values["intent.recipe"] == "tensorwise"
    assert values["intent.distributed"] == "fsdp2" and values["intent.compile"] is True
    bf16 = _write(tmp_path, "bf16.sh", "accelerate launch fsdp2_fp8.py --precision bf16\n")
    assert _derive([bf16])["intent.fp8"] is False


def test_a_recipe_handler_nothing_decides_leaves_fp8_unknown(tmp_path: Path) -> None:
    # Found in a folder (not named, no launch runs it): its arguments are not known.
    _write(tmp_path, "fsdp2_fp8.py", _FSDP2_FP8)
    fp8 = _derive([str(tmp_path)])["intent.fp8"]
    assert isinstance(fp8, Unknown)
    assert "args.precision == 'fp8'" in fp8.reason and "--precision" in fp8.reason


def test_a_named_script_no_launch_runs_reads_its_argparse_default(tmp_path: Path) -> None:
    # Named by the user and run by no launch line: read as `python fsdp2_fp8.py` (session 44,
    # pyfix9), --precision's default "fp8" decides, and the note says what was assumed.
    script = _write(tmp_path, "fsdp2_fp8.py", _FSDP2_FP8)
    read = read_paths([script])
    assert intent.derive(Facts(read.facts, read.provenance))[0]["intent.fp8"] is True
    assert any(p.code == "runtime_args" for p in read.problems)


def test_settings_under_an_undecided_condition_are_unknown_not_off(tmp_path: Path) -> None:
    cases = {
        "lightning.py": """
            import os
            import lightning as L
            if os.environ.get("FP8"):
                trainer = L.Trainer(precision="transformer-engine")
            else:
                trainer = L.Trainer(precision="bf16-mixed")
        """,
        "ao.py": """
            import torch
            from torchao.float8 import convert_to_float8_training
            model = build()
            if torch.cuda.get_device_capability() >= (8, 9):
                convert_to_float8_training(model)
        """,
        "te.py": """
            import os
            import transformer_engine.pytorch as te
            if os.environ.get("FP8") == "1":
                with te.autocast(enabled=True):
                    step()
        """,
    }
    for name, text in cases.items():
        fp8 = _derive([_write(tmp_path, name, text)])["intent.fp8"]
        assert isinstance(fp8, Unknown), (name, fp8)
        assert "does not decide" in fp8.reason or "set to" in fp8.reason, (name, fp8)


def test_bf16_under_an_undecided_condition_may_or_may_not_replace_fp8(tmp_path: Path) -> None:
    _write(tmp_path, "train.py", """
        import os
        from transformers import TrainingArguments
        bf16 = False
        if os.environ.get("BF16"):
            bf16 = True
        TrainingArguments(output_dir="o", bf16=bf16)
    """)
    # BF16 given a value only the run knows (unset, the lookup's default decides:
    # reading/pyenviron.py, tests/reading/test_pyenviron.py)
    launch = _write(tmp_path, "run.sh", "export BF16=$1\n"
                    "accelerate launch --mixed_precision fp8 train.py\n")
    values = _derive([launch])
    assert isinstance(values["intent.fp8"], Unknown)
    assert "bf16" in values["intent.fp8"].reason


# accelerate's benchmarks/fp8/ms_amp/distrib_deepspeed.py (huggingface/accelerate@16cb6eb80dd9,
# l.106-111; holdout5): MS-AMP through a DeepSpeedPlugin built in the script
_MSAMP_DS = """
    from accelerate import Accelerator, DeepSpeedPlugin

    def train_integration(zero_stage: int = 1, opt_level: str = "O1"):
        deepspeed_plugin = DeepSpeedPlugin(
            zero_stage=zero_stage,
            enable_msamp=True,
            msamp_opt_level=opt_level,
        )
        accelerator = Accelerator(mixed_precision="fp8", deepspeed_plugin=deepspeed_plugin)

    if __name__ == "__main__":
        train_integration(2, "O2")
"""


def test_a_deepspeed_plugin_with_msamp_in_code_is_msamp_under_deepspeed(tmp_path: Path) -> None:
    from preflight.engine import evaluate, load_rules

    script = _write(tmp_path, "distrib_deepspeed.py", _MSAMP_DS)
    read = read_paths([script])
    f = read.facts
    assert f["config.accelerate.distributed_type"] == "DEEPSPEED"
    assert f["config.accelerate.accelerator.fp8_backend"] == "MSAMP"
    assert f["config.accelerate.deepspeed_config.zero_stage"] == 2
    assert f["config.accelerate.fp8_config.opt_level"] == "O2"
    assert read.provenance["config.accelerate.accelerator.fp8_backend"].line == 7
    facts = Facts({**read.facts, "pkg.accelerate.version": "1.6.0"}, read.provenance)
    facts = facts.merged(*intent.derive(facts))
    assert facts["intent.distributed"] == "deepspeed"
    # accelerator.py l.3840-3841 @ v1.6.0: fp8_backend returns MSAMP, msamp.deepspeed runs
    fired = {x.rule_id for x in evaluate(load_rules(with_tests=False), facts).findings}
    assert "FP8D-ACC-0021" not in fired
    quiet = _write(tmp_path, "no_msamp.py", _MSAMP_DS.replace("enable_msamp=True",
                                                              "enable_msamp=False"))
    read = read_paths([quiet])
    assert "config.accelerate.accelerator.fp8_backend" not in read.facts
    facts = Facts({**read.facts, "pkg.accelerate.version": "1.6.0"}, read.provenance)
    facts = facts.merged(*intent.derive(facts))
    fired = {x.rule_id for x in evaluate(load_rules(with_tests=False), facts).findings}
    assert "FP8D-ACC-0021" in fired           # no handler, no MS-AMP: the 1.4-1.7 bug


def test_an_fp8_keyword_on_a_call_no_reader_reads_leaves_fp8_unknown(tmp_path: Path) -> None:
    # holdout10 (unsloth PR 3440): TRL's GRPOConfig is read and says nothing of FP8, but the
    # model is loaded by a library fp8-doctor does not read, with load_in_fp8=True: "no" was wrong
    # (unsloth is read now, tests/frameworks/test_unsloth.py: the class stands for any other)
    script = _write(tmp_path, "grpo.py", """
        from fastloader import FastLanguageModel
        from trl import GRPOConfig
        model, tok = FastLanguageModel.from_pretrained(model_name="m", load_in_fp8=True)
        args = GRPOConfig(output_dir="o", learning_rate=5e-6)
    """)
    read = read_paths([script])
    assert isinstance(read.facts["config.hf_trainer.unread_args"], Unknown)
    assert read.provenance["config.hf_trainer.unread_args"].line == 4
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)
    assert "load_in_fp8" in values["intent.fp8"].reason


def test_an_fp8_keyword_set_off_or_read_by_a_reader_changes_nothing(tmp_path: Path) -> None:
    off = _write(tmp_path, "off.py", """
        from unsloth import FastLanguageModel
        from trl import GRPOConfig
        model, tok = FastLanguageModel.from_pretrained(model_name="m", load_in_fp8=False)
        args = GRPOConfig(output_dir="o", learning_rate=5e-6)
    """)
    read = read_paths([off])
    assert "config.hf_trainer.unread_args" not in read.facts
    assert intent.derive(Facts(read.facts, read.provenance))[0]["intent.fp8"] is False
    # an FP8 keyword the reader itself reads (its fact carries the keyword's line) decides
    te = _write(tmp_path, "te.py", """
        import transformer_engine.pytorch as te
        from transformer_engine.common import recipe
        with te.fp8_autocast(enabled=True, fp8_recipe=recipe.DelayedScaling()):
            pass
    """)
    facts = read_paths([te]).facts
    assert not any(n.endswith(".unread_args") for n in facts)
