"""Bad files give a problem naming the file (and line), fast, never a traceback or a hang."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from cputime import cpu_seconds

from preflight.jobs.read import MAX_BYTES, read_paths

BILLION_LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    + ["mixed_precision: fp8", ""])

# (file name, content, expected words in the message, expected line or None)
TABLE = [
    ("empty.yaml", b"", "empty file", None),
    ("blank.json", b"  \n\n", "empty file", None),
    ("comments_only.yaml", b"# nothing here\n", "empty document", None),
    ("truncated.json", b'{\n  "zero_optimization": {\n    "stage": 3,\n', "invalid JSON", 4),
    ("truncated.yaml", b"mixed_precision: fp8\nfp8_config:\n  backend: [TE,\n", "invalid YAML",
     None),
    ("truncated.toml", b"[model]\nname = \"llama3\nflavor = 1\n", "invalid TOML", 2),
    ("binary.yaml", b"mixed_precision: fp8\n\x00\x01\x02\xff", "binary", 2),
    ("latin1.yaml", b"mixed_precision: fp8\nname: caf\xe9\n", "not UTF-8", 2),
    ("dup.yaml", b"mixed_precision: fp8\nnum_processes: 8\nmixed_precision: bf16\n",
     "'mixed_precision' is set twice (line 1 and line 3)", 3),   # a warning: PyYAML keeps the last
    ("dup.json", b'{\n  "bf16": {"enabled": true},\n  "zero_optimization": {"stage": 2},\n'
                 b'  "bf16": {"enabled": false}\n}\n', "duplicate key 'bf16'", 4),
    ("dup_nested.json", b'{"zero_optimization": {\n "stage": 2,\n "stage": 3}}', "duplicate key",
     3),
    ("python_tag.yaml", b"mixed_precision: !!python/object/apply:os.system ['true']\n",
     "invalid YAML", 1),
    ("laughs.yaml", BILLION_LAUGHS.encode(), "expands to more than", None),
    ("recursive.yaml", b"a: &a [1, *a]\nmixed_precision: fp8\n", "invalid YAML", None),
    ("list.yaml", b"- mixed_precision: fp8\n- num_processes: 8\n", "not a mapping", 1),
    ("scalar.json", b"42\n", "not a mapping", 1),
    ("unknown_kind.yaml", b"foo: 1\nbar: [1, 2]\n", "cannot tell which framework", 1),
    ("notes.txt", b"just some notes about training\n", "cannot tell which framework", None),
    ("deep.yaml", b"a: " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nested", 1),
    ("deep_dash.yaml", b"- " * 50_000 + b"1\n", "deeper", 1),
    ("deep.json", b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "nested too deeply", None),
    ("deep.toml", b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply", None),
    ("many_items.yaml", b"a: [" + b"1," * 20_000 + b"1]\n", "far larger", None),
    ("bad_link.yaml", b"distributed_type: DEEPSPEED\ndeepspeed_config:\n"
                      b"  deepspeed_config_file: nowhere/ds.json\n", "does not exist", 3),
    # int() refuses > 4,300 digits: each parser raised a bare ValueError (audit 4, bug 3)
    ("bigint.json", b'{"zero_optimization":\n {"stage": ' + b"1" * 5000 + b"}}", "5,000 digits",
     2),
    ("bigint.toml", b'[model]\nname = "llama3"\n[training]\nseq_len = ' + b"1" * 5000 + b"\n",
     "5,000 digits", 4),
    ("bigint.yaml", b"mixed_precision: fp8\nnum_processes: " + b"1" * 5000 + b"\n",
     "5,000 digits", 2),
]


def _check(path: Path, words: str, line: int | None, *, kind: str | None = None) -> None:
    start, cpu = time.perf_counter(), cpu_seconds()
    read = read_paths([str(path)], kind=kind)
    spent, elapsed = cpu_seconds() - cpu, time.perf_counter() - start
    # CPU time bounds the work whatever the machine's load (tests/cputime.py); the wall clock,
    # far above the normal time, catches a read that blocks (a FIFO opened for reading waits
    # forever and burns no CPU).
    assert spent < 2.0, f"{path.name} took {spent:.2f} s of CPU"
    assert elapsed < 60, f"{path.name} took {elapsed:.1f} s"
    assert read.problems, f"{path.name}: no problem reported"
    problem = read.problems[0]
    assert problem.path == str(path)
    assert words in problem.message, problem.message
    if line is not None:
        assert problem.line == line, (problem.line, problem.message)


@pytest.mark.parametrize("name,content,words,line", TABLE, ids=[t[0] for t in TABLE])
def test_bad_file_gives_a_problem(tmp_path: Path, name: str, content: bytes, words: str,
                                  line: int | None) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    _check(path, words, line)


def test_very_large_file_is_refused_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:       # 21 MB, written sparsely: fast, never committed
        fh.truncate(21 * 1024 * 1024)
    assert os.path.getsize(path) > 20 * 1024 * 1024 > MAX_BYTES
    _check(path, "over the", None)


def test_just_under_the_cap_is_still_fast(tmp_path: Path) -> None:
    body = "".join(f"  key_{i}: value_{i}\n" for i in range(8_000))
    path = tmp_path / "large_but_allowed.yaml"
    path.write_text("mixed_precision: fp8\ndistributed_type: MULTI_GPU\nfsdp_config:\n" + body)
    assert os.path.getsize(path) < MAX_BYTES
    start = cpu_seconds()
    read = read_paths([str(path)])
    assert cpu_seconds() - start < 2.0     # CPU time: not stretched by load (tests/cputime.py)
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)        # a plain open().read() would block forever
    _check(fifo, "not a regular file", None)


@pytest.mark.parametrize("kind,name,content,words", [
    ("deepspeed", "acc.yaml", b"mixed_precision: fp8\ndistributed_type: MULTI_GPU\n",
     "invalid JSON"),
    ("deepspeed", "foundry.json", b'{"model": {"name": "mpt_causal_lm"}, "precision": "amp_fp8",'
                                  b' "max_duration": "1ba", "train_loader": {}}', "looks like"),
    ("torchtitan", "ds.json", b'{"zero_optimization": {"stage": 2}}', "invalid TOML"),
    ("accelerate", "lit.yaml", b"trainer:\n  precision: transformer-engine\n  devices: 8\n"
                               b"seed_everything: 1\n", "looks like a lightning"),
])
def test_wrong_kind_forced(tmp_path: Path, kind: str, name: str, content: bytes,
                           words: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    _check(path, words, None, kind=kind)


def test_unknown_kind_name_is_a_problem() -> None:
    read = read_paths(["x.yaml"], kind="keras")
    assert read.problems and "unknown config kind" in read.problems[0].message


def test_missing_path_is_a_problem(tmp_path: Path) -> None:
    read = read_paths([str(tmp_path / "nope.yaml")])
    assert read.problems[0].message == "no such file or folder"
    assert read.files == []


def test_non_path_input_is_a_problem_not_a_crash() -> None:
    read = read_paths([None], kind=None)  # type: ignore[list-item]
    assert read.problems and read.files == []


@pytest.mark.parametrize("name,content,words,line", [
    # audit 4 (minor): each gave a generic or misleading message
    ("ds.yaml", b'{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 1}\n',
     "looks like a deepspeed config, but deepspeed reads JSON only, not YAML", 1),
    ("utf16.json", '{"zero_optimization": {"stage": 2}}'.encode("utf-16"), "UTF-16", 1),
    ("utf16_nobom.yaml", "mixed_precision: fp8\n".encode("utf-16-le"), "UTF-16", 1),
])
def test_clear_messages(tmp_path: Path, name: str, content: bytes, words: str,
                        line: int | None) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    _check(path, words, line)


def test_crlf_launch_script_is_read_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "launch.sh"
    path.write_bytes(b"#!/bin/bash\r\naccelerate launch \\\r\n  --mixed_precision fp8 \\\r\n"
                     b"  --fp8_backend TE train.py\r\n")
    read = read_paths([str(path)])
    assert [(p.line, "CRLF" in p.message) for p in read.problems] == [(1, True)]
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert read.facts["config.accelerate.fp8_config.backend"] == "TE"


def test_crlf_argument_file_is_fine(tmp_path: Path) -> None:
    # argparse reads @file lines with universal newlines: no problem there
    path = tmp_path / "flags.args"
    path.write_bytes(b"--fp8-format\r\nhybrid\r\n--hidden-size\r\n4096\r\n")
    read = read_paths([str(path)])
    assert read.problems == []
    assert read.facts["config.megatron.fp8_format"] == "hybrid"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_broken_symlink_says_so(tmp_path: Path) -> None:
    link = tmp_path / "acc.yaml"
    link.symlink_to(tmp_path / "gone.yaml")
    _check(link, "broken symbolic link", None)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    _check(tmp_path / "a.yaml", "loop of symbolic links", None)


@pytest.mark.parametrize("exc", [RecursionError("maximum recursion depth exceeded"),
                                 KeyError("x")])
def test_a_python_reader_limit_is_a_warning_naming_the_script_not_an_unreadable_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    """eval16: a valid notebook whose `global` counter made the Python reader recurse was an
    error "nested too deeply": the file is valid, the limit is the reader's."""
    from preflight.jobs import pyjob, read

    script = tmp_path / "train.py"
    script.write_text("import torch\n")

    def boom(*_: object, **__: object) -> object:
        raise exc

    monkeypatch.setattr(pyjob, "read", boom)
    _, out = read.read_file(str(script))
    (problem,) = out.problems
    assert problem.path == str(script) and problem.level == "warning"
    assert type(exc).__name__ in problem.message
    assert not out.facts
