"""Hostile snapshots are usage errors naming the file, and non-finite facts never become bare
NaN in JSON (issue 13, item 8). Real files, the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import cli
from preflight.facts import Facts, Unknown, facts_to_json
from preflight.render.sanitize import clean_document, finite_document
from preflight.snapshot import SnapshotError, load


def _exit(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


HUGE = "9" * 5000


@pytest.mark.parametrize("body", [
    '{"schema_version": "1.0", "facts": {}, "findings": 5}',
    '{"schema_version": "1.0", "facts": {}, "findings": "x"}',
    '{"schema_version": "1.0", "facts": {}, "findings": {"a": 1}}',
    '{"schema_version": "1.0", "facts": {"gpu.count": %s}}' % HUGE,
    '{"schema_version": %s, "facts": {}}' % HUGE,
    '{"schema_version": "1.0", "facts": {}, "findings": [5]}',
])
@pytest.mark.parametrize("command", ["check", "snapshot", "report"])
def test_wrong_types_and_huge_numbers_are_exit_2_naming_the_file(tmp_path: Path, capsys,
                                                                 body: str, command: str) -> None:
    snap = tmp_path / "bad.json"
    snap.write_text(body)
    assert _exit([command, "--snapshot", str(snap)]) == 2
    err = capsys.readouterr().err
    assert str(snap) in err and "internal error" not in err


def _strict(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_nan_and_infinity_facts_never_reach_json_bare(tmp_path: Path, capsys, fmt: str) -> None:
    snap = tmp_path / "s.json"
    snap.write_text('{"schema_version": "1.0", "facts": {"x.nan": NaN, "x.inf": Infinity, '
                    '"x.list": [-Infinity, 1.5], "gpu.count": NaN}}')
    assert _exit(["check", "--snapshot", str(snap), "--format", fmt, "--fail-on", "never"]) == 0
    doc = _strict(capsys.readouterr().out)
    if fmt == "json":
        assert doc["facts"]["x.nan"] == "nan" and doc["facts"]["x.list"] == ["-inf", 1.5]


def test_a_config_nan_survives_a_snapshot_as_valid_json(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_batch_size": 8, "optimizer": {"params": {"lr": NaN}}}')
    out = tmp_path / "snap.json"
    assert _exit(["snapshot", str(cfg), "-o", str(out)]) == 0
    _strict(out.read_text())
    assert _exit(["check", "--snapshot", str(out), "--format", "json", "--fail-on", "never"]) == 0
    _strict(capsys.readouterr().out)


def test_finite_documents_keep_everything_else() -> None:
    doc = {"a": [1, 2.5, "x\x1b", None, True, {"b": float("nan")}]}
    assert finite_document(doc) == {"a": [1, 2.5, "x\x1b", None, True, {"b": "nan"}]}
    assert clean_document(doc) == {"a": [1, 2.5, "x\\x1b", None, True, {"b": "nan"}]}


def test_assumed_cc_alone_shows_no_raw_unknown_dict(capsys) -> None:
    assert _exit(["check", "--no-smoke", "--assume", "gpu.cc=9.0", "--fail-on", "never"]) == 0
    out = capsys.readouterr().out
    assert "$unknown" not in out and "(cc 9.0)" in out


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "too_big"])
def test_a_snapshot_that_is_not_a_bounded_regular_file_is_refused_unread(tmp_path: Path,
                                                                         kind: str) -> None:
    import os

    from preflight.errors import UserInputError
    from preflight.snapshot import MAX_SNAPSHOT_BYTES

    snap = tmp_path / "s.json"
    if kind == "fifo":
        os.mkfifo(snap)                        # a read would block forever
    elif kind == "dev_zero":
        snap.symlink_to("/dev/zero")           # a read would fill memory
    else:
        with open(snap, "wb") as fh:
            fh.truncate(MAX_SNAPSHOT_BYTES + 1)   # sparse: no disk used
    with pytest.raises(UserInputError, match="s.json"):
        load(str(snap))


def test_a_version_past_the_int_digit_limit_is_undetermined_not_an_internal_error(
        tmp_path: Path, capsys) -> None:
    # Found by tests/fuzz: packaging's Version() raised a plain ValueError (exit 3).
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"schema_version": "1.0",
                                "facts": {"pkg.torch.version": HUGE, "pkg.torchao.version": HUGE}}))
    assert _exit(["check", "--snapshot", str(snap), "--format", "json"]) in (0, 1)
    assert "internal error" not in capsys.readouterr().err


# --- the one loader (facts.load_snapshot was a second one, without its checks) ---------------

def test_snapshot_round_trip(tmp_path) -> None:
    facts = Facts({"gpu.count": 8, "gpu.min_cc": "9.0", "pkg.torch.version": Unknown("broken")},
                  {"gpu.count": "nvml"})
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"schema_version": "1.0", **facts_to_json(facts)}))
    loaded, _ = load(str(path))
    assert dict(loaded) == dict(facts)
    assert loaded.source("gpu.count") == "nvml"


@pytest.mark.parametrize("content, expected", [
    ("{not json", r"snap\.json:1: not valid JSON"),
    ('{"schema_version": "1.0"}', "not an fp8-doctor snapshot"),
    ('{"schema_version": "9.0", "facts": {}}', "schema_version '9.0' is not supported"),
    ('[1, 2]', "not an fp8-doctor snapshot"),
])
def test_bad_snapshots_name_the_file(tmp_path, content: str, expected: str) -> None:
    path = tmp_path / "snap.json"
    path.write_text(content)
    with pytest.raises(SnapshotError, match=expected):
        load(str(path))


def test_missing_snapshot_is_a_user_error(tmp_path) -> None:
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load(str(tmp_path / "nope.json"))


def test_an_older_snapshot_gets_the_torch_pairing_of_its_builds(tmp_path) -> None:
    # taken before pkg.<dist>.built_with_torch existed: a same-day nightly pair is still matched
    # (pytorch/ao issue 2904), and a value the snapshot recorded is kept as it was
    older = Facts({"pkg.torch.version": "2.9.0.dev20250827+cu128",
                   "pkg.torchao.version": "0.13.0.dev20250827"}, {})
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"schema_version": "1.0", **facts_to_json(older)}))
    assert load(str(path))[0]["pkg.torchao.built_with_torch"] is True
    recorded = Facts({**dict(older), "pkg.torchao.built_with_torch": Unknown("as recorded")}, {})
    path.write_text(json.dumps({"schema_version": "1.0", **facts_to_json(recorded)}))
    assert isinstance(load(str(path))[0]["pkg.torchao.built_with_torch"], Unknown)
