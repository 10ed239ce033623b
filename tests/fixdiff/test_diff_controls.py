"""``check --diff`` never prints a line a terminal shows otherwise than ``git apply`` applies it
(redteam2, issue 21 item 5): a launch script whose flag line (or a line beside it) held an escape
sequence (``ESC[8m`` hides text, ``ESC]52;`` writes the clipboard) or a bidirectional override
had those characters written raw into the patch, where the set-false edit of ``--merge_lora``
put them. A patch line can be neither escaped nor masked (it would not apply): the hunk narrows
to lines without one, else the file is listed with the reason."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from preflight import api
from preflight.cli import main
from preflight.facts import Facts
from preflight.findings import EditSpec, Finding, Fix, Severity
from preflight.fixdiff import diff_output, safety

LINE = ("megatron sft --model Qwen/Qwen3-8B --train_type lora --fp8_recipe blockwise "
        "--fp8_format e4m3 --merge_lora true")
CONTROLS = ["\x1b[8m", "\x1b]52;c;ZWNobyBoaQ==\x07", "\u202e", "\u2066", "\u200f", "\x85",
            "\x7f", "\r", "\u2028", "\ufeff", "\x08"]


def _unsafe(text: str) -> list[str]:
    return [hex(ord(ch)) for ch in text if unicodedata.category(ch)[0] in "CZ"
            and ch not in " \t\n"]


def _report(path: Path, line: int) -> api.Report:
    facts = Facts({"config.swift.merge_lora": True,
                   "config.files": [{"path": str(path), "kind": "swift"}]},
                  {"config.swift.merge_lora": f"{path}:{line}"})
    edit = EditSpec("config.swift.merge_lora", "set", "false")
    return api.Report(facts=facts, findings=(
        Finding("X-1", Severity.ERROR, "t", "m", Fix("fix it", (), (edit,))),))


@pytest.mark.parametrize("control", CONTROLS, ids=[hex(ord(c[-1])) for c in CONTROLS])
def test_a_control_on_the_edited_line_is_listed_not_printed(tmp_path: Path,
                                                           control: str) -> None:
    job = tmp_path / "job"
    job.mkdir()
    script = job / "run.sh"
    script.write_text(f"#!/bin/bash\n{LINE} # {control}x\n", encoding="utf-8", newline="")
    for redact in (True, False):            # --no-redact does not make a terminal safe
        out = diff_output(_report(script, 2), [str(job)], str(tmp_path), redact=redact)
        assert out.patch == "" and not _unsafe(out.notes)
        flat = " ".join(ln.lstrip("# ") for ln in out.notes.splitlines())
        assert "run.sh: the lines of the edit or next to it hold control or bidirectional" in flat


def test_a_control_beside_the_edit_narrows_the_hunk(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    script = job / "run.sh"
    script.write_text(f"#!/bin/bash\n# \u202eevil\nset -e\n{LINE}\n", encoding="utf-8")
    out = diff_output(_report(script, 4), [str(job)], str(tmp_path))
    assert "+" + LINE.replace("true", "false") in out.patch and not _unsafe(out.patch)
    git = shutil.which("git")
    if git is None:
        pytest.skip("needs git for git apply (the patch was checked above without it)")
    subprocess.run([git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([git, "apply", "--check", "-"], input=out.patch, text=True, cwd=tmp_path,
                   check=True)


def test_crlf_lines_are_still_shown(tmp_path: Path) -> None:
    # a Windows file's \r before \n is what git apply expects: no terminal trick
    assert safety.plain("x: 1\r\n") and safety.plain("\tx\n") and safety.plain("x")
    assert not safety.plain("x\ry\n") and not safety.plain("x\x1b[0m\n")
    assert not safety.plain("x\u202e\n")


def test_through_the_cli_with_a_set_false_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # the real reader, rule (FP8D-SWIFT-0001) and shell flag editor
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{LINE} \u202e\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-smoke", "--diff", "--assume", "pkg.ms-swift=4.5.2", "run.sh"])
    out = capsys.readouterr()
    assert not _unsafe(out.out) and not _unsafe(out.err)
    assert out.out == "" and "bidirectional" in out.err
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{LINE}\n", encoding="utf-8")
    main(["check", "--no-smoke", "--diff", "--assume", "pkg.ms-swift=4.5.2", "run.sh"])
    assert "--merge_lora false" in capsys.readouterr().out     # the edit itself still works
