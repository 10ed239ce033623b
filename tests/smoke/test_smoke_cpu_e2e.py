"""The whole smoke step for real on the CPU (`--device cpu`): child process, torch, torchao
emulation, facts, JSON details and the `fp8-doctor smoke` command."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

pytest.importorskip("torch")

from preflight.commands import smoke as smoke_cli  # noqa: E402
from preflight.registry import registry
from preflight.smoke import SmokeOptions, run  # noqa: E402


@pytest.fixture(scope="module")
def cpu_outcome():  # noqa: ANN201
    pytest.importorskip("torchao")
    facts = {"intent.shapes.hidden": 64, "intent.shapes.tokens": 128}
    return run(facts, SmokeOptions(device="cpu", timeout=120))


def test_cpu_run_is_healthy(cpu_outcome) -> None:
    f = cpu_outcome.facts
    assert f["smoke.status"] == "ok", f.get("smoke.error")
    assert f["smoke.device"] == "cpu" and f["smoke.device_type"] == "cpu"
    assert f["smoke.backends"] == ["scaled_mm", "torchao"]
    for key in ("identity_ok", "scale_ok", "engaged", "accurate", "finite"):
        assert f[f"smoke.scaled_mm.{key}"] is True, key
    assert "smoke.scaled_mm.e5m2_refused" not in f        # CUDA-only check
    assert f["smoke.torchao.emulate"] is True
    assert f["smoke.torchao.converted"] == ["fc1", "fc2"]
    assert f["smoke.torchao.unconverted_count"] == 1
    assert f["smoke.torchao.train_ok"] and f["smoke.torchao.loss_decreased"]
    assert 27.5 < f["smoke.torchao.sqnr_db"] < 30
    assert f["smoke.speed.skipped"]                      # speed only on CUDA
    # Dynamic scaling keeps no FP8 state: a save / load round trip is "not applicable", and the
    # loaded model's next step matched (else "drifted").
    assert f["smoke.torchao.resume_status"] == "not_applicable"
    assert f["smoke.torchao.resume_dcp_status"] == "not_applicable"


def test_the_share_of_gemm_work_in_fp8_is_reported(cpu_outcome) -> None:
    """Issue 23 item 4 in the smoke step: the converted tiny model's GEMM work in FP8, computed
    from its weight shapes as for a live model. fc1 (64x128) and fc2 (128x64) are Float8Linear,
    the 64x10 head is not (dims not multiples of 16)."""
    from preflight.registry.smoke_verdict import NOTE, smoke_checks
    from preflight.smoke import train as tr

    fp8 = tr.IN * tr.HIDDEN + tr.HIDDEN * tr.IN
    want = round(fp8 / (fp8 + tr.IN * tr.OUT), 4)
    assert cpu_outcome.facts["smoke.torchao.gemm_flops_share"] == pytest.approx(want)
    assert 0.9 < want < 1.0
    row = next(c for c in smoke_checks(cpu_outcome.facts)
               if c.group == "torchao" and "GEMM work" in c.name)
    assert row.verdict == NOTE and row.measured == f"{100 * want:.1f}%"


def test_every_fact_is_registered(cpu_outcome) -> None:
    reg = registry()
    missing = [n for n in cpu_outcome.facts if reg.lookup(n) is None]
    assert not missing


def _keys(obj: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((k, v))
            out += _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _keys(v)
    return out


def test_details_follow_the_json_naming_contract(cpu_outcome) -> None:
    d = cpu_outcome.details
    json.dumps(d)  # serializable
    pairs = _keys(d)
    snr = [k for k, _ in pairs if "sqnr" in k]
    assert "sqnr_db" in snr and "kernel_sqnr_db" in snr and "wgrad_sqnr_db" in snr
    for k, v in pairs:   # no other key carries dB numbers under another name
        assert not (k.endswith("_db") and "sqnr" not in k), k


def test_smoke_command_json_on_cpu() -> None:
    pytest.importorskip("torchao")
    p = argparse.ArgumentParser()
    smoke_cli.add_arguments(p)
    args = p.parse_args(["--device", "cpu", "--backend", "scaled_mm", "--format", "json",
                         "--shape", "128x64x64"])
    written: list[str] = []
    rc = smoke_cli.main(args, lambda text, out: written.append(text))
    doc = json.loads(written[0])
    assert rc == 0
    assert doc["facts"]["smoke.backends"] == ["scaled_mm"]
    assert doc["smoke"]["backends"]["scaled_mm"]["identity_ok"] is True


def test_shape_argument_is_validated() -> None:
    p = argparse.ArgumentParser()
    smoke_cli.add_arguments(p)
    with pytest.raises(SystemExit) as exc:
        p.parse_args(["--shape", "12x0x4"])
    assert exc.value.code == 2
    assert smoke_cli.parse_shape("8192X4096x14336") == (8192, 4096, 14336)


def test_text_render_names_status_and_checks() -> None:
    text = smoke_cli.render_text({"smoke.ran": True, "smoke.status": "failed",
                                  "smoke.device": "cpu", "smoke.duration_s": 1.0,
                                  "smoke.scaled_mm.scale_ok": False,
                                  "smoke.scaled_mm.sqnr_db": 28.5})
    assert "failed on cpu (1 of 2 checks passed)" in text
    row = next(ln for ln in text.splitlines() if "dequantization factors" in ln)
    assert row.split()[-1] == "fail" and "need yes" in row
    row = next(ln for ln in text.splitlines() if "forward SQNR" in ln)
    assert "28.5 dB" in row and "20-40 dB" in row and row.split()[-1] == "pass"
    assert text.rstrip().endswith("exit 1: a check failed")


def test_smoke_command_text_on_cpu_shows_a_verdict_per_check(capsys) -> None:
    """The real CPU run: every judged row passes, with its measured value and threshold."""
    from preflight import cli

    assert cli.main(["smoke", "--device", "cpu", "--backend", "scaled_mm", "--no-speed"]) == 0
    out, err = capsys.readouterr()
    rows = [ln for ln in out.splitlines() if ln.rstrip().endswith((" pass", " fail"))]
    assert len(rows) >= 4 and all(ln.rstrip().endswith(" pass") for ln in rows)
    assert any("dB" in ln and "need " in ln for ln in rows)
    assert "kernel_sqnr_db:" not in out                       # no raw key dump
    # Progress is a status line on a terminal only, never into a pipe (issue 24 item 5).
    assert "smoke child" not in err and "smoke child" not in out
    # The output flags every command shares (issue 24 item 9: `--color never` was refused):
    # -q is one line per check that did not pass (none here) and the verdict.
    assert cli.main(["smoke", "--device", "cpu", "--backend", "scaled_mm", "--no-speed", "-q",
                     "--color", "never"]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [out.strip()] and out.strip().endswith("· exit 0")


def test_auto_checks_only_the_jobs_own_backend() -> None:
    """A Transformer Engine job learns nothing from a torchao training step: with the job's
    backend known, `auto` runs the raw _scaled_mm checks and that backend (when installed)."""
    from preflight.smoke import job_backends

    assert job_backends({"intent.backend": "te"}, ("auto",)) == ("te",)
    assert job_backends({"intent.backend": "torchao"}, ("auto",)) == ("torchao",)
    assert job_backends({"intent.backend": "none"}, ("auto",)) == ()
    assert job_backends({}, ("auto",)) is None                        # no job: every backend
    assert job_backends({"intent.backend": "te"}, ("torchao",)) is None  # named: as asked

    pytest.importorskip("torchao")
    out = run({"intent.backend": "te"}, SmokeOptions(device="cpu", timeout=120))
    assert out.facts["smoke.status"] == "ok", out.facts.get("smoke.error")
    assert out.facts["smoke.backends"] == ["scaled_mm"]    # TE is not installed here; no torchao
    assert "torchao" not in out.details["backends"]
    assert "is te: only scaled_mm, te checked" in out.details["backends_note"]
