"""FP8D-CFG-NOT-CONFIG on a script the launch line runs: the user gave only the folder, so the
title must not speak of "a path given" (acceptance audit of issue 24, note on issue 22 item 5),
and it must not call the script broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import api


def test_a_script_the_launch_line_runs_is_not_called_a_path_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\naccelerate launch --mixed_precision fp8 "
                                     "train.py\n")
    (tmp_path / "train.py").write_text("import torch\nprint(torch.ones(1))\n")
    monkeypatch.chdir(tmp_path)
    report = api.check(["."], assume={"gpu": "H100"})
    hits = [f for f in report.findings if f.rule_id == "FP8D-CFG-NOT-CONFIG"]
    assert len(hits) == 1 and "train.py" in str(hits[0].location)
    title = hits[0].title.lower()
    assert "given" not in title and "broken" not in title and "invalid" not in title
    assert "fp8-doctor reads" in title
