"""Other machines never reach an output: host names in URL values, free text and ``host:port``,
IP addresses in free text and environment values, plain passwords under short secret names at
any depth (issue 13, item 5); and public documentation links stay readable.

End to end through the real command line and API with real files, real environment variables, a
real (fake) ``nvidia-smi`` program on PATH, and a replayed snapshot whose stored finding quotes a
URL; plus the allow-list rules themselves.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hostenv import require_exec
from hypothesis import given
from hypothesis import strategies as st

import preflight
from preflight import cli
from preflight.commands.smoke import render as smoke_render
from preflight.redact import MASK, Redactor, default_redactor, machine
from preflight.redact.hosts import HOST_MASK, is_public, mask_hosts

HOSTS = ("wandb.internal.corp", "node-17.cluster.internal", "gpu-a7", "rdzvhost3",
         "10.1.2.3", "192.168.7.7", "100.64.0.9", "8.8.4.4", "fd00::17", "login2.hpc.example.edu",
         "smi-peer.internal", "10.9.8.7", "store9.corp")
SECRETS = ("hunter2deep", "plainpw42", "nvtepw-plain")

ACCELERATE = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: fp8
tracker_url: http://wandb.internal.corp/api/v1
note: "rank 3 could not connect to node-17.cluster.internal:29500 (peer 10.1.2.3)"
rdzv_conf: gpu-a7:29400
rdzv_backup: rdzvhost3:29401
mirror: https://login2.hpc.example.edu/pip
dns: 8.8.4.4 and fd00::17
docs: https://github.com/NVIDIA/TransformerEngine/blob/v1.11/README.rst
pw: plainpw42
"""


def _deep(depth: int) -> dict:
    doc: dict = {"pw": "hunter2deep"}
    for i in range(depth):
        doc = {f"level{i}": doc}
    return {"train_batch_size": 8, "bf16": {"enabled": True}, "extra": doc}


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    (tmp_path / "acc.yaml").write_text(ACCELERATE)
    (tmp_path / "ds.json").write_text(json.dumps(_deep(20)))
    monkeypatch.setenv("NVTE_PEER", "192.168.7.7")
    monkeypatch.setenv("NVTE_PW", "nvtepw-plain")
    monkeypatch.setenv("TORCHELASTIC_STORE", "store9.corp:29500")
    # An nvidia-smi that fails naming another host (its stderr becomes the GPU facts' reason).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no route to smi-peer.internal "
                   "(10.9.8.7)' >&2\nexit 9\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return [str(tmp_path / "acc.yaml"), str(tmp_path / "ds.json")]


def _leaks(text: str) -> list[str]:
    return [s for s in HOSTS + SECRETS if s in text]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_check_shows_no_other_host_ip_or_password(planted: list[str], capsys, fmt: str) -> None:
    assert cli.main(["check", *planted, "--no-smoke", "--format", fmt, "--fail-on",
                     "never"]) == 0
    out = capsys.readouterr().out
    assert not _leaks(out), _leaks(out)
    if fmt in ("text", "sarif"):    # there, only the planted nvidia-smi's error names a host
        require_exec(Path(planted[0]).parent)
    assert HOST_MASK in out


def test_report_and_snapshot_show_none_either(planted: list[str], capsys) -> None:
    for argv in (["report", *planted], ["snapshot", *planted]):
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert not _leaks(out), (argv[0], _leaks(out))


def test_the_planted_values_did_reach_the_report(planted: list[str], capsys) -> None:
    """Without redaction they are there: the test above is not vacuous."""
    cli.main(["check", *planted, "--no-smoke", "--format", "json", "--no-redact"])
    out = capsys.readouterr().out
    for value in ("wandb.internal.corp", "gpu-a7:29400", "10.1.2.3", "192.168.7.7",
                  "plainpw42", "hunter2deep"):
        assert value in out, value
    require_exec(Path(planted[0]).parent)       # the nvidia-smi planted there must have run
    assert "smi-peer.internal" in out


def test_public_documentation_links_stay(planted: list[str], capsys) -> None:
    cli.main(["check", *planted, "--no-smoke", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["facts"]["config.accelerate.docs"].startswith("https://github.com/NVIDIA/")
    assert doc["facts"]["config.accelerate.tracker_url"] == f"http://{HOST_MASK}/api/v1"
    assert doc["facts"]["config.accelerate.pw"] == MASK
    assert doc["facts"]["env.NVTE_PW"] == MASK
    refs = [r["url"] for f in doc["findings"] for r in f.get("references", ())]
    assert refs and all(HOST_MASK not in u for u in refs)


def test_a_stored_finding_quoting_a_url_in_default_text(tmp_path: Path, capsys) -> None:
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"schema_version": "1.0", "facts": {}, "findings": [{
        "id": "FP8D-CFG-UNREADABLE", "severity": "error", "title": "config not read",
        "message": "fetching https://artifacts.corp.internal/job.yaml from 10.20.30.40 failed",
        "location": {"path": "job.yaml", "line": None}}]}))
    assert cli.main(["check", "--snapshot", str(snap), "--fail-on", "never"]) == 0
    out = capsys.readouterr().out
    assert "artifacts.corp.internal" not in out and "10.20.30.40" not in out
    assert f"https://{HOST_MASK}/job.yaml" in out


def test_smoke_child_exception_text() -> None:
    facts = {"smoke.ran": True, "smoke.status": "crash", "smoke.device": "cuda:0",
             "smoke.duration_s": 1.0,
             "smoke.error": "DistStoreError: timed out connecting to node-17.cluster.internal:29500"}
    for fmt in ("text", "json"):
        out = smoke_render(facts, {}, fmt)
        assert "node-17" not in out and "cuda:0" in out


def test_api_report_is_redacted(planted: list[str]) -> None:
    report = preflight.check(planted, smoke=False)
    for fmt in ("text", "json", "markdown", "sarif"):
        assert not _leaks(report.render(fmt)), fmt


@pytest.mark.parametrize("text", [
    "cuda:0", "run.sh:120", "ds.json:5", "pkg.torch.version", "config.accelerate.main_process_ip",
    "torch 2.5.1+cu124", "cuDNN 8.9.7.29", "driver 550.54.15", "https://docs.nvidia.com/x",
    "https://nvidia.github.io/TransformerEngine/", "127.0.0.1:29500", "localhost:29500",
    "expandable_segments:True", "gpu.count", "12:30", "std::vector", "c10::Error",
    "NVIDIA/TransformerEngine@v1.11", "https://huggingface.co/docs/accelerate/v1.1.0/en/x",
])
def test_what_is_not_another_machine_stays(text: str) -> None:
    assert mask_hosts(text) == text


@pytest.mark.parametrize(("text", "want"), [
    ("see http://wandb.internal.corp/api", f"see http://{HOST_MASK}/api"),
    ("peer node7:29400 died", f"peer {HOST_MASK}:29400 died"),
    ("at 10.0.0.5 and 172.16.3.4", f"at {HOST_MASK} and {HOST_MASK}"),
    ("mirror pypi.corp.example.com", f"mirror {HOST_MASK}"),
    ("https://evilgithub.com/x", f"https://{HOST_MASK}/x"),
    ("https://github.com.attacker.io/x", f"https://{HOST_MASK}/x"),
    ("http://[fd00::1]:8080/", f"http://{HOST_MASK}:8080/"),
])
def test_other_machines_are_masked(text: str, want: str) -> None:
    assert mask_hosts(text) == want


def test_a_version_key_keeps_a_dotted_quad() -> None:
    assert Redactor().text("9.1.0.70", key="pkg.nvidia-cudnn-cu12.version") == "9.1.0.70"
    assert Redactor().text("9.1.0.70", key="config.x.peer") == HOST_MASK


@given(st.lists(st.sampled_from(["a", ".", "b", ":", "1", "/", "-", "://", "@", "com"]),
                max_size=4000))
def test_mask_hosts_is_fast_on_dotted_and_colon_runs(parts: list[str]) -> None:
    from cputime import cpu_seconds

    text = "".join(parts) * 8
    start = cpu_seconds()
    Redactor().text(text)
    assert cpu_seconds() - start < 2     # CPU time: not stretched by load (tests/cputime.py)


def test_allow_list_matches_whole_labels() -> None:
    assert is_public("docs.nvidia.com") and is_public("github.com")
    assert not is_public("notnvidia.com") and not is_public("nvidia.com.evil.org")


def test_a_host_named_like_the_tool_keeps_the_reports_own_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A machine called ``fp8-doctor`` (a project's own CI runner, found by running the suite in
    a UTS namespace of that name): every "fp8-doctor" in the report became [HOST] - the text
    header, the ``-q`` error prefix and the JSON ``tool.name``, a const of the published report
    schema, so the document no longer validated. The tool's name says nothing about the machine;
    the machine's other names (its FQDN) stay masked."""
    fqdn = "fp8-doctor.ci-pool7.example"
    monkeypatch.setattr(machine, "gethostname", lambda: "fp8-doctor")
    monkeypatch.setattr(machine, "getfqdn", lambda name="": fqdn)
    default_redactor.cache_clear()      # cached per process: built again with this name
    try:
        (tmp_path / "acc.yaml").write_text(ACCELERATE + f"note2: built on {fqdn}\n")
        argv = ["check", str(tmp_path / "acc.yaml"), "--no-smoke", "--fail-on", "never"]
        assert cli.main([*argv, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert cli.main([*argv, "--format", "text"]) == 0
        text = capsys.readouterr().out
        masked = default_redactor().text(f"rendezvous at {fqdn}:29500")
    finally:
        default_redactor.cache_clear()
    assert doc["tool"]["name"] == "fp8-doctor" and text.startswith("fp8-doctor ")
    assert doc["facts"]["config.accelerate.note2"] == f"built on {HOST_MASK}"
    assert "ci-pool7" not in json.dumps(doc) and "ci-pool7" not in text
    assert masked == f"rendezvous at {HOST_MASK}:29500"
