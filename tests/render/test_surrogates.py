"""Lone surrogates from a config reach no writer raw (red team, issue 21 item 5).

A JSON config may spell ``"\\ud800"``: Python reads it as a lone surrogate, which no UTF-8 writer
takes. ``-o`` of a JSON or Markdown report was an internal error (exit 3), stdout showed ``?``.
Every format now shows it as the escape ``\\ud800``, like a control character.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.cli import main
from preflight.outfile import write_atomic

FORMATS = ("text", "json", "markdown", "sarif", "junit")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_a_config_is_an_escape_in_every_format(
        tmp_path: Path, fmt: str, monkeypatch, capsys) -> None:
    (tmp_path / "ds.json").write_text(
        '{"fp16": {"enabled": true}, "x\\ud800": "\\udfff\\ud800y", '
        '"zero_optimization": {"stage": 3}}')
    (tmp_path / "acc.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: fp8\n"
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-smoke", "-v", "--format", fmt, "-o", "out", "acc.yaml"]) == 1
    text = (tmp_path / "out").read_bytes().decode("utf-8")   # valid UTF-8
    if fmt == "json":
        json.loads(text)
    assert main(["check", "--no-smoke", "-v", "--format", fmt, "acc.yaml"]) == 1
    out = capsys.readouterr().out
    assert not any("\ud800" <= c <= "\udfff" for c in out)


def test_the_writer_never_fails_on_a_lone_surrogate(tmp_path: Path) -> None:
    write_atomic(str(tmp_path / "r.txt"), "a\ud800b")
    assert (tmp_path / "r.txt").read_bytes() == b"a\\ud800b"
