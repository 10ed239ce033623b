"""Honest when it cannot read (issue 22 item 5): a file read against its keys leaves FP8
undetermined, a valid file of another framework is not called broken, every file of a folder
that is not read is named, and a model the doctor cannot see makes its rules undetermined."""

from __future__ import annotations

import textwrap
from pathlib import Path

import preflight
from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

# A Megatron-Bridge style override file (model.fp8 / mixed_precision keys, no Megatron-LM key).
BRIDGE = """\
model:
  fp8: e4m3
  fp8_recipe: mxfp8
  tensor_model_parallel_size: 2
mixed_precision: bf16_with_mxfp8_mixed
train:
  micro_batch_size: 1
"""


def _fp8(paths: list[str], kind: str | None = None) -> object:
    read = read_paths(paths, kind)
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


def test_kind_on_a_file_without_its_settings_is_undetermined_not_fp8_no(tmp_path: Path) -> None:
    path = tmp_path / "bridge_override.yaml"
    path.write_text(BRIDGE)
    for kind in ("megatron",):
        read = read_paths([str(path)], kind)
        assert [p.code for p in read.problems][:1] == ["kind_forced"], kind
        assert "FP8 is undetermined" in read.problems[0].message
        fp8 = _fp8([str(path)], kind)
        assert isinstance(fp8, Unknown) and "--kind" in fp8.reason, (kind, fp8)


def test_kind_megatron_on_an_override_launch_line(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\npython run_recipe.py --config-file base.yaml "
                      "model.fp8=e4m3 model.fp8_recipe=mxfp8\n")
    read = read_paths([str(script)], "megatron")
    assert any(p.code == "kind_forced" for p in read.problems)
    assert isinstance(_fp8([str(script)], "megatron"), Unknown)


def test_a_real_megatron_file_under_kind_megatron_still_says_fp8(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("torchrun pretrain_gpt.py --num-layers 2 --fp8-format hybrid --bf16\n")
    assert _fp8([str(script)], "megatron") is True
    assert read_paths([str(script)], "megatron").problems == []


def test_a_valid_file_of_an_unknown_framework_is_not_called_broken(tmp_path: Path) -> None:
    path = tmp_path / "other.yaml"
    path.write_text("pipeline:\n  stages: 4\nfoo: bar\n")
    read = read_paths([str(path)])
    problem = next(p for p in read.problems if p.code == "unknown_framework")
    assert problem.level == "warning" and "would fail" not in (problem.fix or "")
    report = preflight.check(str(path), smoke=False)
    finding = next(f for f in report.findings if f.rule_id == "FP8D-CFG-UNKNOWN-FRAMEWORK")
    assert "would fail" not in finding.fix.text and "parsed" in finding.fix.text


def test_a_broken_file_still_says_the_job_would_fail(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("a: [1, 2\n")
    report = preflight.check(str(path), smoke=False)
    finding = next(f for f in report.findings if f.rule_id == "FP8D-CFG-UNREADABLE")
    assert "would fail" in finding.fix.text


def test_every_file_of_a_folder_not_read_is_named(tmp_path: Path) -> None:
    (tmp_path / "launch.sh").write_text(
        "#!/bin/bash\necho \"Starting training with accelerate launch...\"\n"
        "accelerate launch --mixed_precision fp8 train.py\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        from transformers import TrainingArguments
        TrainingArguments(output_dir="o", bf16=True)
    """))
    (tmp_path / "model.py").write_text("import torch\nclass Net(torch.nn.Module):\n    pass\n")
    (tmp_path / "notes.yaml").write_text("todo: [a]\n")
    read = read_paths([str(tmp_path)])
    assert sorted(Path(p).name for p, _ in read.files) == ["launch.sh", "train.py"]
    told = next(p for p in read.problems if p.code == "not_read")
    assert "model.py" in told.message and "notes.yaml" in told.message
    assert told.level == "warning"       # notes.yaml may hold settings: not just a leftover


def test_a_folder_with_one_training_script_reads_it(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="fp8")
    """))
    (tmp_path / "utils.py").write_text("def helper():\n    return 1\n")
    read = read_paths([str(tmp_path)])
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert any(p.code == "not_read" and "utils.py" in p.message for p in read.problems)


def test_a_custom_llmfoundry_model_makes_te_rules_undetermined(tmp_path: Path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text(textwrap.dedent("""
        code_paths: [my_models/registry.py]
        max_seq_len: 2048
        global_train_batch_size: 8
        device_train_microbatch_size: 1
        max_duration: 10ba
        model:
          name: my_te_model
          d_model: 2048
        precision: amp_fp8
    """))
    report = preflight.check(str(path), smoke=False, assume={"gpu": "H100"})
    assert "FP8D-LLMF-0001" not in {f.rule_id for f in report.findings}
    undetermined = {u.rule_id: u for u in report.undetermined}
    assert "FP8D-LLMF-0001" in undetermined


def test_a_lone_model_key_is_no_torchtitan_job(tmp_path: Path) -> None:
    path = tmp_path / "snippet.yaml"
    path.write_text("model:\n  name: mpt_causal_lm\n  fc_type: te\n")
    read = read_paths([str(path)])
    assert ("torchtitan" not in [k for _, k in read.files])


def test_kind_nemo_on_a_bridge_file_is_not_fp8_no(tmp_path: Path) -> None:
    # NeMo 1.x's model.fp8 is a bool; `fp8: e4m3` (Megatron-Bridge) read as NeMo says nothing
    path = tmp_path / "bridge_override.yaml"
    path.write_text(BRIDGE)
    fp8 = _fp8([str(path)], "nemo")
    assert isinstance(fp8, Unknown) and "e4m3" in fp8.reason


def test_kind_of_another_format_on_a_valid_script_is_not_called_broken(tmp_path: Path) -> None:
    # Acceptance audit of issue 22 item 5 (main eafd747): `--kind nemo` on Megatron-Bridge's
    # slurm_pretrain_fsdp.sh parsed the shell script as YAML and gave the error "invalid YAML
    # ... the training job would fail on it too": the file is fine, --kind picked the format.
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -euo pipefail\nCMD=\"python run.py model.fp8=e4m3\"\n"
                      "srun bash -lc \"$CMD\"\n")
    for kind in ("nemo", "lightning", "deepspeed"):
        read = read_paths([str(script)], kind)
        # (then "no_job": the paths named gave no job config, an error as for any such PATH)
        assert [(p.code, p.level) for p in read.problems][:1] == [("kind_forced", "warning")]
        assert "unreadable" not in [p.code for p in read.problems], kind
        assert "would fail" not in read.problems[0].message + (read.problems[0].fix or "")
        report = preflight.check([str(script)], kind=kind)
        assert "FP8D-CFG-UNREADABLE" not in {f.rule_id for f in report.findings}, kind
        assert "FP8D-CFG-KIND-FORCED" in {f.rule_id for f in report.findings}, kind


def test_kind_on_a_broken_file_of_its_own_format_is_still_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "conf.yaml"
    path.write_text("model:\n  fp8: [unclosed\n")
    read = read_paths([str(path)], "nemo")
    assert [(p.code, p.level) for p in read.problems] == [("unreadable", "error")]


def test_a_script_the_launch_line_runs_is_named_once(tmp_path: Path) -> None:
    # Acceptance audit of issue 22 item 5 (main 883a53b): a launch line's train.py with no call
    # any framework reads was named twice - its own "nothing known in this Python file" warning
    # and again in the folder's "files not read" list, which is for files nothing else names.
    (tmp_path / "run.sh").write_text("#!/bin/bash\naccelerate launch --config_file acc.yaml "
                                     "train.py --epochs 1\n")
    (tmp_path / "acc.yaml").write_text("compute_environment: LOCAL_MACHINE\n"
                                       "distributed_type: MULTI_GPU\nmixed_precision: fp8\n")
    (tmp_path / "train.py").write_text("print('hello')\n")
    (tmp_path / "model.py").write_text("import torch\nclass Net(torch.nn.Module):\n    pass\n")
    read = read_paths([str(tmp_path)])
    own = [p for p in read.problems if p.path.endswith("train.py")]
    assert [p.code for p in own] == ["not_a_config"], [(p.code, p.message) for p in own]
    told = [p for p in read.problems if p.code == "not_read"]
    assert len(told) == 1 and "model.py" in told[0].message
    assert "train.py" not in told[0].message
