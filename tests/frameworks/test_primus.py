"""Primus experiment YAMLs (the layout of AMD-AGI/Primus v26.5.1 examples/megatron/configs):
``modules.pre_trainer`` presets composed with its overrides and read as Megatron's arguments
(``fp8: hybrid`` is ``--fp8-format hybrid``), at the file and line that set each; presets the job
lacks from the pinned table; launch lines (``primus-cli ... -- train pretrain --config``,
``EXP=... bash examples/run_pretrain.sh --key value``); the BF16 control "no FP8"; another
backend, an unknown preset and hostile files Unknown, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import frameworks
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

EXP = """work_group: ${{PRIMUS_TEAM:amd}}
user_name: ${{PRIMUS_USER:root}}
exp_name: ${{PRIMUS_EXP_NAME:x}}
workspace: ./output

modules:
  pre_trainer:
    framework: {framework}
    config: {config}
    model: ${{PRIMUS_MODEL:llama3.1_8B}}.yaml
    overrides:
      micro_batch_size: 2
      seq_length: ${{PRIMUS_SEQ_LENGTH:4096}}
      tensor_model_parallel_size: ${{PRIMUS_TP:1}}
{extra}"""


def _exp(tmp_path: Path, extra: str = "", framework: str = "megatron",
         config: str = "pre_trainer.yaml") -> Path:
    folder = tmp_path / "examples" / "megatron" / "configs" / "MI355X"
    folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git").mkdir(exist_ok=True)      # the job as it sits in its repository's clone
    path = folder / "exp.yaml"
    path.write_text(EXP.format(framework=framework, config=config, extra=extra))
    return path


def _intent(*paths: Path, kind: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(p) for p in paths], kind)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read.facts


def test_bf16_control_is_no_fp8_from_the_pinned_default(tmp_path: Path) -> None:
    intent, facts = _intent(_exp(tmp_path))
    assert intent["fp8"][0] is False
    assert "trainer_base.yaml#L52" in intent["fp8"][1]          # Primus's fp8: null
    assert intent["precision"][0] == "bf16"
    assert intent["backend"][0] in ("none", "te") or isinstance(intent["backend"][0], Unknown)
    assert facts["config.megatron.use_distributed_optimizer"] is True     # pre_trainer.yaml
    assert intent["seq_len"][0] == 4096                           # ${VAR:default}
    assert "config.megatron.fp8_format" not in facts               # null is no setting


def test_fp8_override_is_megatron_fp8_format_at_its_line(tmp_path: Path) -> None:
    path = _exp(tmp_path, "      fp8: hybrid\n")
    intent, facts = _intent(path)
    assert intent["fp8"][0] is True
    assert intent["fp8"][1] == f"{path}:15"
    assert intent["format"][0] == "hybrid"
    assert intent["recipe"][0] == "delayed"                       # trainer_base.yaml l.54
    assert intent["backend"][0] == "te"                           # language_model.yaml l.48
    assert facts["config.megatron.fp8_format"] == "hybrid"
    assert facts["config.megatron.args_of"] == "primus"
    # the presets' delayed-recipe tuning is not the job's choice (FP8D-MEG-0029)
    assert "config.megatron.fp8_amax_history_len" not in facts


def test_job_presets_are_read_and_module_keys_beat_model_keys(tmp_path: Path) -> None:
    configs = tmp_path / "primus" / "configs"
    (configs / "modules" / "megatron").mkdir(parents=True)
    (configs / "models" / "megatron").mkdir(parents=True)
    (configs / "modules" / "megatron" / "pre_trainer.yaml").write_text(
        "extends:\n  - trainer_base.yaml\nuse_distributed_optimizer: true\n")
    (configs / "modules" / "megatron" / "trainer_base.yaml").write_text(
        "bf16: true\nfp8: e4m3\nfp8_recipe: tensorwise\n")
    (configs / "models" / "megatron" / "llama3.1_8B.yaml").write_text(
        "extends:\n  - llama3_8B.yaml\nhidden_size: 4096\nfp8: null\nnum_experts: 8\n")
    intent, facts = _intent(_exp(tmp_path))
    assert intent["fp8"][0] is True                     # the model preset cannot unset it
    assert intent["recipe"] == ("tensorwise", f"{configs}/modules/megatron/trainer_base.yaml:3")
    assert intent["shapes.hidden"][0] == 4096
    assert facts["config.megatron.num_experts"] == 8
    # llama3_8B.yaml (extended, not in the job): its model settings are not known
    assert isinstance(intent["moe.top_k"][0], Unknown)
    assert intent["moe.top_k"][1] == f"{configs}/models/megatron/llama3.1_8B.yaml:1"


def test_cli_override_wins_and_branch_arg_is_unknown(tmp_path: Path) -> None:
    _exp(tmp_path)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n./primus-cli --config runner/.primus.yaml container "
                   "--image x -- train pretrain \\\n"
                   "  --config examples/megatron/configs/MI355X/exp.yaml --fp8 e4m3 "
                   "--fp8_recipe mxfp8\n")
    intent, facts = _intent(run)
    assert intent["fp8"][0] is True and intent["fp8"][1] == f"{run}:3"
    assert intent["recipe"][0] == "mxfp8"
    run.write_text("#!/bin/bash\nA=\"\"\nif [ -f /etc/fp8 ]; then A=\"--fp8 hybrid\"; fi\n"
                   "./primus-cli direct -- train pretrain --config "
                   "examples/megatron/configs/MI355X/exp.yaml $A\n")
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)


@pytest.mark.parametrize("line", [
    "torchrun --nproc_per_node 8 primus/cli/main.py train pretrain --config {exp} --fp8 hybrid",
    "python -m primus.cli.main train pretrain --exp={exp} --fp8=hybrid",
    "EXP={exp} bash examples/run_pretrain.sh --fp8 hybrid",
    "./primus-cli direct -- train pretrain --config {exp} fp8=hybrid"])
def test_launch_forms(tmp_path: Path, line: str) -> None:
    _exp(tmp_path)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n" + line.format(exp="examples/megatron/configs/MI355X/exp.yaml")
                   + "\n")
    intent, facts = _intent(run)
    assert intent["fp8"] == (True, f"{run}:2")
    assert facts["config.megatron.fp8_format"] == "hybrid"
    assert intent["micro_batch"][0] == 2                  # the experiment was read too


def test_env_default_false_decides_the_branch(tmp_path: Path) -> None:
    # the customer-package script: FP8=${FP8:-False}; --fp8 hybrid only when True
    _exp(tmp_path)
    run = tmp_path / "examples" / "run_x.sh"
    run.write_text("#!/bin/bash\nexport FP8=${FP8:-False}\nFP8_ARGS=()\n"
                   "if [ \"$FP8\" = \"True\" ]; then\n    FP8_ARGS+=(\"--fp8\" \"hybrid\")\nfi\n"
                   "export EXP=examples/megatron/configs/MI355X/exp.yaml\n"
                   "bash ./examples/run_slurm_pretrain.sh --micro_batch_size 8 "
                   "\"${FP8_ARGS[@]}\" --train_iters 10\n")
    intent, _ = _intent(run)
    assert intent["fp8"][0] is False
    assert intent["micro_batch"] == (8, f"{run}:8")
    run.write_text(run.read_text().replace("${FP8:-False}", "${FP8:-True}"))
    assert _intent(run)[0]["fp8"][0] is True


def test_exp_not_set_is_unknown_not_no_fp8(tmp_path: Path) -> None:
    _exp(tmp_path)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nbash examples/run_pretrain.sh --train_iters 10\n")
    fp8 = _intent(run)[0]["fp8"]
    assert isinstance(fp8[0], Unknown) and "EXP" in fp8[0].reason
    run.write_text("#!/bin/bash\n./primus-cli direct -- train pretrain --config \"$(pick)\"\n")
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)


def test_not_training_command_is_not_read(tmp_path: Path) -> None:
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n./primus-cli direct -- benchmark gemm --M 4096\n")
    read = read_paths([str(run)], None)
    assert not any(k.startswith("config.primus.") for k in read.facts)


@pytest.mark.parametrize("framework", ["maxtext", "hummingbirdxt"])
def test_other_backend_is_unknown(tmp_path: Path, framework: str) -> None:
    # TorchTitan and Megatron-Bridge are read (test_primus_backends.py)
    path = _exp(tmp_path, "      fp8: hybrid\n", framework=framework)
    fp8 = _intent(path)[0]["fp8"]
    assert isinstance(fp8[0], Unknown)
    assert fp8[1] == f"{path}:8"


def test_unknown_module_preset_leaves_fp8_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_exp(tmp_path, config="my_trainer.yaml"))
    assert isinstance(intent["fp8"][0], Unknown)
    assert "my_trainer.yaml" in intent["fp8"][0].reason
    # the experiment's own fp8 decides whatever the preset says
    assert _intent(_exp(tmp_path, "      fp8: e4m3\n", config="my_trainer.yaml"))[0]["fp8"][0]


def test_env_without_default_is_unknown(tmp_path: Path) -> None:
    fp8 = _intent(_exp(tmp_path, "      fp8: ${PRIMUS_FP8}\n"))[0]["fp8"]
    assert isinstance(fp8[0], Unknown) and "PRIMUS_FP8" in fp8[0].reason


def test_recognised_as_primus_only() -> None:
    data = parse_yaml(EXP.format(framework="megatron", config="pre_trainer.yaml",
                                 extra="")).data
    scores = {kind: frameworks.score(kind, data) for kind in frameworks.KINDS}
    assert max(scores, key=lambda k: scores[k]) == "primus"
    assert frameworks.score("primus", {"modules": {"encoder": {"framework": "x"}}}) == 0
    assert frameworks.score("primus", {"modules": ["pre_trainer"]}) == 0
    assert frameworks.score("primus", {"modules": {"pre_trainer": {"framework": "megatron"}}}) == 0


def test_hostile_presets_are_unknown_or_warnings_not_a_traceback(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "trainer_base.yaml").write_text("fp8: null\n")
    job = tmp_path / "job"
    modules = job / "primus" / "configs" / "modules" / "megatron"
    modules.mkdir(parents=True)
    path = _exp(job)
    pre = modules / "pre_trainer.yaml"
    pre.write_text("extends:\n  - trainer_base.yaml\n")
    (modules / "trainer_base.yaml").symlink_to(outside / "trainer_base.yaml")  # never read
    assert isinstance(_intent(path)[0]["fp8"][0], Unknown)
    (modules / "trainer_base.yaml").unlink()
    (modules / "trainer_base.yaml").write_bytes(b"\xff\xfe\x00binary" * 100)
    assert isinstance(_intent(path)[0]["fp8"][0], Unknown)
    pre.write_text("extends:\n  - pre_trainer.yaml\n")              # extends itself
    assert isinstance(_intent(path)[0]["fp8"][0], Unknown)
    pre.write_text("extends:\n  - ../../../../../etc/passwd\n")     # leaves primus/configs
    assert isinstance(_intent(path)[0]["fp8"][0], Unknown)
    pre.write_text("- a list\n")
    assert isinstance(_intent(path)[0]["fp8"][0], Unknown)
    path.write_text("modules:\n  pre_trainer:\n    framework: megatron\n    config: [1, 2]\n"
                    "    model: {a: 1}\n    overrides: 7\n")
    assert isinstance(_intent(path, kind="primus")[0]["fp8"][0], Unknown)


def test_variable_the_script_sets_reaches_the_yaml(tmp_path: Path) -> None:
    # yaml_loader.py takes ${VAR:default} from the environment the launch script gives it
    _exp(tmp_path, "      fp8: ${PRIMUS_FP8:null}\n")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nexport PRIMUS_FP8=hybrid\nexport PRIMUS_SEQ_LENGTH=8192\n"
                   "./primus-cli direct -- train pretrain --config "
                   "examples/megatron/configs/MI355X/exp.yaml\n")
    intent, facts = _intent(run)
    assert intent["fp8"][0] is True and intent["fp8"][1] == f"{run}:4"
    assert intent["seq_len"][0] == 8192
    assert facts["config.megatron.fp8_format"] == "hybrid"
    run.write_text(run.read_text().replace("export PRIMUS_FP8=hybrid\n", ""))
    assert _intent(run)[0]["fp8"][0] is False             # the default, as the shell's


def test_module_preset_named_from_the_script_is_unknown(tmp_path: Path) -> None:
    _exp(tmp_path, config="${PRIMUS_CONFIG:pre_trainer}.yaml")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nexport PRIMUS_CONFIG=my_trainer\n"
                   "./primus-cli direct -- train pretrain --config "
                   "examples/megatron/configs/MI355X/exp.yaml\n")
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)


def test_fp8_without_a_format_is_unknown(tmp_path: Path) -> None:
    _exp(tmp_path)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\n./primus-cli direct -- train pretrain --config "
                   "examples/megatron/configs/MI355X/exp.yaml --fp8 --train_iters 1\n")
    assert isinstance(_intent(run)[0]["fp8"][0], Unknown)
