"""The NeMo Framework Launcher (frameworks/nemo_launcher.py): the shape of awslabs/
awsome-distributed-ai f4f7ae5c 3.test_cases/megatron/nemo1.0/5.bmk-pretrain-llama-7b.sh (held-out
set 22), reduced: Hydra overrides in bash arrays (two FP8 lines commented out inside one) passed
to ``launcher_scripts/main.py stages=[training] training=llama/llama2_7b``; the launcher's own
training configs as NVIDIA/NeMo-Framework-Launcher ships them at tags 23.05-24.12."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import nemo_launcher
from preflight.intent import derive
from preflight.jobs.read import read_paths

_SCRIPT = """\
#!/bin/bash
set -exo pipefail
export MODEL=llama
export MODEL_SIZE={size}
declare -a MODEL_ARGS=(
    training.model.tokenizer.model=${{TARGET_PATH}}/data/llama2/tokenizer.model

    ## Uncomment below to enable fp8 training (Transformers Engine) on p5 instances
    {fp8}training.model.fp8=True
    {fp8}training.model.fp8_hybrid=True
)
declare -a BMK_ARGS=(
    # Disable validation
    training.trainer.limit_val_batches=0.0
    training.model.data.data_impl=mock
)
HYDRA_FULL_ERROR=1 python3 {main} \\
    stages=[training] \\
    training=${{MODEL}}/${{MODEL_SIZE}} \\
    training.trainer.num_nodes=2 \\
    "${{BMK_ARGS[@]}}" "${{MODEL_ARGS[@]}}"
"""


def _intent(tmp_path: Path, size: str = "llama2_7b", fp8: str = "#",
            main: str = "$TARGET_PATH/launcher_scripts/main.py") -> dict[str, Any]:
    (tmp_path / "run.sh").write_text(_SCRIPT.format(size=size, fp8=fp8, main=main))
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert read.files[0][1] == "nemo_launcher"
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()} | {
        k: v for k, v in read.facts.items() if k.startswith("config.")}


def test_commented_fp8_lines_in_the_array_stay_off(tmp_path: Path) -> None:
    intent = _intent(tmp_path)
    assert "config.nemo_launcher.model.fp8" not in intent
    assert intent["config.nemo_launcher.training_config"] == "llama/llama2_7b"
    assert intent["config.nemo_launcher.trainer.num_nodes"] == 2
    assert intent["fp8"] is False and intent["precision"] == "bf16"   # the shipped preset


def test_the_fp8_overrides_ask_for_fp8(tmp_path: Path) -> None:
    intent = _intent(tmp_path, fp8="")
    assert intent["fp8"] is True and intent["format"] == "hybrid"
    assert intent["recipe"] == "delayed" and intent["backend"] == "te"


def test_a_config_the_launcher_never_shipped_is_unknown(tmp_path: Path) -> None:
    intent = _intent(tmp_path, size="llama9_mine")
    assert isinstance(intent["fp8"], Unknown) and isinstance(intent["precision"], Unknown)


def test_fp8_asked_over_an_unknown_config_is_asked_not_no(tmp_path: Path) -> None:
    intent = _intent(tmp_path, size="llama9_mine", fp8="")
    assert intent["fp8"] is not False and intent["fp8_source"]


def test_the_jobs_own_training_config_is_read_under_the_overrides(tmp_path: Path) -> None:
    conf = tmp_path / "launcher_scripts" / "conf" / "training" / "llama"
    conf.mkdir(parents=True)
    (tmp_path / "launcher_scripts" / "main.py").write_text("import hydra\n")
    (conf / "llama2_7b.yaml").write_text(
        "trainer:\n  precision: bf16\nmodel:\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_e4m3: true\n")
    intent = _intent(tmp_path, main="launcher_scripts/main.py")
    assert intent["fp8"] is True and intent["format"] == "e4m3"


def test_a_config_releases_differ_on_is_unknown() -> None:
    # gpt3/175b_fp8: transformer_engine False at 23.08.03-24.01, True from 24.05
    value, _ = nemo_launcher.shipped("gpt3/175b_fp8", "model.transformer_engine")
    assert isinstance(value, Unknown)
    value, src = nemo_launcher.shipped("llama/llama2_7b", "model.fp8")
    assert value is False and "llama2_7b.yaml" in src


@pytest.mark.parametrize("size", ["../../../../etc/passwd", "$(cat /etc/x)", "a" * 5000])
def test_hostile_config_names_are_never_opened_or_guessed(tmp_path: Path, size: str) -> None:
    intent = _intent(tmp_path, size=size.replace("$", "\\$"))
    assert isinstance(intent["fp8"], Unknown)
    assert not any(str(f).endswith("passwd") for f in intent.get("config.files", ()))


def test_stages_without_training_leave_fp8_unknown(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "python3 $T/launcher_scripts/main.py stages=[fine_tuning] training=llama/llama2_7b "
        "fine_tuning.model.fp8=True\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)


@pytest.mark.parametrize("choice", ["training=${MODEL}/x", ""])
def test_a_training_config_not_known_leaves_fp8_unknown(tmp_path: Path, choice: str) -> None:
    (tmp_path / "run.sh").write_text(
        f"python3 $T/launcher_scripts/main.py stages=[training] {choice} "
        "training.trainer.num_nodes=2\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown)


def _check(tmp_path: Path, extra: str, fp8: str = "") -> tuple[set[str], Any]:
    import preflight

    (tmp_path / "run.sh").write_text(_SCRIPT.format(size="llama2_7b", fp8=fp8, main="launcher_scripts/"
                                                    "main.py").replace(
        "training.trainer.num_nodes=2", "training.trainer.num_nodes=2 " + extra))
    report = preflight.check([str(tmp_path / "run.sh")], smoke=False, assume={
        "gpu": "H100", "pkg.transformer-engine": "1.2.0", "pkg.nemo-toolkit": "1.23.0"})
    return {f.rule_id for f in report.findings}, report


@pytest.mark.parametrize("extra, fires", [
    # NeMo 1.x's rules read config.nemo.model.*: the launcher hands its training config to
    # megatron_gpt_pretraining.py unchanged (stages.py Training @ 23.11); fwnew8's open end
    ("training.model.transformer_engine=False", "FP8D-NEMO-0001"),
    ("training.model.fp8_hybrid=True training.model.fp8_e4m3=True", "FP8D-NEMO-0002"),
    # the array's FP8 lines commented out: fp8_hybrid / fp8_e4m3 are the shipped config's False
    ("training.model.fp8=True", "FP8D-NEMO-0004"),
    ("training.model.fsdp=True", "FP8D-NEMO-0003"),
])
def test_nemo1_rules_reach_launcher_jobs(tmp_path: Path, extra: str, fires: str) -> None:
    ids, _ = _check(tmp_path, extra, "#" if fires == "FP8D-NEMO-0004" else "")
    assert fires in ids
    quiet, _ = _check(tmp_path, "")                # the shipped llama2_7b + fp8 overrides
    assert fires not in quiet


def test_nemo1_facts_are_the_launchers_not_a_nemo_file(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(_SCRIPT.format(size="llama2_7b", fp8="",
                                                    main="launcher_scripts/main.py"))
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert read.facts["config.kinds"] == ["nemo_launcher"]
    assert read.facts["config.nemo.model.fp8"] is True
    assert read.facts["config.nemo.model.transformer_engine"] is True      # shipped 23.05-24.12
    assert isinstance(read.facts["config.nemo.model.mcore_gpt"], Unknown)   # not in the table
    (tmp_path / "run.sh").write_text(_SCRIPT.format(size="no_such_model", fp8="",
                                                    main="launcher_scripts/main.py"))
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert isinstance(read.facts["config.nemo.model.transformer_engine"], Unknown)


@pytest.mark.parametrize("body, read_as", [
    # the launcher's README: `cd launcher_scripts; python3 main.py ...`
    ("cd launcher_scripts; python3 main.py training=llama/llama2_7b training.model.fp8=True",
     "nemo_launcher"),
    ("cd $TARGET_PATH/launcher_scripts\nHYDRA_FULL_ERROR=1 python3 main.py "
     "training=llama/llama2_7b training.model.fp8=True", "nemo_launcher"),
    ("cd /opt/NeMo-Framework-Launcher/launcher_scripts && python3 ./main.py "
     "training=llama/llama2_7b training.model.fp8=True", "nemo_launcher"),
    # another program's main.py: not the launcher
    ("cd tools; python3 main.py training=llama/llama2_7b training.model.fp8=True", None),
    ("cd launcher_scripts_old; python3 main.py training.model.fp8=True", None),
    ("cd launcher_scripts\ncd ../other\npython3 main.py training.model.fp8=True", None),
])
def test_bare_main_py_after_cd_launcher_scripts(tmp_path: Path, body: str,
                                                read_as: str | None) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + body + "\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    kinds = read.facts.get("config.kinds") or []
    if read_as is None:
        assert "nemo_launcher" not in kinds
        return
    assert kinds == [read_as]
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True
    assert read.facts["config.nemo_launcher.training_config"] == "llama/llama2_7b"


def test_bare_main_py_reads_the_jobs_config_beside_it(tmp_path: Path) -> None:
    conf = tmp_path / "launcher_scripts" / "conf" / "training" / "gpt3"
    conf.mkdir(parents=True)
    (conf / "mine.yaml").write_text("trainer:\n  precision: bf16\nmodel:\n  fp8: true\n"
                                    "  transformer_engine: false\n")
    (tmp_path / "run.sh").write_text("cd launcher_scripts\npython3 main.py training=gpt3/mine\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    assert read.facts["config.nemo.model.transformer_engine"] is False   # the job's copy

