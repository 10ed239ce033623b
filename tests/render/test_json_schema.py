"""The --format json document against its published JSON Schema (preflight/render/
report.schema.json, shipped in the wheel): real reports of several kinds, and broken documents
that the schema must refuse (so the test can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

import preflight  # noqa: E402
from preflight import cli  # noqa: E402

SCHEMA = json.loads((Path(preflight.__file__).parent / "render" / "report.schema.json")
                    .read_text(encoding="utf-8"))
ROOT = Path(__file__).resolve().parents[2]


def _validate(doc: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def _cli_json(capsys, argv: list[str]) -> dict:
    code = cli.main(argv + ["--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == code
    return doc


def test_the_bundled_example(capsys) -> None:
    doc = _cli_json(capsys, ["check", "--example", "--no-smoke"])
    _validate(doc)
    # Every finding states its impact (issue 25 item 2), in reading order.
    ranks = [("blocks", "no-fp8", "other").index(f["impact"]) for f in doc["findings"]]
    assert ranks and ranks == sorted(ranks)


def test_unreadable_configs_and_assumptions(tmp_path: Path, capsys) -> None:
    (tmp_path / "accelerate.yaml").write_text("mixed_precision: fp8\n  bad: [indent\n")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3},}')
    doc = _cli_json(capsys, ["check", "--no-smoke", str(tmp_path / "accelerate.yaml"),
                             str(tmp_path / "ds.json"), "--assume", "gpu=A100"])
    assert {"FP8D-CFG-UNREADABLE"} <= {f["id"] for f in doc["findings"]}
    _validate(doc)


def test_a_real_cpu_smoke_step() -> None:
    pytest.importorskip("torch")
    from preflight.smoke import SmokeOptions

    report = preflight.check(smoke=True, smoke_options=SmokeOptions(device="cpu", timeout=120))
    doc = json.loads(report.render("json"))
    assert isinstance(doc["smoke"], dict) and doc["smoke"]["status"] in ("ok", "failed")
    _validate(doc)


def test_a_replayed_snapshot(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "node.json"
    assert cli.main(["snapshot", "--example", "-o", str(snap)]) == 0
    capsys.readouterr()
    _validate(_cli_json(capsys, ["check", "--snapshot", str(snap)]))


def test_the_distributed_report_of_a_job_of_one(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "cluster.json"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "preflight.cluster", "--timeout", "60",
                           "--format", "json", "-o", str(out)], capture_output=True, text=True,
                          env=env, timeout=180, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert "cluster" in doc
    _validate(doc)


@pytest.mark.parametrize("breakage", [
    lambda d: d.pop("summary"),
    lambda d: d.update(exit_code=7),
    lambda d: d["findings"].append({"id": "not-an-id"}),
    lambda d: d["facts"].update({"gpu.count": {"$unknown": 3}}),
    lambda d: d.update(schema_version="2.0"),
    lambda d: d["findings"][0].update(impact="fatal"),
])
def test_the_schema_refuses_broken_documents(capsys, breakage) -> None:
    doc = _cli_json(capsys, ["check", "--example", "--no-smoke"])
    breakage(doc)
    with pytest.raises(jsonschema.ValidationError):
        _validate(doc)
