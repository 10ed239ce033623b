"""Usage errors exit 2, with the message naming the input (issue 21 item 10).

Each case came out as exit 0, 1 or 3 before: a plan of a node without GPUs was judged, a
compute capability written as a TOML number (``99``, read as sm_99) was planned, a
``pyproject.toml`` that is a FIFO or ``/dev/zero`` was skipped in silence, a baseline with NaN
was accepted and one with a 5,000-digit number was an internal error, and a pack's
``fp8d-acc-0001`` passed for the bundled FP8D-ACC-0001. The real command line runs, in-process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight import cli

DS = '{"train_batch_size": 8, "zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}\n'
BUNDLED = Path(__file__).resolve().parents[2] / "rules" / "accelerate" / "FP8D-ACC-0001.yaml"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "ds.json").write_text(DS)
    return folder


def _usage(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as err:
        cli.main(["check", "--no-smoke", *argv])
    out = capsys.readouterr()
    assert err.value.code == 2, out.err
    assert "Traceback" not in out.err and out.out == ""
    return out.err


@pytest.mark.parametrize("argv", [["--assume", "gpu.count=0"],
                                  ["--assume", "gpu=H100", "--assume", "gpu.count=00"]])
def test_a_plan_without_gpus(job: Path, capsys: pytest.CaptureFixture[str],
                             argv: list[str]) -> None:
    assert "gpu.count" in _usage(capsys, str(job), *argv)


@pytest.mark.parametrize("table, words", [
    ('assume = {"gpu.cc" = 99}', "gpu.cc"),                 # a TOML number: sm_99?
    ('assume = {"pkg.torch" = 2.10}', "pkg.torch"),         # 2.10 reads as 2.1
    ('assume = {"gpu.cc" = "99.9"}', "gpu.cc"),             # what --assume refuses
    ('assume = {"gpu.count" = 0}', "gpu.count"),
    ('assume = {"intent.zero_stage" = inf}', "intent.zero_stage"),
])
def test_a_pyproject_assume_the_flag_would_refuse(job: Path, capsys: pytest.CaptureFixture[str],
                                                  table: str, words: str) -> None:
    (job / "pyproject.toml").write_text(f"[tool.fp8-doctor]\n{table}\n")
    err = _usage(capsys, str(job))
    assert str(job / "pyproject.toml") in err and words in err


def test_numbers_stay_fine_where_the_fact_is_a_number(job: Path) -> None:
    (job / "pyproject.toml").write_text('[tool.fp8-doctor]\nfail-on = "never"\n'
                                        'assume = {"gpu" = "H100", "gpu.count" = 8}\n')
    assert cli.main(["check", "--no-smoke", str(job)]) == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("what", ["fifo", "dev-zero", "dev-null"])
def test_a_pyproject_that_is_not_a_regular_file(job: Path, capsys: pytest.CaptureFixture[str],
                                                what: str) -> None:
    path = job / "pyproject.toml"
    if what == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero" if what == "dev-zero" else "/dev/null")
    err = _usage(capsys, str(job / "ds.json"))
    assert str(path) in err and "regular file" in err


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "9" * 5000, "-" + "1" * 4400])
def test_a_baseline_with_a_number_json_has_not(job: Path, capsys: pytest.CaptureFixture[str],
                                               value: str) -> None:
    base = job.parent / "b.json"
    base.write_text('{"schema": "fp8-doctor-baseline/1", "findings": [], "x": ' + value + "}")
    err = _usage(capsys, str(job), "--baseline", str(base))
    assert str(base) in err


@pytest.mark.parametrize("path", ["/dev/zero", "folder"])
def test_a_baseline_that_is_not_a_regular_file(job: Path, capsys: pytest.CaptureFixture[str],
                                               path: str) -> None:
    target = str(job) if path == "folder" else path
    assert target in _usage(capsys, str(job), "--baseline", target)


@pytest.mark.parametrize("spelling", ["fp8d-acc-0001", "Fp8D-Acc-0001"])
def test_a_pack_id_equal_to_a_bundled_one_in_another_case(
        job: Path, capsys: pytest.CaptureFixture[str], spelling: str) -> None:
    pack = job.parent / "pack"
    pack.mkdir()
    (pack / "mine.yaml").write_text(BUNDLED.read_text().replace("id: FP8D-ACC-0001",
                                                                f"id: {spelling}", 1))
    err = _usage(capsys, str(job), "--rules", str(pack))
    assert spelling in err and "FP8D-ACC-0001" in err


def test_two_pack_files_with_one_id_in_two_cases(job: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pack = job.parent / "pack"
    pack.mkdir()
    text = BUNDLED.read_text()
    (pack / "a.yaml").write_text(text.replace("id: FP8D-ACC-0001", "id: ACME-0001", 1))
    (pack / "b.yaml").write_text(text.replace("id: FP8D-ACC-0001", "id: acme-0001", 1))
    err = _usage(capsys, str(job), "--rules", str(pack), "--no-bundled-rules")
    assert "duplicate rule id 'acme-0001'" in err


@pytest.mark.parametrize("argv", [
    ["check", "--no-smoke", "-o", ""], ["check", "--no-smoke", "--write-baseline", " "],
    ["snapshot", "-o", ""], ["rules", "list", "-o", ""], ["smoke", "-o", ""],
    ["plan", "-o", ""], ["speedup", "--chart", ""], ["report", "-o", ""],
])
def test_an_empty_file_name_is_a_usage_error(argv: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Red team: ``-o ""`` fell back to stdout; every FILE a command writes must be named."""
    with pytest.raises(SystemExit) as err:
        cli.main(argv)
    out = capsys.readouterr()
    assert err.value.code == 2 and "empty file name" in out.err and out.out == ""


@pytest.mark.parametrize(("argv", "where"), [
    (["explain", "FP8D-ACC-0003"], "rules show ID"),
    (["report", "--redact", "."], "--no-redact"),
    (["check", "--no-smoke", "--json"], "--format json"),
])
def test_what_a_newcomer_types_gets_a_tip_to_the_real_spelling(
        argv: list[str], where: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A newcomer session: `explain ID` (as other linters spell it) and `report --redact` were
    a bare "invalid choice" / "unrecognized arguments"; the usage error now says where it is."""
    with pytest.raises(SystemExit) as err:
        cli.main(argv)
    out = capsys.readouterr()
    assert err.value.code == 2 and out.out == ""
    tip = [line for line in out.err.splitlines() if line.strip().startswith("tip:")]
    assert len(tip) == 1 and where in tip[0]


def test_an_unrelated_usage_error_has_no_tip(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        cli.main(["check", "--no-smoke", "--nope"])
    assert err.value.code == 2 and "tip:" not in capsys.readouterr().err
