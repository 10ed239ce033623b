"""``-o`` never writes over an input and is written atomically; closed, full or broken standard
streams and an early Ctrl-C end cleanly (issue 13, items 1 and 7).

The real command line runs, in-process where exit codes suffice and in a child process where
the state of its standard descriptors or a real signal matters.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostenv import writes_into_mode_500_folders

from preflight import cli
from preflight.outfile import OutputError, write_atomic

REPO = Path(__file__).resolve().parents[1]
DS = '{"train_batch_size": 8, "zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}\n'
ACC = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "ds.json").write_text(DS)
    (tmp_path / "job" / "acc.yaml").write_text(ACC)
    return tmp_path / "job"


def _exit(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _child(*argv: str, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "preflight", *argv], cwd=REPO, env=env,
                          text=True, timeout=120, **kw)


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "relative"])
def test_check_refuses_to_write_over_a_config(job: Path, capsys, how: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = {"same": job / "ds.json", "symlink": job / "link.json",
           "hardlink": job.parent / "hard.json", "relative": Path("job/./ds.json")}[how]
    if how == "symlink":
        out.symlink_to(job / "ds.json")
    if how == "hardlink":
        os.link(job / "ds.json", out)
    monkeypatch.chdir(job.parent)
    code = _exit(["check", str(job / "ds.json"), str(job / "acc.yaml"), "--no-smoke",
                  "-o", str(out)])
    assert code == 2
    assert "-o" in capsys.readouterr().err
    assert (job / "ds.json").read_text() == DS


def test_a_file_found_in_a_given_folder_is_an_input(job: Path, capsys) -> None:
    assert _exit(["report", str(job), "-o", str(job / "acc.yaml")]) == 2
    assert (job / "acc.yaml").read_text() == ACC
    # A file the folder scan does not read may be written (a previous report, say).
    assert _exit(["report", str(job), "-o", str(job / "report.md")]) == 0
    assert "# " in (job / "report.md").read_text()


def test_snapshot_being_replayed_is_not_overwritten(job: Path, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert _exit(["snapshot", str(job), "-o", str(snap)]) == 0
    before = snap.read_text()
    assert _exit(["snapshot", "--snapshot", str(snap), "-o", str(snap)]) == 2
    assert _exit(["check", "--snapshot", str(snap), "-o", str(snap), "--no-smoke"]) == 2
    assert snap.read_text() == before


def test_rule_files_are_not_overwritten(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    rule = rules / "r.yaml"
    rule.write_text("# a rule file\n")
    assert _exit(["check", "--no-smoke", "--rules", str(rules), "-o", str(rule)]) == 2
    assert _exit(["rules", "lint", str(rule), "-o", str(rule)]) == 2
    assert rule.read_text() == "# a rule file\n"


def test_cluster_refuses_an_input_as_output(job: Path) -> None:
    from preflight.cluster.cli import _options, build_parser

    args = build_parser().parse_args([str(job / "ds.json"), "-o", str(job / "ds.json")])
    with pytest.raises(OutputError):
        _options(args)


def test_output_through_a_symlink_is_refused_and_a_file_keeps_its_mode(job: Path,
                                                                      tmp_path: Path) -> None:
    # issue 21 item 3: a symlinked -o used to be followed (the link's target replaced); now it
    # is refused, and a regular file replaced keeps its mode
    real = tmp_path / "real.txt"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert _exit(["check", str(job), "--no-smoke", "--fail-on", "never", "-o", str(link)]) == 2
    assert link.is_symlink() and real.read_text() == "old"
    assert _exit(["check", str(job), "--no-smoke", "--fail-on", "never", "-o", str(real)]) == 0
    assert "fp8-doctor" in real.read_text() and (real.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job", "link.txt", "real.txt"]


def test_an_interrupted_write_leaves_the_old_file_and_no_temp(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    target = tmp_path / "report.txt"
    target.write_text("previous report\n")

    def interrupted(_fd: int) -> None:   # Ctrl-C arriving while the data is flushed
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), "new report\n" * 1000)
    assert target.read_text() == "previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_unwritable_output_folder_is_exit_2_without_leftovers(job: Path, tmp_path: Path
                                                              ) -> None:
    if writes_into_mode_500_folders():
        target = "/proc/version"   # root ignores folder modes; /proc refuses everyone
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = str(locked / "r.txt")
    assert _exit(["check", str(job), "--no-smoke", "-o", target]) == 2


def test_closed_stdout_is_exit_2_without_traceback(job: Path) -> None:
    proc = _child("check", str(job), "--no-smoke", capture_output=False,
                  stdout=None, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "stdout" in proc.stderr


def test_full_stdout_is_exit_2_without_traceback(job: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = _child("check", str(job), "--no-smoke", stdout=full, stderr=subprocess.PIPE)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "stdout" in proc.stderr


def test_closed_stderr_keeps_progress_out_of_the_json(job: Path) -> None:
    proc = _child("check", str(job), "--no-smoke", "--format", "json", stdout=subprocess.PIPE,
                  preexec_fn=lambda: os.close(2))
    assert proc.returncode in (0, 1)
    assert json.loads(proc.stdout)["tool"]["name"] == "fp8-doctor"


def test_pipe_closed_by_the_reader_keeps_the_exit_code(job: Path) -> None:
    with subprocess.Popen([sys.executable, "-m", "preflight", "check", str(job), "--no-smoke",
                           "--format", "json", "--fail-on", "info"], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) in (0, 1) and "Traceback" not in err


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.08, 0.2])
def test_early_ctrl_c_exits_130_without_traceback(job: Path, delay: float) -> None:
    # Ctrl-C while the package and its dataclasses load (CPython 3.11 then ended the process
    # by SIGINT), or while probing. "-X importtime" reports each finished import on stderr: the
    # signal is sent `delay` seconds after preflight.cli has loaded, whatever the machine's speed
    # (before that, the interpreter's own start-up, is not ours to handle).
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "preflight", "check",
                             str(job), "--no-smoke"],
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.rstrip().endswith("| preflight.cli"):
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    if proc.returncode in (0, 1):
        pytest.skip("the run finished before the signal (a fast machine)")
    assert proc.returncode == 130, err
    # (stdout may hold the whole report: a signal after it was written still exits 130)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_output_to_dev_full_is_exit_2(job: Path, capsys) -> None:
    assert _exit(["check", str(job), "--no-smoke", "-o", "/dev/full"]) == 2
    assert "/dev/full" in capsys.readouterr().err


def test_the_clis_exit_codes_are_the_reports() -> None:
    # cli.py keeps its module imports to the stdlib (Ctrl-C while loading), so it restates them.
    from preflight import report

    assert (cli.EXIT_USAGE, cli.EXIT_INTERNAL) == (report.EXIT_USAGE, report.EXIT_INTERNAL)


def test_every_suffix_the_folder_scan_reads_is_protected() -> None:
    # outfile keeps its own list (no dependency on the reader's private scan): a superset.
    from preflight.jobs.scan import SCAN_DEPTH, SCAN_EXT
    from preflight.outfile import _CONFIG_SUFFIXES, _FOLDER_DEPTH

    assert set(SCAN_EXT) <= set(_CONFIG_SUFFIXES)
    assert _FOLDER_DEPTH > SCAN_DEPTH      # and at least as deep as the reader goes


def test_a_config_deep_in_a_given_folder_is_an_input(tmp_path: Path) -> None:
    deep = tmp_path / "job" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "ds.json").write_text(DS)
    assert _exit(["check", str(tmp_path / "job"), "--no-smoke",
                  "-o", str(deep / "ds.json")]) == 2
    assert (deep / "ds.json").read_text() == DS


def test_multi_rank_mode_with_closed_stdout_is_exit_2(job: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "preflight.dist", str(job)], cwd=REPO, env=env,
                          text=True, timeout=120, stderr=subprocess.PIPE,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "stdout" in proc.stderr
