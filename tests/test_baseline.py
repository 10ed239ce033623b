"""preflight.baseline: fingerprints survive line moves, not changed values; bad files are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.baseline import BaselineError, fingerprint, read_baseline, write_baseline
from preflight.findings import Evidence, Finding, Fix, Location, Severity


def _finding(line: int, value: object = True, path: str = "job/ds.json") -> Finding:
    return Finding("FP8D-DS-0002", Severity.ERROR, "t", "m", Fix("f"),
                   evidence=(Evidence("config.deepspeed.fp16.enabled", value, f"{path}:{line}"),),
                   location=Location(path, line))


def test_a_line_move_keeps_the_fingerprint_a_new_value_or_file_does_not(tmp_path: Path) -> None:
    root = str(tmp_path)
    assert fingerprint(_finding(3), root) == fingerprint(_finding(30), root)
    assert fingerprint(_finding(3), root) != fingerprint(_finding(3, value="auto"), root)
    assert fingerprint(_finding(3), root) != fingerprint(_finding(3, path="other/ds.json"), root)


def test_paths_are_relative_to_the_baseline_so_it_survives_a_checkout_move(tmp_path: Path
                                                                           ) -> None:
    for checkout in ("a", "b"):
        (tmp_path / checkout).mkdir()
    f_a = _finding(3, path=str(tmp_path / "a" / "job" / "ds.json"))
    f_b = _finding(3, path=str(tmp_path / "b" / "job" / "ds.json"))
    write_baseline([f_a], str(tmp_path / "a" / "base.json"), [])
    base_b = tmp_path / "b" / "base.json"
    base_b.write_bytes((tmp_path / "a" / "base.json").read_bytes())
    assert read_baseline(str(base_b)).split([f_b]) == ((), (f_b,))
    assert json.loads(base_b.read_text())["findings"][0]["location"] == "job/ds.json"


def test_a_baseline_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "b.json"
    os.mkfifo(fifo)
    with pytest.raises(BaselineError, match="not a regular file"):
        read_baseline(str(fifo))
