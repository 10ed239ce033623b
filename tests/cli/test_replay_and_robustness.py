"""Snapshot replay gives what the live run gave; hostile inputs and pipes stay within the contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from preflight import api, cli
from preflight.errors import UserInputError
from preflight.examples import example_paths

REPO = Path(__file__).resolve().parents[2]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _ids(doc: dict) -> list[str]:
    return sorted(f["id"] for f in doc["findings"])


def test_replaying_a_gpu_nodes_snapshot_never_runs_this_machines_smoke_step(tmp_path: Path,
                                                                            capsys) -> None:
    # Facts as an H100 node's probes wrote them (provenance nvml, not assume).
    snap = tmp_path / "h100.json"
    snap.write_text(json.dumps({
        "schema_version": "1.0",
        "facts": {"gpu.count": 8, "gpu.min_cc": "9.0", "gpu.cc": "9.0", "gpu.max_cc": "9.0",
                  "gpu.heterogeneous": False, "gpu.name": "NVIDIA H100 80GB HBM3",
                  "pkg.torch.version": "2.5.1+cu124", "cuda.torch_build": "12.4"},
        "provenance": {"gpu.min_cc": "nvml", "gpu.count": "nvml"},
    }))
    assert cli.main(["check", "--snapshot", str(snap), "--format", "json"]) == 0
    doc = _json(capsys)
    assert doc["facts"]["smoke.ran"] is False
    assert "snapshot" in doc["facts"]["smoke.skip_reason"]
    assert not [i for i in _ids(doc) if i.startswith("FP8D-SMOKE")]


def test_an_unreadable_config_survives_the_snapshot(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "ds_config.json"
    bad.write_text('{"zero_optimization": {"stage": 3,}}\n')
    snap = tmp_path / "snap.json"
    assert cli.main(["check", str(bad), "--no-smoke", "--format", "json"]) == 1
    live = _json(capsys)
    assert cli.main(["snapshot", str(bad), "-o", str(snap)]) == 0
    capsys.readouterr()
    assert cli.main(["check", "--snapshot", str(snap), "--format", "json"]) == 1
    replay = _json(capsys)
    assert "FP8D-CFG-UNREADABLE" in _ids(live)
    assert _ids(replay) == _ids(live)


def test_new_config_paths_replace_the_snapshots_own_configs(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "snap.json"
    assert cli.main(["snapshot", *example_paths(), "--assume", "gpu=H100", "-o", str(snap)]) == 0
    capsys.readouterr()
    healthy = tmp_path / "train_args.json"
    healthy.write_text('{"output_dir": "out", "bf16": true}\n')
    cli.main(["check", "--snapshot", str(snap), str(healthy), "--format", "json"])
    doc = _json(capsys)
    assert not [k for k in doc["facts"] if k.startswith("config.accelerate.")]
    assert {"FP8D-ACC-0003", "FP8D-DS-0002"}.isdisjoint(_ids(doc))


def test_assumed_values_that_look_secret_are_masked_in_every_format(capsys) -> None:
    token = "hf_" + "Ab1" * 10
    for fmt in ("text", "json", "markdown", "sarif"):
        cli.main(["check", "--no-smoke", "--format", fmt, "--assume",
                  f"env.NVTE_DEBUG_TOKEN={token}", "--fail-on", "never"])
        assert token not in capsys.readouterr().out, fmt


def test_assuming_an_env_var_off_the_allow_list_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--no-smoke", "--assume", "env.HF_TOKEN=secretvalue123"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "allow-list" in err and "secretvalue123" not in err


def test_a_snapshot_that_is_not_text_is_a_usage_error(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "snap.json"
    snap.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--snapshot", str(snap)])
    assert exc.value.code == 2
    assert "not a UTF-8 text file" in capsys.readouterr().err


def test_a_snapshot_nested_too_deeply_is_a_usage_error(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text('{"schema_version": "1.0", "facts": {"gpu.count": ' + "[" * 100_000
                    + "]" * 100_000 + "}}")
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--snapshot", str(snap)])
    assert exc.value.code == 2
    assert "nested too deeply" in capsys.readouterr().err


def test_a_snapshot_value_json_can_parse_but_too_deep_to_walk_becomes_unknown(
        tmp_path: Path, capsys) -> None:
    """900 levels parse as JSON, then overflow the stack in evaluation and rendering (was exit 3):
    such a value is Unknown from the moment the snapshot is read."""
    value: object = 0
    for _ in range(900):
        value = [value]
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"schema_version": "1.0", "facts": {"some.future.fact": value}}))
    code = cli.main(["check", "--snapshot", str(snap), "--format", "json"])
    assert code in (0, 1)
    assert _json(capsys)["facts"]["some.future.fact"] == {
        "$unknown": "the snapshot's value is nested more than 64 deep"}


def test_snapshot_values_of_the_wrong_type_become_unknown(tmp_path: Path, capsys) -> None:
    """A hand-edited snapshot must not let rules decide on gpu.count: "eight"."""
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"schema_version": "1.0", "facts": {
        "gpu.count": "eight", "gpu.min_cc": 9.0, "gpu.name": "NVIDIA H100 80GB HBM3",
        "some.future.fact": 1}}))
    code = cli.main(["check", "--snapshot", str(snap), "--format", "json"])
    facts = _json(capsys)["facts"]
    assert code in (0, 1)
    assert facts["gpu.count"] == {"$unknown": "the snapshot's value 'eight' is not of type int"}
    assert facts["gpu.min_cc"] == {"$unknown": "the snapshot's value 9.0 is not of type cc"}
    assert facts["gpu.name"] == "NVIDIA H100 80GB HBM3"
    assert facts["some.future.fact"] == 1     # unregistered here: kept, no rule can name it


def test_a_rules_folder_without_rules_is_a_usage_error(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--no-smoke", "--rules", str(tmp_path)])
    assert exc.value.code == 2
    assert "no rule files" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "0", "abc"])
def test_smoke_timeout_must_be_positive(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--smoke-timeout", value])
    assert exc.value.code == 2


def test_bad_fail_on_is_refused_before_any_work() -> None:
    with pytest.raises(UserInputError, match="fail_on must be one of"):
        api.check(fail_on="bogus")


def test_a_closed_pipe_keeps_the_reports_exit_code() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "preflight", "check", "--example",
                             "--no-smoke"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert b"Traceback" not in err and b"internal error" not in err


def test_an_ascii_only_terminal_still_gets_the_report() -> None:
    proc = subprocess.run([sys.executable, "-m", "preflight", "check", "--example", "--no-smoke"],
                          cwd=REPO, capture_output=True, timeout=120,
                          env={"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1, proc.stderr
    assert b"FP8D-DS-0002" in proc.stdout


def test_rule_load_warnings_reach_stderr(tmp_path: Path, capsys) -> None:
    src = (REPO / "rules" / "hardware" / "FP8D-HW-0001.yaml").read_text()
    (tmp_path / "FP8D-HW-0001.yaml").write_text(src + "x_team_note: reviewed\n")
    assert cli.main(["check", "--no-smoke", "--no-bundled-rules", "--rules", str(tmp_path),
                     "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "rule warning:" in captured.err and "x_team_note" in captured.err
    json.loads(captured.out)  # stdout still carries only the report
