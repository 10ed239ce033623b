"""The jobs people really run (issue 14 item 2; issue 12 item 4; issue 13 item 4).

Built from a reduction of LLaMA-Factory's repository layout (fixtures/configs/jobs/
llamafactory_repo/README.md cites the commits): a YAML three folders below the repository root
that names its DeepSpeed JSON relative to that root, where the job is launched from.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cfg_helpers import FIXTURES
from hostenv import reads_mode_000

import preflight
from preflight.jobs.read import read_paths

REPO = FIXTURES / "jobs" / "llamafactory_repo"
YAML = REPO / "examples" / "extras" / "fp8" / "llama3_fp8_deepspeed_sft.yaml"
JSON = REPO / "examples" / "deepspeed" / "ds_z3_fp8_config.json"


def _errors(read) -> list:
    return [p for p in read.problems if p.level == "error"]


def test_reference_found_through_the_file_given_on_the_same_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)                       # run from another folder
    read = read_paths([str(YAML), str(JSON)])
    assert read.problems == []
    assert [k for _, k in read.files] == ["llamafactory", "deepspeed"]
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 3


def test_reference_resolved_against_the_job_root_of_a_deep_folder_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    read = read_paths([str(REPO)])                    # the YAML is 3 folders down
    assert read.problems == []
    assert sorted(k for _, k in read.files) == ["deepspeed", "llamafactory"]
    path = dict((k, p) for p, k in read.files)["deepspeed"]
    assert os.path.samefile(path, JSON)               # the path used is the one reported


def test_reference_not_found_is_a_warning_naming_the_key_line_and_places(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    read = read_paths([str(YAML)])
    assert _errors(read) == []
    (problem,) = read.problems
    assert problem.level == "warning" and problem.code == "reference"
    assert problem.path == str(YAML) and problem.line == 42
    assert str(YAML.parent) in problem.message
    assert problem.fix and "launch" in problem.fix
    assert read.facts["config.llamafactory.fp8"] is True   # the YAML itself is read


def test_missing_deepspeed_config_file_gets_its_own_fix() -> None:
    report = preflight.check([str(FIXTURES / "accelerate" / "ds_file_missing.yaml")])
    (finding,) = [f for f in report.findings if f.rule_id.startswith("FP8D-CFG-")]
    assert finding.rule_id == "FP8D-CFG-REFERENCE"
    assert finding.severity.value == "warning"
    assert "deepspeed_config_file" in finding.message
    assert "parses" not in finding.fix.text            # not the generic "fix the file" text


def test_empty_folder_is_no_all_clear(tmp_path: Path) -> None:
    read = read_paths([str(tmp_path)])
    (problem,) = read.problems
    assert problem.code == "no_job" and problem.level == "error"
    report = preflight.check(str(tmp_path))
    assert not report.ok()
    assert [f.rule_id for f in report.findings if f.rule_id.startswith("FP8D-CFG")] == [
        "FP8D-CFG-NO-JOB"]


def test_folder_with_nothing_recognised_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("shopping: [milk, eggs]\n")
    (tmp_path / "data.csv").write_text("a,b\n")
    read = read_paths([str(tmp_path)])
    (problem,) = read.problems
    assert problem.code == "no_job" and "1 config-like file" in problem.message


@pytest.mark.skipif(reads_mode_000(), reason="this user reads mode-000 files (root)")
def test_unreadable_folder_is_an_error_not_silence(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(REPO, job)
    job.chmod(0)
    try:
        read = read_paths([str(job)])
        assert [(p.code, p.level) for p in read.problems] == [("unreadable", "error")]
        assert not preflight.check(str(job)).ok()
    finally:
        job.chmod(0o755)


@pytest.mark.skipif(reads_mode_000(), reason="this user reads mode-000 files (root)")
def test_unreadable_subfolder_is_reported(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(REPO, job)
    sub = job / "examples" / "deepspeed"
    sub.chmod(0)
    try:
        read = read_paths([str(job)])
        codes = sorted((p.code, p.level) for p in read.problems)
        # the subfolder, and then the JSON its YAML names, which could not be found
        assert ("unreadable", "warning") in codes and ("reference", "warning") in codes
        assert all(p.path == str(sub) for p in read.problems if p.code == "unreadable")
    finally:
        sub.chmod(0o755)


def test_scan_depth_is_bounded(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(12)])
    deep.mkdir(parents=True)
    shutil.copy(JSON, deep / "ds.json")
    read = read_paths([str(tmp_path)])
    assert read.files == [] and read.problems[0].code == "no_job"


def test_a_python_script_is_not_read_as_broken_yaml(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("from transformers import Trainer\nargs = dict(bf16=True)\n")
    read = read_paths([str(script)])
    kinds = [(p.code, p.level) for p in read.problems]
    assert ("not_a_config", "warning") in kinds
    assert all("YAML" not in p.message for p in read.problems)
    report = preflight.check(str(script))
    ids = {f.rule_id for f in report.findings}
    assert "FP8D-CFG-NOT-CONFIG" in ids and "FP8D-CFG-UNREADABLE" not in ids


def test_duplicate_yaml_key_is_read_as_pyyaml_reads_it_with_a_warning(tmp_path: Path) -> None:
    # accelerate loads its YAML with yaml.safe_load: the later value is what the job uses
    path = tmp_path / "acc.yaml"
    path.write_text("distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 8\n"
                    "mixed_precision: fp8\nfp8_config:\n  backend: TE\n")
    read = read_paths([str(path)])
    (problem,) = read.problems
    assert (problem.code, problem.level, problem.line) == ("duplicate_key", "warning", 4)
    assert "line 2" in problem.message and "line 4" in problem.message
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert read.provenance["config.accelerate.mixed_precision"] == f"{path}:4"
    report = preflight.check(str(path))
    assert "FP8D-CFG-UNREADABLE" not in {f.rule_id for f in report.findings}
    assert report.facts["intent.fp8"] is True


def test_duplicate_key_is_an_error_where_the_framework_refuses_it(tmp_path: Path) -> None:
    # llm-foundry loads through OmegaConf, whose loader raises "found duplicate key"
    path = tmp_path / "yamls.yaml"
    path.write_text("max_duration: 10ba\nprecision: amp_bf16\ntrain_loader: {name: text}\n"
                    "precision: amp_fp8\nmodel: {name: mpt_causal_lm}\n")
    read = read_paths([str(path)])
    assert [(p.code, p.level, p.line) for p in read.problems] == [("unreadable", "error", 4)]


MEGATRON_RL = FIXTURES / "jobs" / "megatron_rl_source"


def test_sourced_script_is_part_of_the_job_and_flag_names_are_expanded() -> None:
    # Megatron-LM examples/rl/model_configs (README cites the commit): the folder is one job
    read = read_paths([str(MEGATRON_RL)])
    assert read.problems == []
    assert sorted(os.path.basename(p) for p, _ in read.files) == [
        "common.sh", "llama3p1_8b_instruct.sh"]
    assert read.facts["config.megatron.bf16"] is True          # --${PRECISION:-bf16}
    assert read.provenance["config.megatron.bf16"].endswith("common.sh:13")
    # $TP is set by the script that sources common.sh, as bash passes it on
    assert read.facts["config.megatron.tensor_model_parallel_size"] == 8
    assert read.facts["config.megatron.hidden_size"] == 4096


def test_sourced_value_wins_over_a_self_default(tmp_path: Path) -> None:
    (tmp_path / "env.sh").write_text("PRECISION=fp16\n")
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\nsource ./env.sh\nPRECISION=${PRECISION:-bf16}\n"
        "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --${PRECISION}\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts.get("config.megatron.fp16") is True
    assert "config.megatron.bf16" not in read.facts


def test_sourcing_is_bounded_and_never_executes(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "a.sh").write_text(f"touch {marker}\nsource ./a.sh\n")   # sources itself
    (tmp_path / "run.sh").write_text("#!/bin/bash\nsource ./a.sh\n"
                                     "torchrun pretrain_gpt.py --num-layers 2 --bf16\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert read.facts["config.megatron.bf16"] is True
    assert not marker.exists()


def test_unterminated_heredoc_body_is_not_the_launch_line(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2 --bf16\n"
                      "cat > notes.txt <<EOF\n"
                      "torchrun pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n")
    read = read_paths([str(script)])
    assert read.facts["config.megatron.bf16"] is True
    assert "config.megatron.fp8_format" not in read.facts
    (problem,) = read.problems
    assert (problem.level, problem.line) == ("warning", 3)


SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "acc-ds-config-file-conflicts"


def _acc0003(folder: Path, *paths: str) -> list:
    report = preflight.check([str(folder / p) for p in paths],
                             snapshot=str(SCENARIO.parent / "_envs" / "h100.json"),
                             assume={"pkg.accelerate": "1.11.0", "pkg.deepspeed": "0.16.4"})
    return [f for f in report.findings if f.rule_id == "FP8D-ACC-0003"]


def test_following_the_acc_0003_fix_clears_it(tmp_path: Path) -> None:
    # issue 12: done as the fix says, the error still fired, at launch.sh, with a false text
    shutil.copy(SCENARIO / "accelerate_config.yaml", tmp_path)
    shutil.copy(SCENARIO / "ds_config.json", tmp_path)
    (firing,) = _acc0003(tmp_path, "accelerate_config.yaml", "ds_config.json")
    assert firing.location.path.endswith("accelerate_config.yaml")
    yaml_path = tmp_path / "accelerate_config.yaml"
    yaml_path.write_text("".join(line for line in yaml_path.read_text().splitlines(True)
                                 if not line.startswith("mixed_precision:")))
    (tmp_path / "launch.sh").write_text(
        "#!/bin/bash\naccelerate launch --config_file accelerate_config.yaml "
        "--mixed_precision fp8 train.py\n")
    assert _acc0003(tmp_path, "launch.sh", "ds_config.json") == []
    # the flag alone, with the YAML key still there, is what accelerate accepts too
    shutil.copy(SCENARIO / "accelerate_config.yaml", tmp_path)
    assert _acc0003(tmp_path, "launch.sh", "ds_config.json") == []


def test_kind_is_honoured_for_a_fragment_that_looks_like_another_framework(tmp_path: Path
                                                                          ) -> None:
    # a docs fragment: llm-foundry's precision_config with an FSDP block that scores as accelerate
    path = tmp_path / "fragment.yaml"
    path.write_text("precision_config:\n  fp8_format: HYBRID\nfsdp_config:\n"
                    "  fsdp_sharding_strategy: FULL_SHARD\n")
    read = read_paths([str(path)], kind="llmfoundry")
    assert [(p.code, p.level) for p in read.problems] == [("kind_forced", "warning")]
    assert read.facts["config.llmfoundry.precision_config.fp8_format"] == "HYBRID"
    assert read.files == [(str(path), "llmfoundry")]


def test_provenance_is_a_value_not_text_to_reparse(tmp_path: Path) -> None:
    from preflight.findings import Location, Source

    # a file whose own name ends in ":<digits>" (no line): text parsing took "12" for a line
    assert Location.from_source(Source(str(tmp_path / "ds:12"))) == Location(
        str(tmp_path / "ds:12"), None)
    folder = tmp_path / "run:7"
    folder.mkdir()
    path = folder / "acc.yaml"
    path.write_text("distributed_type: MULTI_GPU\nmixed_precision: fp8\n")
    source = read_paths([str(path)]).provenance["config.accelerate.mixed_precision"]
    assert isinstance(source, Source) and (source.path, source.line) == (str(path), 2)
    assert str(source) == f"{path}:2"               # what reports and snapshots show


def test_a_folder_that_cannot_be_listed_is_an_error_naming_it(tmp_path: Path) -> None:
    # the scan's own error path, driven by a real listing failure (the folder is gone by the
    # time it is listed); the mode-000 tests above need a non-root user
    from preflight.jobs.scan import scan

    problems: list = []
    gone = tmp_path / "gone"
    assert scan(str(gone), problems) == ([], 0, 0)
    (problem,) = problems
    assert (problem.level, problem.code, problem.path) == ("error", "unreadable", str(gone))
