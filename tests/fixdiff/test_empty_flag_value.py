"""``--merge_lora= true`` (an ``=`` with nothing after it, then a word): argparse reads an empty
value for the flag (HfArgumentParser's ``string_to_bool('')`` raises: the job stops) and ``true``
as a word of its own. The reader took ``--merge_lora=`` for the bare flag (true) and ``--diff``
edited the line into ``--merge_lora false true``, a job the file never described (redteam2's
open item, issue 21). Now the value is Unknown with the reason and the editor refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.cli import main
from preflight.facts import Unknown
from preflight.fixdiff import shelledit
from preflight.fixdiff.common import EditError
from preflight.frameworks.megatron_args import read_args_text
from preflight.jobs.read import read_paths

LINE = ("megatron sft --model Qwen/Qwen3-8B --train_type lora --fp8_recipe blockwise "
        "--fp8_format e4m3 {}")


@pytest.mark.parametrize("value", [False, "false", True, "x"])
@pytest.mark.parametrize("after", ["--merge_lora= true", "--merge_lora= 1 \\", "--merge_lora="])
def test_the_editor_refuses_an_empty_value(value: object, after: str) -> None:
    text = "#!/bin/bash\n" + LINE.format(after) + "\n"
    with pytest.raises(EditError, match="empty value"):
        shelledit.set_flag(text, "merge_lora", 2, value, True)


def test_a_value_after_the_equals_sign_is_still_edited() -> None:
    text = "#!/bin/bash\n" + LINE.format("--merge_lora=true") + "\n"
    assert "--merge_lora=false" in shelledit.set_flag(text, "merge_lora", 2, False, True)


def test_an_empty_value_is_no_bare_flag(tmp_path: Path) -> None:
    out = read_args_text(str(tmp_path / "a.sh"), "pretrain_gpt.py --load= --bf16 --lr=\n")
    assert out.facts["config.megatron.load"] == ""
    assert out.facts["config.megatron.lr"] == "" and out.facts["config.megatron.bf16"] is True


def test_an_empty_bool_value_is_unknown_with_the_reason(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n" + LINE.format("--merge_lora= true") + "\n")
    read = read_paths([str(script)])
    got = read.facts["config.swift.merge_lora"]
    assert isinstance(got, Unknown) and "empty value" in got.reason
    assert any(p.line == 2 and "empty value" in p.message for p in read.problems)


def test_through_the_cli_no_patch_invents_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + LINE.format("--merge_lora= true") + "\n")
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-smoke", "--diff", "--assume", "pkg.ms-swift=4.5.2", "run.sh"])
    patch = capsys.readouterr().out
    assert "false true" not in patch and not [ln for ln in patch.splitlines()
                                              if ln.startswith("+megatron")]


def test_an_empty_bool_value_is_a_problem_at_its_line(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\ntorchrun train.py --output_dir o --bf16= True\n")
    read = read_paths([str(script)])
    assert isinstance(read.facts["config.hf_trainer.bf16"], Unknown)
    assert [(p.path, p.line) for p in read.problems if "empty value" in p.message] == \
        [(str(script), 3)]


@pytest.mark.parametrize("value", ["on", "1.0", "2", "true\u200b", "enabled"])
def test_a_value_string_to_bool_refuses_is_a_problem_at_its_line(tmp_path: Path,
                                                                 value: str) -> None:
    # redteam3: kept as text no rule reads as true, with no word that the job stops there
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\nset -e\ntorchrun train.py --output_dir o --bf16 {value}\n")
    read = read_paths([str(script)])
    assert isinstance(read.facts["config.hf_trainer.bf16"], Unknown)
    assert [p.line for p in read.problems if "string_to_bool" in p.message] == [3]


@pytest.mark.parametrize("value", ["Yes", "T", "1", "0", "FALSE", "$BF16"])
def test_values_it_takes_are_no_problem(tmp_path: Path, value: str) -> None:
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\ntorchrun train.py --output_dir o --bf16 {value}\n")
    assert not [p for p in read_paths([str(script)]).problems if "string_to_bool" in p.message]
