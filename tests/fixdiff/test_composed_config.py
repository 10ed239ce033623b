"""``--diff`` into a config the launch line composes from several files (prime-rl's ``uv run rl
@ a.toml @ b.toml --trainer @ t.toml --x.y z``, fixdiff/layers.py): the edit goes into the file
that owns the key -- the last ``@`` file that sets it, else the last one whose section can hold
it, in the right table -- and is applied with ``git apply``, the job read again and the rule
quiet. Refused, with the reason, where the launch line sets the key (the flag wins over every
file), where a file not read (outside the job, ``$CFG``) may set it, and where the file is
outside the job named. FP8D-PRIME-0001: ``quantize_in_weight_transfer`` needs ``[trainer.model]
impl = "custom"``; FP8D-PRIME-0002: FP8 training with ``impl = "hf"`` (prime-rl v0.8.1.dev67)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api
from preflight.fixdiff import diff_output

GIT = shutil.which("git")
ASSUME = {"gpu": "H100", "pkg.torch": "2.8.0+cu128"}
BASE = ('[model]\nname = "Qwen/Qwen3-8B"\n\n[orchestrator]\nbatch_size = 8\n\n'
        '[inference.vllm]\nmax_model_len = 4096\n')
FP8 = ('[trainer.model.quantization]\ntype = "fp8"\n\n[weight_broadcast]\ntype = "nccl"\n'
       'quantize_in_weight_transfer = true\n')
RULES = {"FP8D-PRIME-0001", "FP8D-PRIME-0002"}


def _job(root: Path, files: dict[str, str], line: str) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "run.sh").write_text(f"#!/bin/bash\n{line}\n")


def _flat(notes: str) -> str:
    """The ``#`` notes as one line (they are wrapped at 100 columns)."""
    return " ".join(notes.replace("#", " ").split())


def _fired(report: api.Report) -> set[str]:
    return {f.rule_id for f in report.findings} & RULES


def _round_trip(root: Path, names: list[str] | None = None) -> dict[str, str]:
    """Check, apply the diff, check again: the files the patch changed (name -> new text)."""
    names = names or ["run.sh"]
    before = api.check(names, assume=ASSUME)
    assert _fired(before), [f.rule_id for f in before.findings]
    out = diff_output(before, names, str(root), redact=False)
    assert out.patch, out.notes
    old = {p.name: p.read_text() for p in root.rglob("*.toml")}
    subprocess.run([GIT, "init", "-q"], cwd=root, check=True)
    proc = subprocess.run([GIT, "apply", "-"], cwd=root, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, (out.patch, proc.stderr.decode())
    after = api.check(names, assume=ASSUME)
    assert not _fired(after), out.patch
    return {p.name: p.read_text() for p in root.rglob("*.toml") if p.read_text() != old[p.name]}


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
@pytest.mark.parametrize("files, line, edited, expect", [
    # set in the first file only: edited there, in its table
    ({"a.toml": BASE + '\n[trainer.model]\nimpl = "hf"\n', "b.toml": FP8},
     "uv run rl @ a.toml @ b.toml", "a.toml", '[trainer.model]\nimpl = "custom"\n'),
    # set in both: the last file that sets it wins, and is the one edited
    ({"a.toml": BASE + '\n[trainer.model]\nimpl = "custom"\n',
      "b.toml": FP8 + '\n[trainer.model]\nimpl = "hf"\n'},
     "uv run rl @ a.toml @ b.toml", "b.toml", 'impl = "custom"'),
    # set nowhere: the last @ file, as a key of [trainer.model]
    ({"a.toml": BASE, "b.toml": FP8}, "uv run rl @ a.toml @ b.toml", "b.toml",
     '[trainer.model]\nimpl = "custom"\n'),
    # a `--trainer @ t.toml` file holds trainer.* under its own tables
    ({"a.toml": BASE, "b.toml": FP8, "cfg/t.toml": '[model]\nimpl = "hf"\n'},
     "uv run rl @ a.toml @ b.toml --trainer @ cfg/t.toml", "t.toml",
     '[model]\nimpl = "custom"\n'),
    # set nowhere, the last file an `--inference @` one: the last that can hold trainer.*
    ({"a.toml": BASE, "b.toml": FP8, "inf.toml": "[vllm]\nmax_model_len = 2048\n"},
     "uv run rl @ a.toml @ b.toml --inference @ inf.toml", "b.toml", 'impl = "custom"'),
    # the other overrides on the line stay; a key set by a file, not by them, is edited there
    ({"a.toml": BASE, "b.toml": FP8 + '\n[trainer.model]\nimpl = "hf"\n'},
     "uv run rl @ a.toml @ b.toml --orchestrator.batch-size 16", "b.toml", 'impl = "custom"'),
])
def test_the_edit_goes_into_the_file_that_owns_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], line: str,
        edited: str, expect: str) -> None:
    _job(tmp_path, files, line)
    monkeypatch.chdir(tmp_path)
    changed = _round_trip(tmp_path)
    assert list(changed) == [edited]
    assert expect in changed[edited]


@pytest.mark.parametrize("files, line, why", [
    # the launch line sets it: the flag wins over every file
    ({"a.toml": BASE, "b.toml": FP8}, "uv run rl @ a.toml @ b.toml --trainer.model.impl hf",
     "set on the launch line"),
    # a file after the one to edit is not read here and may set it
    ({"a.toml": BASE + '\n[trainer.model]\nimpl = "hf"\n', "b.toml": FP8},
     "uv run rl @ a.toml @ b.toml @ $EXTRA_CFG", "an @ file after it was not read"),
    ({"a.toml": BASE, "b.toml": FP8}, "uv run rl @ a.toml @ b.toml @ ../outside.toml",
     "the last @ file that could take it was not read"),
])
def test_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 files: dict[str, str], line: str, why: str) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "outside.toml").write_text('[trainer.model]\nimpl = "custom"\n')
    _job(job, files, line)
    monkeypatch.chdir(job)
    report = api.check(["run.sh"], assume=ASSUME)
    assert "FP8D-PRIME-0001" in {f.rule_id for f in report.findings}
    out = diff_output(report, ["run.sh"], str(job), redact=False)
    assert out.edits == 0 and out.patch == ""
    assert "FP8D-PRIME-0001: config.prime_rl.trainer.model.impl" in _flat(out.notes)
    assert why in _flat(out.notes)


def test_a_file_outside_the_folder_named_is_not_edited(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # the job is the repository (its configs beside the scripts folder); the user names only
    # scripts/: the config that sets the key is outside what they named
    (tmp_path / ".git").mkdir()
    _job(tmp_path, {"configs/a.toml": BASE + '\n[trainer.model]\nimpl = "hf"\n',
                    "configs/b.toml": FP8}, "")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.sh").write_text(
        "#!/bin/bash\ncd ..\nuv run rl @ configs/a.toml @ configs/b.toml\n")
    monkeypatch.chdir(tmp_path)
    report = api.check(["scripts/run.sh"], assume=ASSUME)
    assert "FP8D-PRIME-0001" in {f.rule_id for f in report.findings}   # read from the top
    out = diff_output(report, ["scripts/run.sh"], str(tmp_path), redact=False)
    assert out.patch == ""
    assert "outside the job folder you named" in _flat(out.notes)
