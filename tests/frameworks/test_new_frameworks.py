"""axolotl and LLaMA-Factory read as themselves (issue 14 item 3), from their public configs."""

from __future__ import annotations

from pathlib import Path

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
LF_REPO = FIX / "jobs" / "llamafactory_repo"


def _intent(*paths: Path) -> tuple[dict, dict, list]:
    read = read_paths([str(p) for p in paths])
    values, prov = derive(Facts(read.facts, read.provenance))
    return ({k[7:]: v for k, v in values.items()}, read.facts, read.files)


def test_axolotl_example_is_axolotl_not_hf_trainer() -> None:
    # axolotl examples/llama-3/3b-fp8-fsdp2.yaml (README cites the commit)
    intent, facts, files = _intent(FIX / "axolotl" / "3b-fp8-fsdp2.yaml")
    assert [k for _, k in files] == ["axolotl"]
    assert facts["config.axolotl.fp8_enable_fsdp_float8_all_gather"] is True
    assert not any(n.startswith("config.hf_trainer.") for n in facts)
    assert intent["fp8"] is True and intent["backend"] == "torchao"
    assert intent["recipe"] == "tensorwise" and intent["distributed"] == "fsdp2"
    assert intent["compile"] is True and intent["shapes.tokens"] == 16 * 512
    assert intent["frameworks"] == ["axolotl"]


def test_llamafactory_torchao_recipe_is_accelerates_default_and_all_gather_is_a_no_op(
        tmp_path: Path) -> None:
    yaml = LF_REPO / "examples" / "extras" / "fp8" / "llama3_fp8_deepspeed_sft.yaml"
    intent, facts, _ = _intent(yaml, LF_REPO / "examples" / "deepspeed" / "ds_z3_fp8_config.json")
    # fp8_utils.py builds a rowwise config and drops it (v0.9.5): accelerate's default applies
    assert intent["backend"] == "torchao" and intent["recipe"] == "tensorwise"
    assert intent["distributed"] == "deepspeed" and intent["zero_stage"] == 3
    # the same example with the all-gather key switched on (as its FSDP twin has it)
    text = yaml.read_text().replace("fp8_enable_fsdp_float8_all_gather: false",
                                    "fp8_enable_fsdp_float8_all_gather: true")
    on = tmp_path / "fsdp.yaml"
    on.write_text(text.replace("deepspeed: examples/deepspeed/ds_z3_fp8_config.json\n", ""))
    ids = {f.rule_id for f in preflight.check(str(on)).findings}
    assert "FP8D-LF-0001" in ids
    assert "FP8D-LF-0001" not in {f.rule_id for f in preflight.check(str(yaml)).findings}


def test_llamafactory_te_backend_has_no_torchao_recipe(tmp_path: Path) -> None:
    path = tmp_path / "te.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\nfinetuning_type: full\n"
                    "output_dir: out\nfp8: true\nfp8_backend: te\n")
    intent, _, files = _intent(path)
    assert [k for _, k in files] == ["llamafactory"]
    assert intent["backend"] == "te" and intent["recipe"] != "rowwise"


def test_llamafactory_msamp_backend_is_left_to_accelerate(tmp_path: Path) -> None:
    # v0.9.5 fp8_utils.py hands only fp8_backend te to accelerate; msamp is auto-detected away
    path = tmp_path / "msamp.yaml"
    path.write_text("model_name_or_path: m\nstage: sft\nfinetuning_type: full\n"
                    "output_dir: out\nfp8: true\nfp8_backend: msamp\n")
    intent, _, _ = _intent(path)
    assert isinstance(intent["backend"], Unknown) and "msamp" in intent["backend"].reason
    assert not isinstance(intent.get("recipe"), str)


SWIFT = FIX / "swift"


def test_ms_swift_megatron_command_line_is_read_with_its_underscore_flags() -> None:
    # ms-swift examples/megatron/fp8/llm.sh (README cites the commit): was "cannot tell"
    intent, facts, files = _intent(SWIFT / "llm.sh")
    assert [k for _, k in files] == ["swift"]
    assert facts["config.swift.command"] == "megatron sft"
    assert facts["config.swift.fp8_param_gather"] is True
    assert intent["fp8"] is True and intent["recipe"] == "blockwise"
    assert intent["format"] == "e4m3" and intent["distributed"] == "megatron"


def test_ms_swift_lora_merged_into_fp8_fires_and_its_fix_clears(tmp_path: Path) -> None:
    ids = {f.rule_id for f in preflight.check(str(SWIFT / "lora.sh")).findings}
    assert "FP8D-SWIFT-0001" in ids
    fixed = tmp_path / "lora.sh"
    fixed.write_text((SWIFT / "lora.sh").read_text().replace("--merge_lora true",
                                                             "--merge_lora false"))
    ids = {f.rule_id for f in preflight.check(str(fixed)).findings}
    assert "FP8D-SWIFT-0001" not in ids and not any(i.startswith("FP8D-CFG") for i in ids)
    # HfArgumentParser's bools take 1/0, yes/no too (string_to_bool); a number stays a number
    for word, fires in (("1", True), ("yes", True), ("0", False), ("N", False)):
        fixed.write_text((SWIFT / "lora.sh").read_text().replace(
            "--merge_lora true", f"--merge_lora {word} --lora_rank 1"))
        read = read_paths([str(fixed)])
        assert read.facts["config.swift.merge_lora"] is fires
        assert read.facts["config.swift.lora_rank"] == 1
        ids = {f.rule_id for f in preflight.check(str(fixed)).findings}
        assert ("FP8D-SWIFT-0001" in ids) is fires, word


def test_ms_swift_deepspeed_path(tmp_path: Path) -> None:
    script = tmp_path / "sft.sh"
    script.write_text("#!/bin/bash\nNPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B "
                      "--train_type full --deepspeed zero3 --torch_dtype bfloat16\n")
    intent, _, files = _intent(script)
    assert [k for _, k in files] == ["swift"]
    assert intent["distributed"] == "deepspeed" and intent["zero_stage"] == 3
    assert intent["precision"] == "bf16"


MCLI = FIX / "mcli" / "mcli-llama3-finetune.yaml"


def test_mcli_run_yaml_feeds_llmfoundry_facts_with_its_own_lines(tmp_path: Path) -> None:
    # llm-foundry mcli/mcli-llama3-finetune.yaml (README cites the commit)
    intent, facts, files = _intent(MCLI)
    assert [k for _, k in files] == ["mcli"]
    assert facts["config.llmfoundry.precision"] == "amp_bf16"
    assert facts["config.llmfoundry.max_seq_len"] == 4096          # ${variables.x} resolved
    read = read_paths([str(MCLI)])
    assert read.provenance["config.llmfoundry.precision"] == f"{MCLI}:116"
    assert intent["num_gpus"] == 8 and intent["distributed"] == "fsdp1"
    assert intent["fp8"] is False and set(intent["frameworks"]) == {"llmfoundry", "mcli"}
    fp8 = tmp_path / "run.yaml"
    fp8.write_text(MCLI.read_text().replace("precision: amp_bf16", "precision: amp_fp8"))
    intent, _, _ = _intent(fp8)
    assert intent["fp8"] is True and intent["backend"] == "te"


def test_msamp_block_in_a_deepspeed_json_asks_for_fp8() -> None:
    # Azure/MS-AMP v0.4.0 examples/ds_config_zero_te_msamp.json
    intent, facts, files = _intent(FIX / "deepspeed" / "msamp" / "ds_config_zero_te_msamp.json")
    assert [k for _, k in files] == ["deepspeed"]
    assert facts["config.deepspeed.msamp.opt_level"] == "O3"
    assert facts["config.deepspeed.msamp.use_te"] is True
    assert intent["fp8"] is True and intent["backend"] == "msamp"
    assert intent["zero_stage"] == 2 and intent["precision"] == "fp16"


def test_axolotl_fp8_without_compile_warns_and_its_fix_clears(tmp_path: Path) -> None:
    example = FIX / "axolotl" / "3b-fp8-fsdp2.yaml"
    assert "FP8D-AXO-0001" not in {f.rule_id for f in preflight.check(str(example)).findings}
    slow = tmp_path / "slow.yaml"
    slow.write_text(example.read_text().replace("torch_compile: true\n", ""))
    (finding,) = [f for f in preflight.check(str(slow)).findings if f.rule_id == "FP8D-AXO-0001"]
    assert finding.location is not None and finding.location.path == str(slow)
