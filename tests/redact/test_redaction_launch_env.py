"""The environment a launch script gives its training command (``export VAR=...``, ``VAR=...
cmd``) becomes ``env.*`` facts (jobs/scripts.py); what looks like a credential there is masked in
every format, in snapshots and in ``--diff`` (redteam2, issue 21 item 5). The red team found
values of allow-listed prefixes shown in full under names and shapes the redaction did not know:
``*_CREDS``, ``*_WEBHOOK_URL`` (a Slack webhook's path is its credential), ``*_CONN_STR`` with an
Azure ``AccountKey=``, ``*_SIG`` / ``*_SAS``, ``*_DSN``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight.cli import main
from preflight.redact import looks_secret

SECRET = "hunter2pass"
SLACK = "https://hooks.slack.com/services/T0ABCDEF/B0ABCDEF/abcdefghijklmnopqrstuvwx"
ENV = {
    "ACCELERATE_CREDS": SECRET,
    "NVTE_WEBHOOK_URL": SLACK,
    "TRANSFORMERS_NOTIFY": f"see {SLACK} for alerts",
    "NEMO_CONN_STR": f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={SECRET};"
                     "EndpointSuffix=core.windows.net",
    "TORCH_SIG": SECRET,
    "DS_SAS": SECRET,
    "MEGATRON_DSN": SECRET,
    "NVTE_CONNECTION_STRING": SECRET,
    "NVTE_JWT": SECRET,
    # the names people ask about first: not allow-listed, never shown at all
    "HF_TOKEN": "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
}


@pytest.mark.parametrize("name", sorted(ENV))
def test_each_name_and_shape_is_a_secret(name: str) -> None:
    assert looks_secret(name, ENV[name])


def test_settings_that_merely_contain_the_words_stay_readable() -> None:
    for name in ("accumulate_grad_batches", "design", "signal_handler", "NVTE_FP8_DPA",
                 "TORCH_DISTRIBUTED_DEBUG", "sigmoid", "session_len"):
        assert not looks_secret(name, "1"), name


def _script(tmp_path: Path) -> Path:
    lines = [f"export {k}='{v}'" for k, v in ENV.items()]
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n" + "\n".join(lines) + "\nTORCH_SIG=" + SECRET +
                      " ACCELERATE_MIXED_PRECISION=fp8 accelerate launch --num_processes 8 "
                      "--mixed_precision fp8 train.py\n")
    return script


def _leaks(text: str) -> list[str]:
    return [s for s in (SECRET, "abcdefghijklmnopqrstuvwx", ENV["HF_TOKEN"],
                        ENV["WANDB_API_KEY"]) if s in text]


def test_no_format_shows_them(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    script = _script(tmp_path)
    monkeypatch.chdir(tmp_path)
    runs = [["--format", f] for f in ("text", "json", "markdown", "sarif", "junit")] + \
        [["--diff"], ["-v"]]
    for extra in runs:
        main(["check", "--no-smoke", "--no-project-config", *extra, str(script)])
        out = capsys.readouterr()
        assert not _leaks(out.out + out.err), extra
    main(["check", "--no-smoke", "--format", "json", str(script)])
    facts = json.loads(capsys.readouterr().out)["facts"]
    assert facts["env.ACCELERATE_MIXED_PRECISION"] == "fp8"        # still read
    assert "env.NEMO_CONN_STR" in facts and "env.HF_TOKEN" not in facts
    main(["snapshot", "-o", str(tmp_path / "snap.json"), str(script)])
    main(["snapshot", "--no-redact", "-o", str(tmp_path / "raw.json"), str(script)])
    assert not _leaks((tmp_path / "snap.json").read_text())
    capsys.readouterr()
    for extra in (["--format", "json"], ["--format", "markdown"], ["--diff"]):
        main(["check", "--snapshot", str(tmp_path / "raw.json"), *extra])    # replayed: masked
        out = capsys.readouterr()
        assert not _leaks(out.out + out.err), extra
