"""Redaction that keeps reference links and masks every password spelling (issue 24 item 6,
issue 21 item 5).

- A commit hash in a public forge's URL (``/blob/<40 hex>/``, ``/commit/``, ``/tree/``,
  GitLab's ``/-/blob/``, Hugging Face ``/resolve/``) and in a rule's own reference is kept, in
  every format; no planted secret passes through that exemption (a hash-shaped token in a query
  string or a fragment, a URL with credentials, a look-alike host, a hash outside a forge path).
- ``pwd`` / ``passwd`` keys, ODBC ``Pwd=`` (braced too), ``password=`` in URLs and DSNs.
- A snapshot taken with ``--no-redact`` and replayed with the default redaction leaks nothing.
- ``redact_diff`` masks tokens in ``--diff`` context lines and keeps the markers.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from render_cases import findings_report

from preflight import cli
from preflight.findings import Evidence, Finding, Fix, Reference, Severity
from preflight.redact import MASK, Redactor
from preflight.redact.diff import redact_diff
from preflight.render import FORMATS, render

NEUTRAL = Redactor(home="/home/jdoe", user="jdoe", hostnames=())
COMMIT = "3f9c2e6a8b1d3f5e7a9c0b2d4f6e8a1c3b5d7f91"
SECRET_HEX = "0f4c2e6a8b1d3f5e7a9c0b2d4f6e8a1c3b5d7f90"   # a hex API key, shaped like a commit
KEPT = [
    f"https://github.com/huggingface/transformers/blob/{COMMIT}/src/transformers/training_args.py",
    f"https://github.com/NVIDIA/TransformerEngine/commit/{COMMIT}",
    f"https://github.com/pytorch/ao/tree/{COMMIT}/torchao",
    f"https://gitlab.com/group/proj/-/blob/{COMMIT}/setup.py",
    f"https://huggingface.co/org/model/resolve/{COMMIT}/config.json",
    f"https://raw.githubusercontent.com/org/repo/{COMMIT}/README.md",
]
# Each holds SECRET_HEX where the exemption must not reach.
PLANTED = [
    f"https://github.com/a/b/blob/v1.0/x.py?token={SECRET_HEX}",
    f"https://github.com/a/b/blob/v1.0/x.py?{SECRET_HEX}",
    f"https://github.com/a/b/blob/v1.0/x.py#{SECRET_HEX}",
    f"https://github.com/a/b/blob/v1.0/x.py?ref=main&sig={SECRET_HEX}",
    f"https://ci:{SECRET_HEX}@github.com/a/b/commit/{COMMIT}",
    f"https://{SECRET_HEX}@github.com/a/b/blob/{COMMIT}/x",
    f"https://github.com.evil.example/a/b/blob/{SECRET_HEX}/x",
    f"https://evil.example/github.com/a/b/blob/{SECRET_HEX}/x",
    f"api key {SECRET_HEX} (see https://github.com/a/b/blob/)",
]


def _report(urls: list[str], *, refs: bool = True):
    """A finding with ``urls`` in its message and evidence (values from configs) and, with
    ``refs``, as its references (rule data: on a public forge or the rule's own)."""
    base = findings_report()
    finding = Finding("FP8D-HF-0001", Severity.WARNING, "t", "message " + " ".join(urls),
                      Fix("fix"),
                      references=tuple(Reference("SOURCE", u) for u in urls) if refs else (),
                      evidence=tuple(Evidence(f"config.hf_trainer.url{i}", u, "job/a.yaml:3")
                                     for i, u in enumerate(urls)))
    facts = base.facts.merged({f"config.hf_trainer.url{i}": u for i, u in enumerate(urls)})
    return dataclasses.replace(base, facts=facts, findings=(*base.findings, finding))


@pytest.mark.parametrize("fmt", FORMATS)
def test_commit_hashes_in_forge_urls_are_kept_in_every_format(fmt: str) -> None:
    out = render(_report(KEPT), fmt, redactor=NEUTRAL)
    for url in KEPT:
        assert url in out, (fmt, url)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_planted_secret_passes_through_the_exemption(fmt: str) -> None:
    # Planted where values from configs go (facts, evidence, messages): a rule's references
    # are rule data, never a value from the job.
    out = render(_report(PLANTED, refs=False), fmt, redactor=NEUTRAL)
    assert SECRET_HEX not in out, fmt
    assert MASK in out


def test_a_rules_own_reference_keeps_its_commit_on_any_host() -> None:
    own = f"https://git.example.org/cgit/proj/{COMMIT}/file.c"
    out = render(_report([own]), "json", redactor=NEUTRAL)
    refs = [r["url"] for f in json.loads(out)["findings"] for r in f["references"]]
    assert any(COMMIT in r for r in refs)
    # ... but only in its path: the same hash in the message (free text) is masked.
    doc = json.loads(out)
    assert not any(COMMIT in f["message"] for f in doc["findings"])


PASSWORDS = {
    "config.app.pwd": "Tr0ub4dor&3",
    "config.app.db_passwd": "c0rrect-h0rse",
    "config.app.conn": "Driver={ODBC Driver 18};Server=tcp:db;Uid=sa;Pwd={se;cr3t-odbc};",
    "config.app.conn2": "DRIVER={x};SERVER=db;UID=sa;PWD=Upp3rCase-odbc;",
    "config.app.dsn": "host=db user=u password=dsn-s3cret dbname=x",
    "config.app.url": "postgresql://u:url-s3cret@db.internal:5432/x",
    "config.app.jdbc": "jdbc:mysql://db/x?user=u&password=jdbc-s3cret",
    "config.app.mysql": "MYSQL_PWD=mysql-s3cret",
}
LEAKS = ("Tr0ub4dor", "c0rrect-h0rse", "cr3t-odbc", "Upp3rCase-odbc", "dsn-s3cret", "url-s3cret",
         "jdbc-s3cret", "mysql-s3cret")


@pytest.mark.parametrize("fmt", FORMATS)
def test_password_spellings_are_masked(fmt: str) -> None:
    base = findings_report()
    report = dataclasses.replace(base, facts=base.facts.merged(PASSWORDS))
    out = render(report, fmt, redactor=NEUTRAL)
    assert not [s for s in LEAKS if s in out], fmt


def test_a_no_redact_snapshot_replayed_with_redaction_leaks_nothing(tmp_path: Path,
                                                                    capsys) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "accelerate_config.yaml").write_text(
        "distributed_type: MULTI_GPU\nmixed_precision: fp8\nnum_processes: 8\n"
        "db_pwd: Tr0ub4dor&3\n"
        "conn: \"Driver={ODBC};Uid=sa;Pwd={se;cr3t-odbc};\"\n"
        "tracker: \"https://u:url-s3cret@wandb.example.org/api?password=jdbc-s3cret\"\n"
        "fp8_config:\n  backend: TE\n")
    raw = tmp_path / "raw.json"
    assert cli.main(["snapshot", str(job), "--no-redact", "-o", str(raw)]) == 0
    assert "Tr0ub4dor" in raw.read_text()   # it really is raw
    # Hand-edited values that the replay turns into Unknown reasons quoting them.
    doc = json.loads(raw.read_text())
    doc["facts"]["env.NVTE_AUTH_TOKEN"] = ["hunter2-env-token"]
    doc["facts"]["env.NVTE_DEBUG"] = {"$unknown": "read hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456"}
    raw.write_text(json.dumps(doc))
    capsys.readouterr()
    for fmt in FORMATS:
        cli.main(["check", "--snapshot", str(raw), "--no-smoke", "--format", fmt])
        out = capsys.readouterr().out
        leaked = [s for s in (*LEAKS, "hunter2-env-token", "hf_QwErTyUiOp") if s in out]
        assert not leaked, (fmt, leaked)


def test_redact_diff_masks_context_lines_and_keeps_the_markers() -> None:
    diff = "\n".join([
        f"# 1 edit; see https://github.com/a/b/blob/{COMMIT}/x.py",
        "--- a/acc.yaml", "+++ b/acc.yaml", "@@ -1,4 +1,4 @@",
        " hub_token: hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456",
        f" wandb_key: {SECRET_HEX}",
        f" revision_sha: {COMMIT}",
        "-mixed_precision: fp8", "+mixed_precision: bf16",
        '   "db_pwd": "Tr0ub4dor&3",',
        " accelerate launch --hub_token s3cr3t-flag --config_file /home/jdoe/x.yaml",
    ])
    out = redact_diff(diff, redactor=NEUTRAL).split("\n")
    assert [ln[:1] for ln in out] == [ln[:1] for ln in diff.split("\n")]
    text = "\n".join(out)
    for secret in ("hf_QwErTy", SECRET_HEX, "Tr0ub4dor", "s3cr3t-flag", "/home/jdoe"):
        assert secret not in text, secret
    assert f"blob/{COMMIT}/" in text and f"revision_sha: {COMMIT}" in text
    assert "-mixed_precision: fp8" in out and "+mixed_precision: bf16" in out


@pytest.mark.parametrize("name, secret", [
    ("HF_TOKEN", True), ("hub_token", True), ("access-token", True), ("token", True),
    ("token_value", True), ("HFTOKEN", True),
    # A model's vocabulary or a setting about tokens: readable (Megatron's flag was masked,
    # so the --diff of FP8D-MEG rules could not pass the redaction).
    ("moe-token-dispatcher-type", False), ("moe_token_dispatcher_type", False),
    ("eos_token", False), ("pad_token", False), ("max_tokens", False), ("HF_TOKEN_PATH", False),
])
def test_token_names(name: str, secret: bool) -> None:
    from preflight.redact import is_secret_name

    assert is_secret_name(name) is secret


def test_the_diff_writer_uses_the_key_aware_redaction(tmp_path: Path) -> None:
    """``check --diff`` (fixdiff.diff_output) masks with :func:`redact_diff`: a ``db_pwd`` line
    next to the edit narrows the hunk past it, and a Megatron flag stays readable."""
    from preflight import api
    from preflight.facts import Facts
    from preflight.findings import EditSpec
    from preflight.fixdiff import diff_output

    job = tmp_path / "job"
    job.mkdir()
    (job / "acc.yaml").write_text("db_pwd: Tr0ub4dor&3\nx: 1\ny: 2\nmixed_precision: fp8\n"
                                  "fp8_config:\n  backend: TE\n  fp8_format: E4M3\n")
    path = str(job / "acc.yaml")
    facts = Facts({"config.accelerate.fp8_config.fp8_format": "E4M3",
                   "config.files": [{"path": path, "kind": "accelerate"}]},
                  {"config.accelerate.fp8_config.fp8_format": f"{path}:7"})
    finding = Finding("X-1", Severity.ERROR, "t", "m", Fix("f", edits=(EditSpec(
        "config.accelerate.fp8_config.fp8_format", "set", "HYBRID"),)))
    out = diff_output(api.Report(facts=facts, findings=(finding,)), [str(job)], str(tmp_path))
    assert "Tr0ub4dor" not in out.patch + out.notes and "+  fp8_format: HYBRID" in out.patch
