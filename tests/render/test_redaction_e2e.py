"""End to end: secrets planted in real environment variables and real config files never reach
any output of the real command line (every format, ``report``, ``snapshot``), the Python API's
report or its exception, while values that must stay readable do.

Nothing is faked: the runtime probe reads ``os.environ`` (set with monkeypatch), the config
readers read files on disk, and the redactor is the one built for this machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import preflight
from preflight import cli
from preflight.api import PreflightError
from preflight.redact import HOST_MASK, MASK

PATH_TOKEN = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
OTHER_HOME = "/home/planteduser"

# Allow-listed names (so the variables are collected) with values a redactor must recognise by
# content: the name says nothing.
ENV = {
    "NVTE_GITLAB": "glpat-PLANTEDgitlab12345",
    "NVTE_DEBUG_LEVEL": "Xk9pQ2mZ7rT4vW8yB1nC5q",          # generic random token, 22 chars
    "NVTE_NPM": "npm_PLANTEDnpmTokenAbc123",
    "NVTE_STRIPE": "sk_live_PLANTEDstripe1234",
    "NVTE_SLACK": "xoxp-1234-abcd",
    "NVTE_FP8_NOTE": "https://dave:pa/ssw0rd@proxy.corp:3128",
    "ACCELERATE_CACHE_URL": "redis://:hunter2secret@cache:6379/0",
    "ACCELERATE_HUB_URL": "https://bob:p@ssAtSign@host.example",
    "NVTE_PROXY": "bob:hunter2noscheme@proxy.corp:3128",
    "NVTE_CMDLINE": "WANDB_API_KEY=abc123def456 --hf_token abcdEFGH1234 password: hunter2pw",
    "NVTE_PAT": "stripe_sk_live_PLANTED99",                # secret by name and by content
    "HF_TOKEN": "hf_PLANTEDhfTokenValue1234567890abcd",    # off the allow-list: never collected
    # Must stay readable:
    "NCCL_SOCKET_IFNAME": "eth0",
    "CUDA_VISIBLE_DEVICES": "0,1",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "TORCH_HOME": f"{OTHER_HOME}/.cache/torch",
}
ACCELERATE_YAML = f"""\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: fp8
main_process_ip: https://bob:p@ssInYaml@internal.example.com:8443/hub
tracker_url: http://carol:hunter2yaml@wandb.internal.corp/api
hub_token: plainvalue-by-name
proxy: erin:hunter2proxy@proxy.corp:3128
note: "WANDB_API_KEY=abc123yaml456"
deepspeed_config:
  deepspeed_config_file: {OTHER_HOME}/secretproj/ds.json
num_processes: 8
"""
MEGATRON_SH = """\
#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py \\
  --fp8-format hybrid --transformer-impl transformer_engine \\
  --hidden-size 4096 --num-layers 32 \\
  --hf-token abcdEFGH1234megatron \\
  --wandb-exp-name run1
"""
SECRETS = (
    "PLANTEDgitlab", "Xk9pQ2mZ7rT4vW8yB1nC5q", "npm_PLANTED", "sk_live_PLANTED", "1234-abcd",
    "pa/ssw0rd", "ssw0rd", "hunter2", "ssAtSign", "abc123def456", "abcdEFGH1234", "PLANTED99",
    "hf_PLANTED", PATH_TOKEN, "ssInYaml", "plainvalue-by-name", "abc123yaml456", OTHER_HOME,
)


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Real env vars and real config files (one in a folder named like a GitHub token)."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    acc = tmp_path / PATH_TOKEN / "accelerate.yaml"
    acc.parent.mkdir()
    acc.write_text(ACCELERATE_YAML)
    meg = tmp_path / "meg" / "pretrain_gpt.sh"
    meg.parent.mkdir()
    meg.write_text(MEGATRON_SH)
    return [str(acc), str(meg)]


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    try:
        cli.main(list(argv))
    except SystemExit as exc:  # a usage error would be a broken test, not a leak
        pytest.fail(f"exit {exc.code}: {capsys.readouterr().err}")
    return capsys.readouterr()


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_check_output_has_no_planted_secret(planted: list[str], capsys, fmt: str) -> None:
    out, err = _cli(capsys, "check", *planted, "--no-smoke", "--format", fmt)
    assert not _leaks(out), f"{fmt} leaks {_leaks(out)}"
    assert not _leaks(err)
    assert MASK in out


def test_report_and_snapshot_have_no_planted_secret(planted: list[str], capsys) -> None:
    out, _ = _cli(capsys, "report", *planted)
    assert not _leaks(out), _leaks(out)
    out, _ = _cli(capsys, "snapshot", *planted)
    assert not _leaks(out), _leaks(out)


def test_json_keeps_what_must_stay_readable(planted: list[str], capsys) -> None:
    out, _ = _cli(capsys, "check", *planted, "--no-smoke", "--format", "json")
    doc = json.loads(out)
    facts, prov = doc["facts"], doc["provenance"]
    assert facts["env.NCCL_SOCKET_IFNAME"] == "eth0"
    assert facts["env.CUDA_VISIBLE_DEVICES"] == "0,1"
    assert facts["env.PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert facts["env.TORCH_HOME"] == "~/.cache/torch"
    assert "env.HF_TOKEN" not in facts and "env.HF_TOKEN" not in prov
    for name in ("NVTE_GITLAB", "NVTE_DEBUG_LEVEL", "NVTE_NPM", "NVTE_STRIPE", "NVTE_SLACK",
                 "NVTE_PAT", "NVTE_CMDLINE"):
        assert facts[f"env.{name}"] == MASK, name
    assert facts["env.NVTE_FP8_NOTE"] in (MASK, f"https://{MASK}@proxy.corp:3128")
    # A secret-named fact keeps where it came from (bug: the provenance itself was masked).
    assert prov["env.NVTE_PAT"] != MASK
    assert facts["config.megatron.hf_token"] == MASK
    assert prov["config.megatron.hf_token"].endswith("pretrain_gpt.sh:5")
    assert facts["config.accelerate.hub_token"] == MASK
    assert prov["config.accelerate.hub_token"].endswith(f"/{MASK}/accelerate.yaml:6")
    # Another machine's address: "no hostnames" covers the cluster's hosts too.
    assert facts["config.accelerate.main_process_ip"] == HOST_MASK
    assert facts["config.accelerate.mixed_precision"] == "fp8"


def test_no_redact_shows_the_planted_values(planted: list[str], capsys) -> None:
    """The opt-out works, which also proves the values above really reached the report.

    (Secret-looking env values are masked when they are collected, before any report exists:
    those stay masked even here.)"""
    out, _ = _cli(capsys, "check", *planted, "--no-smoke", "--format", "json", "--no-redact")
    assert PATH_TOKEN in out and "hunter2yaml" in out and "abcdEFGH1234megatron" in out
    assert "Xk9pQ2mZ7rT4vW8yB1nC5q" not in out


def test_api_report_render_and_exception_are_redacted(planted: list[str]) -> None:
    report = preflight.check(planted, smoke=False, fail_on="info")
    for fmt in ("text", "json", "markdown", "sarif"):
        assert not _leaks(report.render(fmt)), fmt
    # The raw data stays on the report object for code that needs it.
    assert report.facts["config.megatron.hf_token"] == "abcdEFGH1234megatron"
    with pytest.raises(PreflightError) as info:
        preflight.assert_ready(planted, smoke=False, fail_on="info")
    assert not _leaks(str(info.value)), _leaks(str(info.value))
    assert info.value.report.facts["config.megatron.hf_token"] == "abcdEFGH1234megatron"
