"""The write boundary (issue 21 item 3, docs/reliability.md "Write boundary"): ``-o`` and
``--write-baseline`` write only a regular file that is not any input read in the run, never
through a symbolic link and never to a FIFO.

Before, both wrote over inputs that were not on the command line (the pyproject.toml read for
``[tool.fp8-doctor]``, a DeepSpeed JSON a YAML names, a sourced script, a pack's rule file, the
baseline itself), followed symlinks (a committed ``fp8-baseline.json`` link sent the baseline
into a dotfile) and ``--write-baseline`` to a FIFO hung. The real command line runs: in-process
where an exit code suffices, in a child where the old code would hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from preflight import cli

REPO = Path(__file__).resolve().parents[1]
DS = '{"train_batch_size": 8, "zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}\n'
ACC = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\n"
       "deepspeed_config:\n  deepspeed_config_file: ds.json\nnum_processes: 8\n")
RULE = """\
schema_version: "1.0"
id: ACME-0001
title: Team rule
severity: warning
confidence: stated
when: {fact: intent.fp8, op: eq, value: true}
message: our policy
fix: {text: "Use bf16."}
references:
  - {type: DOCS, url: "https://github.com/deepspeedai/DeepSpeed/blob/v0.16.4/README.md"}
"""


@pytest.fixture
def job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    (job / "pack").mkdir(parents=True)
    (job / "ds.json").write_text(DS)
    (job / "acc.yaml").write_text(ACC)
    (job / "env.sh").write_text("PREC=bf16\n")
    (job / "run.sh").write_text("#!/bin/bash\nsource ./env.sh\n"
                                "accelerate launch --config_file acc.yaml t.py\n")
    (job / "pack" / "ACME-0001.yaml").write_text(RULE)
    (job / "pyproject.toml").write_text('[tool.fp8-doctor]\nrules = ["pack"]\n'
                                        'baseline = "fp8-baseline.json"\nfail-on = "never"\n')
    (job / "fp8-baseline.json").write_text('{"schema": "fp8-doctor-baseline/1", "findings": []}\n')
    return job


def _exit(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


# inputs this run finds while it reads (none of them is on the command line)
FOUND = ["pyproject.toml", "ds.json", "acc.yaml", "env.sh", "pack/ACME-0001.yaml",
         "fp8-baseline.json"]


@pytest.mark.parametrize("flag", ["-o", "--write-baseline"])
@pytest.mark.parametrize("name", FOUND)
def test_no_input_found_during_the_run_is_written_over(job: Path, name: str, flag: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.read_bytes() for p in job.rglob("*") if p.is_file()}
    assert _exit(["check", "--no-smoke", str(job / "run.sh"), flag, str(job / name)]) == 2
    err = capsys.readouterr().err
    assert flag in err and name.rsplit("/", 1)[-1] in err
    assert {p: p.read_bytes() for p in job.rglob("*") if p.is_file()} == before


def test_a_hard_link_to_an_input_is_the_input(job: Path) -> None:
    os.link(job / "pyproject.toml", job.parent / "report.txt")
    assert _exit(["check", "--no-smoke", str(job / "run.sh"),
                  "-o", str(job.parent / "report.txt")]) == 2
    assert "[tool.fp8-doctor]" in (job / "pyproject.toml").read_text()


@pytest.mark.parametrize("flag", ["-o", "--write-baseline"])
def test_a_symlink_is_never_written_through(job: Path, tmp_path: Path, flag: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # a pull request ships the output's name as a link to a dotfile outside the workspace
    dotfile = tmp_path / ".bashrc"
    dotfile.write_text("alias ls='ls -F'\n")
    link = job / "fp8-doctor.sarif"
    link.symlink_to(dotfile)
    assert _exit(["check", "--no-smoke", str(job / "ds.json"), flag, str(link)]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "probing" not in err       # refused before any work
    assert dotfile.read_text() == "alias ls='ls -F'\n" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".bashrc", "job"]


@pytest.mark.parametrize("flag", ["-o", "--write-baseline"])
def test_a_folder_the_repository_ships_as_a_symlink_is_not_written_through(
        job: Path, tmp_path: Path, flag: str, monkeypatch, capsys) -> None:
    """Red team: the last component was never followed, its folders were: a pull request that
    ships ``reports`` as a link to ``~/.ssh`` turned a workflow's ``-o reports/x`` into a write
    there. A relative output's folders below the current one must not be links."""
    secret_dir = tmp_path / "dot-ssh"
    secret_dir.mkdir()
    (secret_dir / "authorized_keys").write_text("ssh-ed25519 AAAA mine\n")
    (job / "reports").symlink_to(secret_dir)
    monkeypatch.chdir(job)
    for name in ("reports/authorized_keys", "reports/new.sarif", "./reports/../reports/x"):
        assert _exit(["check", "--no-smoke", "ds.json", flag, name]) == 2, name
        assert "symbolic link" in capsys.readouterr().err
    assert sorted(p.name for p in secret_dir.iterdir()) == ["authorized_keys"]
    assert (secret_dir / "authorized_keys").read_text() == "ssh-ed25519 AAAA mine\n"
    (job / "real").mkdir()
    assert _exit(["check", "--no-smoke", "ds.json", flag, "real/out.txt"]) in (0, 1)
    assert (job / "real" / "out.txt").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("flag", ["-o", "--write-baseline"])
def test_a_fifo_is_refused_not_waited_on(job: Path, flag: str) -> None:
    fifo = job.parent / "out.fifo"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "preflight", "check", "--no-smoke",
                           str(job / "ds.json"), flag, str(fifo)], capture_output=True,
                          text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and "FIFO" in proc.stderr and "Traceback" not in proc.stderr


def test_a_symlink_planted_while_writing_is_refused_not_followed(tmp_path: Path,
                                                                   monkeypatch) -> None:
    # the rename replaces the name itself: a link that appears while the report is written
    # (after the first check) is replaced by the report, its target untouched
    from preflight import outfile

    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    out = tmp_path / "report.txt"
    real_fsync = os.fsync

    def plant(fd: int) -> None:
        real_fsync(fd)
        if not out.is_symlink():
            out.symlink_to(victim)

    monkeypatch.setattr(os, "fsync", plant)
    with pytest.raises(outfile.OutputError, match="symbolic link"):
        outfile.write_atomic(str(out), "report\n")     # caught by the check before the rename
    assert victim.read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt", "victim"]


def test_a_new_output_and_a_replaced_one_are_still_written(job: Path) -> None:
    out = job.parent / "report.json"
    assert _exit(["check", "--no-smoke", str(job / "run.sh"), "--format", "json",
                  "-o", str(out)]) == 0
    out.chmod(0o640)
    assert _exit(["check", "--no-smoke", str(job / "run.sh"), "--format", "json",
                  "-o", str(out), "--write-baseline", str(job.parent / "b.json")]) == 0
    assert (out.stat().st_mode & 0o777) == 0o640 and '"findings"' in out.read_text()
    assert '"schema"' in (job.parent / "b.json").read_text()
