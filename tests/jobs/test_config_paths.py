"""read_paths: --kind, folders as one job, linked DeepSpeed files, default_paths, the example."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cfg_helpers import FIXTURES, fixture, line_of

from preflight.jobs.read import default_paths, read_paths


def test_deepspeed_config_file_is_followed_relative_to_the_yaml() -> None:
    read = read_paths([fixture("accelerate/ds_file_zero3.yaml")])
    assert read.problems == []
    assert [k for _, k in read.files] == ["accelerate", "deepspeed"]
    assert Path(read.files[1][0]).resolve() == (FIXTURES / "deepspeed/zero3_fp16.json").resolve()
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3
    assert read.provenance["config.deepspeed.fp16.enabled"].endswith("zero3_fp16.json:3")
    assert read.facts["config.accelerate.deepspeed_config.deepspeed_config_file"] == \
        "../deepspeed/zero3_fp16.json"


def test_deepspeed_config_file_relative_to_cwd(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "ds").mkdir()
    shutil.copy(FIXTURES / "deepspeed/zero1_bf16_off.json", tmp_path / "ds" / "z1.json")
    (tmp_path / "cfg" / "acc.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds/z1.json\n")
    monkeypatch.chdir(tmp_path)
    read = read_paths(["cfg/acc.yaml"])
    assert read.problems == []
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 1


def test_missing_deepspeed_config_file_is_a_problem_at_its_line() -> None:
    read = read_paths([fixture("accelerate/ds_file_missing.yaml")])
    assert len(read.problems) == 1
    problem = read.problems[0]
    assert problem.line == 3 and "does not exist" in problem.message
    # the accelerate facts are still there
    assert read.facts["config.accelerate.distributed_type"] == "DEEPSPEED"
    assert read.files == [(fixture("accelerate/ds_file_missing.yaml"), "accelerate")]


def test_hf_trainer_deepspeed_key_is_followed() -> None:
    read = read_paths([fixture("hf_trainer/train_args_deepspeed.json")])
    assert [k for _, k in read.files] == ["hf_trainer", "deepspeed"]
    assert read.facts["config.deepspeed.optimizer.type"] == "AdamW"


def test_kind_can_be_forced(tmp_path: Path) -> None:
    # a YAML with no framework's marker keys: only --kind can say what it is
    path = tmp_path / "cfg.yaml"
    path.write_text("foo: 1\nbf16_full_eval: true\n")
    assert read_paths([str(path)]).problems          # undetectable on its own
    read = read_paths([str(path)], kind="hf_trainer")
    # read as asked, and said: none of the HF Trainer's marker keys (issue 22 item 5)
    assert [(p.code, p.level) for p in read.problems] == [("kind_forced", "warning")]
    assert read.facts["config.unrecognised"] == [str(path)]
    assert read.facts["config.hf_trainer.bf16_full_eval"] is True
    assert read.files == [(str(path), "hf_trainer")]


def test_forced_megatron_on_an_unusual_extension(tmp_path: Path) -> None:
    path = tmp_path / "flags.conf"
    path.write_text("--fp8-format hybrid\n--bf16\n")
    read = read_paths([str(path)], kind="megatron")
    assert read.facts["config.megatron.fp8_format"] == "hybrid"
    assert line_of(read, "config.megatron.bf16") == 2


def test_folder_is_one_job_and_linked_file_wins() -> None:
    read = read_paths([fixture("jobs/accel_ds_folder")])
    assert [(p.code, p.level) for p in read.problems] == [("not_read", "info")]
    assert "ds_zero3_unused.json (not part of the job" in read.problems[0].message
    names = sorted(os.path.basename(p) for p, _ in read.files)
    assert names == ["accelerate_config.yaml", "ds_zero2.json"]   # ds_zero3_unused.json left out
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 2
    assert read.facts["config.kinds"] == ["accelerate", "deepspeed"]


def test_folder_combines_kinds() -> None:
    read = read_paths([fixture("jobs/hf_accel_folder")])
    assert read.problems == []
    assert read.facts["config.kinds"] == ["accelerate", "hf_trainer"]
    assert read.facts["config.hf_trainer.bf16"] is True
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_folder_with_two_configs_of_one_kind_is_ambiguous() -> None:
    read = read_paths([fixture("jobs/ambiguous_folder")])
    assert len(read.problems) == 1
    assert "a.yaml, b.yaml" in read.problems[0].message
    assert "config.accelerate.mixed_precision" not in read.facts


def test_folder_names_unrelated_files_it_did_not_read(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "torchtitan/v02_rowwise_allgather.toml", tmp_path / "job.toml")
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0"}')
    (tmp_path / "notes.yaml").write_text("todo: [a, b]\n")
    (tmp_path / "README.md").write_text("# hi\n")
    (tmp_path / "trainer_state.json").write_text(
        '{"global_step": 10, "logging_steps": 5, "save_steps": 10, "log_history": []}')
    with open(tmp_path / "train_data.json", "wb") as fh:      # a dataset, not a config
        fh.truncate(30 * 1024 * 1024)
    (tmp_path / ".hidden").mkdir()
    shutil.copy(FIXTURES / "deepspeed/zero3_fp16.json", tmp_path / ".hidden" / "ds.json")
    read = read_paths([str(tmp_path)])
    assert [(p.code, p.level) for p in read.problems] == [("not_read", "warning")]
    told = read.problems[0].message    # issue 22 item 5: named, never dropped without a word
    assert all(n in told for n in ("notes.yaml", "package.json", "trainer_state.json"))
    assert "README.md" not in told and "ds.json" not in told and "train_data" not in told
    assert read.files == [(str(tmp_path / "job.toml"), "torchtitan")]


def test_same_file_twice_is_read_once() -> None:
    path = fixture("deepspeed/zero3_fp16.json")
    read = read_paths([path, path])
    assert read.files == [(path, "deepspeed")]


def test_files_and_kinds_facts_have_provenance() -> None:
    read = read_paths([fixture("lightning/te_fsdp.yaml")])
    assert read.facts["config.files"] == [{"path": fixture("lightning/te_fsdp.yaml"),
                                           "kind": "lightning"}]
    assert read.provenance["config.files"] == "config"


def test_default_paths_follow_accelerates_lookup(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_paths() == []
    target = tmp_path / "xdg" / "huggingface" / "accelerate"
    target.mkdir(parents=True)
    (target / "default_config.json").write_text('{"mixed_precision": "fp8"}')
    assert default_paths() == [str(target / "default_config.json")]   # legacy JSON alone
    (target / "default_config.yaml").write_text("mixed_precision: fp8\n")
    assert default_paths() == [str(target / "default_config.yaml")]   # YAML preferred
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))                # HF_HOME wins over XDG
    assert default_paths() == []


def test_bundled_example_reads_cleanly() -> None:
    from preflight.examples import example_paths

    paths = example_paths()
    assert all(os.path.isfile(p) for p in paths)
    read = read_paths(paths)
    assert read.problems == []
    assert [k for _, k in read.files] == ["accelerate", "deepspeed"]
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert read.facts["config.deepspeed.fp16.enabled"] is True
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3


@pytest.mark.parametrize("rel", ["jobs/accel_ds_folder", "accelerate/ds_file_zero3.yaml"])
def test_reading_is_deterministic(rel: str) -> None:
    assert read_paths([fixture(rel)]) == read_paths([fixture(rel)])


def test_huge_folder_is_refused_quickly(tmp_path: Path) -> None:
    from cputime import cpu_seconds

    for i in range(60):
        (tmp_path / f"cfg_{i:02d}.yaml").write_text(f"name: x{i}\n")
    start = cpu_seconds()
    read = read_paths([str(tmp_path)])
    assert cpu_seconds() - start < 2.0     # CPU time: not stretched by load (tests/cputime.py)
    assert len(read.problems) == 1 and "not one job" in read.problems[0].message
    assert read.files == []


@pytest.mark.parametrize("name,content,kind", [
    ("train_args", "--num-layers 2\n--hidden-size 64\n--fp8-format hybrid\n", "megatron"),
    ("job", "#!/bin/bash\naccelerate launch --mixed_precision fp8 train.py\n", "accelerate"),
    ("default_config", "# --- written by accelerate config ---\nmixed_precision: fp8\n"
                       "distributed_type: MULTI_GPU\nnum_processes: 2\n", "accelerate"),
    ("ds_config", '{"zero_optimization": {"stage": 1}, "bf16": {"enabled": true}}', "deepspeed"),
])
def test_files_without_extension(tmp_path: Path, name: str, content: str, kind: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    read = read_paths([str(path)])
    assert read.problems == []
    assert read.files == [(str(path), kind)]


def test_forced_kind_on_a_folder_reads_only_that_kind(tmp_path: Path) -> None:
    read = read_paths([fixture("jobs/accel_ds_folder")], kind="deepspeed")
    # the accelerate YAML is skipped (not a DeepSpeed config), so nothing says which of the two
    # DeepSpeed JSONs the job uses
    assert [p.message for p in read.problems] == [
        "the folder holds 2 deepspeed configs (ds_zero2.json, ds_zero3_unused.json); name the "
        "one the job uses (fp8-doctor check FILE ...); none of them was read"]
    assert not any(n.startswith("config.accelerate.") for n in read.facts)
    shutil.copy(FIXTURES / "deepspeed/zero1_bf16_off.json", tmp_path / "ds.json")
    shutil.copy(FIXTURES / "accelerate/fsdp1_bf16_old.yaml", tmp_path / "acc.yaml")
    read = read_paths([str(tmp_path)], kind="deepspeed")
    assert [(p.code, p.level) for p in read.problems] == [("not_read", "info")]
    assert "acc.yaml (not a deepspeed file" in read.problems[0].message
    assert read.files == [(str(tmp_path / "ds.json"), "deepspeed")]


@pytest.mark.parametrize("rel,kind", [
    ("accelerate/launch_fp8_fsdp.sh", "accelerate"),
    ("accelerate/launch_fp8_hf_bf16.sh", "hf_trainer"),
    ("accelerate/launch_fp8_hf_bf16.sh", "accelerate"),
    ("hf_trainer/run_sft_deepspeed.sh", "hf_trainer"),
])
def test_forced_accelerate_or_hf_kind_reads_a_launch_script(rel: str, kind: str) -> None:
    # audit 4, bug 5: FORMATS lacked "text" for these kinds, so the script was parsed as YAML
    read = read_paths([fixture(rel)], kind=kind)
    assert read.problems == []
    assert read.files[0] == (fixture(rel), kind)
    assert kind in read.facts["config.kinds"]


def test_forced_accelerate_kind_on_a_script_without_accelerate_launch() -> None:
    read = read_paths([fixture("hf_trainer/run_sft_deepspeed.sh")], kind="accelerate")
    assert len(read.problems) == 1
    assert "no Hugging Face Accelerate settings" in read.problems[0].message
    assert "--kind hf_trainer" in read.problems[0].message


def test_forced_accelerate_kind_on_a_folder_keeps_launch_scripts(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "accelerate/launch_fp8_hf_bf16.sh", tmp_path / "launch.sh")
    (tmp_path / "flags.args").write_text("--num-layers 2\n--fp8-format hybrid\n")
    read = read_paths([str(tmp_path)], kind="accelerate")
    assert [(p.code, p.level) for p in read.problems] == [("not_read", "info")]
    assert read.files == [(str(tmp_path / "launch.sh"), "accelerate")]
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


# -- a folder is one job: a launch script with the files it names (audit 4, bugs 1 and 2) --------

def test_folder_with_a_launch_script_reads_the_script_and_what_it_names() -> None:
    read = read_paths([fixture("jobs/launch_accel_ds")])
    assert read.problems == []
    assert [os.path.basename(p) for p, _ in read.files] == [
        "launch.sh", "accelerate_config.yaml", "ds_config.json"]
    # the script's flags win over the YAML they override (accelerate >= 1.5)
    assert read.facts["config.accelerate.num_processes"] == 16
    assert read.provenance["config.accelerate.num_processes"].endswith("launch.sh:8")
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert read.facts["config.hf_trainer.gradient_checkpointing"] is True
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3


def test_folder_read_equals_reading_its_launch_script() -> None:
    folder = read_paths([fixture("jobs/launch_accel_ds")])
    script = read_paths([fixture("jobs/launch_accel_ds/launch.sh")])
    assert folder.facts == script.facts
    assert folder.files == script.files


def test_megatron_script_and_its_yaml_cfg_are_one_job(tmp_path: Path) -> None:
    for name in ("run_with_yaml_cfg.sh", "gpt_yaml_cfg_local_impl.yaml"):
        shutil.copy(FIXTURES / "megatron" / name, tmp_path / name)
    read = read_paths([str(tmp_path)])
    assert read.problems == []
    assert [os.path.basename(p) for p, _ in read.files] == [
        "run_with_yaml_cfg.sh", "gpt_yaml_cfg_local_impl.yaml"]
    assert read.facts == read_paths([str(tmp_path / "run_with_yaml_cfg.sh")]).facts


def test_folder_of_several_megatron_jobs_is_ambiguous(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "megatron", tmp_path / "megatron")
    read = read_paths([str(tmp_path / "megatron")])
    assert read.files == []
    assert len(read.problems) == 1
    message = read.problems[0].message
    assert "separate megatron jobs" in message and "none of them was read" in message
    assert "run_with_yaml_cfg.sh, which names gpt_yaml_cfg_local_impl.yaml" in message
    for name in ("pretrain_gpt_fp8_array.sh", "mxfp8_no_overlap.args",
                 "functional_test_model_config.yaml"):
        assert name in message


def test_ambiguous_folder_drops_the_files_only_its_candidates_name(tmp_path: Path) -> None:
    # a.yaml (fp8) names ds_a.json (fp16); b.yaml (bf16) names ds_b.json (bf16). Both YAMLs were
    # dropped as ambiguous but both JSONs were kept and merged: a false DeepSpeed conflict.
    for name, prec, ds in (("a", "fp8", '"fp16": {"enabled": true}'),
                           ("b", "bf16", '"bf16": {"enabled": true}')):
        (tmp_path / f"{name}.yaml").write_text(
            f"distributed_type: DEEPSPEED\nmixed_precision: {prec}\ndeepspeed_config:\n"
            f"  deepspeed_config_file: ds_{name}.json\n")
        (tmp_path / f"ds_{name}.json").write_text(
            f'{{"zero_optimization": {{"stage": 2}}, {ds}}}')
    read = read_paths([str(tmp_path)])
    assert read.files == []
    assert not any(n.startswith("config.") and n != "config.files" for n in read.facts)
    assert [p.message for p in read.problems] == [
        "the folder holds 2 separate accelerate jobs (a.yaml, which names ds_a.json; b.yaml, "
        "which names ds_b.json); name the one the job uses (fp8-doctor check FILE ...); none of "
        "them was read"]


def test_two_scripts_naming_one_yaml_are_two_jobs(tmp_path: Path) -> None:
    (tmp_path / "acc.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 8\n")
    for name, prec in (("fp8.sh", "fp8"), ("bf16.sh", "bf16")):
        (tmp_path / name).write_text(
            f"accelerate launch --config_file acc.yaml --mixed_precision {prec} train.py\n")
    read = read_paths([str(tmp_path)])
    assert read.files == []
    assert "bf16.sh, which names acc.yaml; fp8.sh, which names acc.yaml" in \
        read.problems[0].message


def test_a_named_file_wins_over_a_folder_of_the_same_kind(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "accelerate/fsdp1_bf16_old.yaml", tmp_path / "acc.yaml")
    other = fixture("accelerate/fp8_te_multi_gpu.yaml")
    read = read_paths([other, str(tmp_path)])
    assert [(p.code, p.level) for p in read.problems] == [("not_read", "info")]
    assert "acc.yaml (not part of the job" in read.problems[0].message
    assert read.files == [(other, "accelerate")]


def test_files_naming_each_other_in_a_cycle_are_one_job(tmp_path: Path) -> None:
    # nonsense, but it must neither hang nor lose the files: the first file leads
    (tmp_path / "a.sh").write_text("accelerate launch --config_file b.sh --num_processes 2 x.py\n")
    (tmp_path / "b.sh").write_text("accelerate launch --config_file a.sh --mixed_precision fp8 "
                                   "x.py\n")
    read = read_paths([str(tmp_path)])
    assert read.problems == []
    assert [os.path.basename(p) for p, _ in read.files] == ["a.sh", "b.sh"]
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


def test_folder_with_an_oversized_config_says_so(tmp_path: Path) -> None:
    # audit 4: a 25 MB accelerate.yaml in a job folder was skipped with no word
    shutil.copy(FIXTURES / "torchtitan/v02_rowwise_allgather.toml", tmp_path / "job.toml")
    with open(tmp_path / "accelerate.yaml", "wb") as fh:
        fh.truncate(25 * 1024 * 1024)
    with open(tmp_path / "train_data.json", "wb") as fh:     # data: still skipped quietly
        fh.truncate(25 * 1024 * 1024)
    read = read_paths([str(tmp_path)])
    assert [(os.path.basename(p.path), "over the" in p.message) for p in read.problems] == [
        ("accelerate.yaml", True)]
    assert read.files == [(str(tmp_path / "job.toml"), "torchtitan")]
