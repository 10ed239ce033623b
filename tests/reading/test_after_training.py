"""Launch scripts that train and then evaluate, export, merge or serve (held-out benchmark,
2026-11-27): the training command is what the job's config is; the other commands of the same
tool (``megatron export``, ``swift infer``, ``llamafactory-cli export``, ``python eval.py``,
``run_eval.py``, a checkpoint conversion) must not override its settings, and the files they
name belong to the job (a folder scan must not take them for a second job) without being read
as its config.

ms-swift's examples/megatron/fp8/lora.sh (modelscope/ms-swift @ 62a5c05) trains with
``--merge_lora false`` and then runs ``megatron export ... --merge_lora true`` on the BF16 model;
the reader folded both into one config and FP8D-SWIFT-0001 fired as an error on the setup ms-swift
recommends. The scripts here are our own, shaped like the real ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launch import blank_commands, not_training


def _intent(read: Any) -> dict[str, Any]:
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}


def _not_read(read: Any) -> str:
    found = [p for p in read.problems if p.code == "not_read"]
    return found[0].message if found else ""


@pytest.mark.parametrize("script,after", [
    ("eval.py", True), ("scripts/merge_lora.py", True), ("tools/checkpoint/convert.py", True),
    ("examples/run_eval.py", True), ("run_generation_server.py", True), ("inference.py", True),
    ("export_hf.py", True), ("mergeLora.py", True),
    ("train.py", False), ("pretrain_gpt.py", False), ("train_eval.py", False),
    ("examples/run_grpo.py", False), ("finetune.py", False), ("model_fp8.py", False),
    ("run_recipe.py", False), ("chatglm_train.py", False), ("evaluator_sft.py", False),
])
def test_script_names_that_do_not_train(script: str, after: bool) -> None:
    assert not_training(script) is after


def test_blanking_a_command_keeps_every_other_line() -> None:
    text = ("A=1 \\\n  megatron export \\\n  --merge_lora true\n"
            "echo 'megatron export is next'\nmegatron sft --lr 1\n")
    out = blank_commands(text, __import__("re").compile(r"megatron[ \t]+export"))
    assert out.count("\n") == text.count("\n") and len(out) == len(text)
    assert "--merge_lora" not in out and "megatron sft --lr 1" in out
    assert "echo 'megatron export is next'" in out          # a message is not a command


SWIFT_LORA = """#!/bin/bash
# train LoRA in FP8, merge against the BF16 weights afterwards
NPROC_PER_NODE=2 \\
megatron sft \\
    --model Qwen/Qwen3-8B \\
    --save_safetensors true \\
    --merge_lora false \\
    --fp8_recipe blockwise \\
    --fp8_format e4m3 \\
    --tuner_type lora \\
    --tensor_model_parallel_size 2 \\
    --output_dir out

CUDA_VISIBLE_DEVICES=0 \\
megatron export \\
    --model Qwen/Qwen3-8B \\
    --adapters out/vx-xxx/checkpoint-xxx \\
    --to_hf true \\
    --tensor_model_parallel_size 1 \\
    --merge_lora true

swift infer --model out/merged --stream true --max_new_tokens 64
"""


def test_swift_export_after_megatron_sft_does_not_override_it(tmp_path: Path) -> None:
    script = tmp_path / "lora.sh"
    script.write_text(SWIFT_LORA)
    read = read_paths([str(script)])
    f = read.facts
    assert f["config.swift.command"] == "megatron sft"
    assert f["config.swift.merge_lora"] is False
    assert read.provenance["config.swift.merge_lora"] == f"{script}:7"
    assert f["config.swift.tensor_model_parallel_size"] == 2
    assert "config.swift.to_hf" not in f and "config.swift.max_new_tokens" not in f
    assert _intent(read)["tp"] == 2


def test_swift_export_to_mcore_before_training_is_not_the_command(tmp_path: Path) -> None:
    # ms-swift 3.x: convert the HF weights with `swift export --to_mcore`, then `megatron sft`
    script = tmp_path / "run.sh"
    script.write_text("swift export --model Qwen/Qwen2.5-7B --to_mcore true --torch_dtype "
                      "float16 --output_dir mcore\n"
                      "megatron sft --load mcore --fp8_format hybrid --fp8_recipe delayed "
                      "--torch_dtype bfloat16 --train_type lora\n")
    read = read_paths([str(script)])
    assert read.facts["config.swift.command"] == "megatron sft"
    assert read.facts["config.swift.torch_dtype"] == "bfloat16"
    assert "config.swift.to_mcore" not in read.facts
    intent = _intent(read)
    assert intent["fp8"] is True and "megatron" in intent["stack"]


def test_a_script_that_only_exports_is_still_read(tmp_path: Path) -> None:
    script = tmp_path / "quant.sh"
    script.write_text("swift export --model Qwen/Qwen2.5-7B --quant_method fp8 "
                      "--output_dir q\n")
    read = read_paths([str(script)])
    assert read.facts["config.swift.command"] == "swift export"
    assert read.facts["config.swift.quant_method"] == "fp8"


ACC_FP8 = "accelerate launch --mixed_precision fp8 train.py --output_dir out\n"


def _accelerate_job(tmp_path: Path, after: str) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    (job / "run.sh").write_text(f"#!/bin/bash\n{ACC_FP8}{after}\n")
    (job / "train.py").write_text("from accelerate import Accelerator\n"
                                  "acc = Accelerator(gradient_accumulation_steps=2)\n")
    (job / "eval.py").write_text("from accelerate import Accelerator\n"
                                 'acc = Accelerator(mixed_precision="bf16")\n')
    return job


@pytest.mark.parametrize("how", ["file", "folder"])
def test_an_evaluation_script_after_training_is_not_its_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    job = _accelerate_job(tmp_path, "python eval.py --output_dir out")
    monkeypatch.chdir(tmp_path)
    read = read_paths([str(job / "run.sh")] if how == "file" else [str(job)])
    assert not [p for p in read.problems if p.level == "error"], read.problems
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert "config.accelerate.replaced.mixed_precision" not in read.facts
    assert _intent(read)["fp8"] is True
    assert "eval.py" in _not_read(read) and "besides the training" in _not_read(read)
    assert all(not p.endswith("eval.py") for p, _ in read.files)


def test_an_evaluation_script_the_user_names_is_read(tmp_path: Path) -> None:
    job = _accelerate_job(tmp_path, "python eval.py --output_dir out")
    read = read_paths([str(job / "run.sh"), str(job / "eval.py")])
    assert any(p.endswith("eval.py") for p, _ in read.files)


def test_a_script_that_only_evaluates_is_read_as_it_is(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "run.sh").write_text("#!/bin/bash\naccelerate launch eval.py\n")
    (job / "eval.py").write_text("from accelerate import Accelerator\n"
                                 'acc = Accelerator(mixed_precision="fp8")\n')
    read = read_paths([str(job / "run.sh")])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_megatron_conversion_and_generation_after_pretraining(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 "
        "--hidden-size 4096 --tensor-model-parallel-size 4 --fp8-format hybrid "
        "--fp8-recipe delayed --bf16\n"
        "python tools/checkpoint/convert.py --model-type GPT --loader mcore --saver hf "
        "--target-tensor-parallel-size 1\n"
        "torchrun tools/run_text_generation_server.py --tensor-model-parallel-size 1 "
        "--fp8-recipe tensorwise\n")
    read = read_paths([str(script)], kind="megatron")
    f = read.facts
    assert f["config.megatron.tensor_model_parallel_size"] == 4
    assert f["config.megatron.fp8_recipe"] == "delayed"
    assert "config.megatron.target_tensor_parallel_size" not in f


def test_llamafactory_export_yaml_is_of_the_job_not_its_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "run.sh").write_text("#!/bin/bash\nllamafactory-cli train sft.yaml\n"
                                "llamafactory-cli export merge.yaml\n"
                                "llamafactory-cli chat infer.yaml\n")
    (job / "sft.yaml").write_text("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\n"
                                  "do_train: true\nfinetuning_type: lora\nfp8: true\n"
                                  "fp8_backend: te\noutput_dir: saves/lora\nbf16: true\n")
    for name in ("merge.yaml", "infer.yaml"):
        (job / name).write_text("model_name_or_path: Qwen/Qwen2.5-7B\nadapter_name_or_path: "
                                "saves/lora\ntemplate: qwen\nfinetuning_type: lora\n"
                                "export_dir: merged\ninfer_dtype: bfloat16\n")
    monkeypatch.chdir(tmp_path)
    for paths in ([str(job / "run.sh")], [str(job)]):
        read = read_paths(paths)
        # before: a folder scan saw merge.yaml as a second LLaMA-Factory job and read nothing
        assert not [p for p in read.problems if p.level == "error"], read.problems
        assert sorted(Path(p).name for p, _ in read.files) == ["run.sh", "sft.yaml"]
        assert "merge.yaml" in _not_read(read) and "infer.yaml" in _not_read(read)
        assert "config.llamafactory.export_dir" not in read.facts
        assert _intent(read)["fp8"] is True


NRL_BASE = ("policy:\n  megatron_cfg:\n    enabled: true\n    fp8_cfg:\n      enabled: {fp8}\n"
            "      fp8: e4m3\n      fp8_recipe: blockwise\n  generation:\n    backend: vllm\n"
            "    vllm_cfg:\n      precision: bfloat16\n")


def test_nemo_rl_eval_before_training_is_not_the_jobs_config(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(NRL_BASE.format(fp8="false"))
    (tmp_path / "grpo.yaml").write_text(NRL_BASE.format(fp8="true"))
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nuv run examples/run_eval.py --config eval.yaml\n"
                      "uv run examples/run_grpo.py --config grpo.yaml "
                      "policy.megatron_cfg.tensor_model_parallel_size=2\n")
    read = read_paths([str(script)])
    assert read.facts["config.nemo_rl.entry"] == "examples/run_grpo.py"
    assert read.facts["config.nemo_rl.base_config"].endswith("grpo.yaml")
    assert _intent(read)["fp8"] is True


def test_axolotl_train_line_and_its_merge_and_inference_configs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "run.sh").write_text(
        "#!/bin/bash\naxolotl preprocess fp8.yml\n"
        "axolotl train fp8.yml --learning-rate 2e-5 --no-gradient-checkpointing "
        "--launcher accelerate -- --num_processes 8\n"
        "axolotl merge-lora merge.yml --lora-model-dir ./out\n"
        "axolotl inference infer.yml --gradio\n")
    (job / "fp8.yml").write_text("base_model: meta-llama/Llama-3.2-3B\nsequence_len: 2048\n"
                                 "micro_batch_size: 2\nfp8: true\ntorch_compile: true\n"
                                 "gradient_checkpointing: true\nlearning_rate: 1.0e-4\n")
    for name in ("merge.yml", "infer.yml"):
        (job / name).write_text("base_model: meta-llama/Llama-3.2-3B\nsequence_len: 2048\n"
                                "micro_batch_size: 1\nbf16: true\nfp8: false\n")
    monkeypatch.chdir(tmp_path)
    for paths in ([str(job / "run.sh")], [str(job)]):
        read = read_paths(paths)
        assert not [p for p in read.problems if p.level == "error"], read.problems
        assert sorted(Path(p).name for p, _ in read.files) == ["fp8.yml", "run.sh"]
        f = read.facts
        assert f["config.axolotl.learning_rate"] == 2e-5               # the line wins
        assert read.provenance["config.axolotl.learning_rate"] == f"{job / 'run.sh'}:3"
        assert f["config.axolotl.gradient_checkpointing"] is False
        assert "config.axolotl.num_processes" not in f and "config.axolotl.gradio" not in f
        assert "merge.yml" in _not_read(read) and "infer.yml" in _not_read(read)
        intent = _intent(read)
        assert intent["fp8"] is True and intent["activation_checkpointing"] is False


def test_axolotl_under_accelerate_launch_module_form(tmp_path: Path) -> None:
    # axolotl's README before the `axolotl` command: accelerate launch -m axolotl.cli.train
    (tmp_path / "fft.yml").write_text("base_model: meta-llama/Llama-3.2-3B\nsequence_len: 2048\n"
                                      "micro_batch_size: 2\nfp8: true\n")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\naccelerate launch -m axolotl.cli.train fft.yml "
                   "--learning_rate 3e-5\n"
                   "accelerate launch -m axolotl.cli.merge_lora fft.yml --lora_model_dir out\n")
    read = read_paths([str(run)])
    # before: "no Hugging Face Accelerate settings found in this file", an error
    assert not [p for p in read.problems if p.level == "error"], read.problems
    assert read.facts["config.axolotl.learning_rate"] == 3e-5
    assert "config.axolotl.lora_model_dir" not in read.facts
    intent = _intent(read)
    assert intent["fp8"] is True and "accelerate" in intent["stack"]
