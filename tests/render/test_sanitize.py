"""No control character but newline and tab reaches any output (issue 13, item 6).

Hostile bytes are planted where the issue found them: a config value and key, a config file's
name, a GPU name and a package version (through a snapshot, as a node would report them), and a
smoke child's error; every format of the real command line is read back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight import cli
from preflight.commands.smoke import render as smoke_render
from preflight.render.sanitize import clean_document, clean_text

OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@given(st.text())
def test_clean_text_leaves_no_control_character_and_is_idempotent(value: str) -> None:
    out = clean_text(value)
    assert not BAD.search(out)
    assert clean_text(out) == out
    if not BAD.search(value):
        assert out == value            # ordinary text, newlines and tabs are untouched


def test_escapes_are_visible_and_named() -> None:
    assert clean_text("a\x1b[31mb\rc\x07\x9bd\u202ee\n\tf") == \
        "a\\x1b[31mb\\x0dc\\x07\\x9bd\\u202ee\n\tf"


def test_clean_document_reaches_keys_and_deep_values() -> None:
    deep: object = "x\x1by"
    for _ in range(5000):
        deep = [deep]
    doc = clean_document({"k\x1b": {"v": ["a\rb", 1, None, deep]}})
    assert list(doc) == ["k\\x1b"] and doc["k\\x1b"]["v"][:3] == ["a\\x0db", 1, None]


@pytest.fixture
def hostile_job(tmp_path: Path) -> Path:
    job = tmp_path / f"job{CLEAR}"
    job.mkdir()
    (job / f"acc{OSC_TITLE}[bold red]fake.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\nmixed_precision: fp8\n"
        f"distributed_type: \"MULTI_GPU{CLEAR}\\r[bold red]fake[/]\"\n"
        f"\"key{OSC_TITLE}\": 1\n")
    return job


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
@pytest.mark.parametrize("redact", [True, False])
def test_config_values_keys_and_file_names(hostile_job: Path, capsys, fmt: str,
                                           redact: bool) -> None:
    argv = ["check", str(hostile_job), "--no-smoke", "--format", fmt, "--color", "never",
            "--fail-on", "never"] + ([] if redact else ["--no-redact"])
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert not BAD.search(out), repr(BAD.search(out))
    assert not BAD.search(err)
    if fmt == "text" and not redact:
        # Rich markup in a file name is shown as written, the escapes visibly.
        assert "acc\\x1b]0;pwned\\x07[bold red]fake.yaml" in out


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_gpu_name_and_package_version_from_a_snapshot(tmp_path: Path, capsys, fmt: str) -> None:
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"schema_version": "1.0", "facts": {
        "gpu.count": 1, "gpu.names": [f"NVIDIA H100{OSC_TITLE}"], "gpu.name": f"H100{CLEAR}",
        "gpu.driver": f"550\r{CLEAR}", "pkg.torch.version": f"2.5.1{CLEAR}",
        "pkg.transformer_engine.version": "1.11\r\x1b[1A"}}))
    cli.main(["check", "--snapshot", str(snap), "--format", fmt, "--color", "never",
              "--fail-on", "never", "--no-redact"])
    out = capsys.readouterr().out
    assert not BAD.search(out)
    if fmt == "text":
        assert "NVIDIA H100\\x1b]0;pwned\\x07" in out and "2.5.1\\x1b[2J" in out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_smoke_error_text(fmt: str) -> None:
    facts = {"smoke.ran": True, "smoke.status": "crash", "smoke.device": "cuda:0",
             "smoke.duration_s": 1.0, "smoke.error": f"RuntimeError: boom{CLEAR}{OSC_TITLE}"}
    out = smoke_render(facts, {}, fmt)
    assert not BAD.search(out)
    assert "boom" in out


def test_error_messages_on_stderr(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["check", str(tmp_path / f"missing{OSC_TITLE}.yaml")])
    err = capsys.readouterr().err
    assert "missing" in err and not BAD.search(err)
