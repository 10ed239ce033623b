"""Settings on one line, however they are quoted, are judged by their key (issue 21 item 5).

Red team, this round: ``check --diff`` of a DeepSpeed JSON written on one line,
``{"api_key": "...", "fp16": {"enabled": true}}``, printed the key's value in the patch. The
per-line reader of a diff (``redact.diff``) takes only a line's first key as a setting, and the
free-text pass matched ``NAME: VALUE`` only with a bare NAME: a quoted key (JSON, a Python dict,
TOML) was never a name, so a plain password under it, which has no token shape, passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.cli import main
from preflight.redact import MASK, redact_text
from preflight.redact.diff import redact_diff

SECRET = "plainpw7"   # no token shape: only the key can tell it is a secret

ONE_LINE = [
    '{"api_key": "plainpw7", "fp16": {"enabled": true}}',             # JSON
    '{"fp16": {"enabled": true}, "password" : "plainpw7"}',           # JSON, key not first
    "{'password': 'plainpw7', 'lr': 1e-4}",                            # Python dict literal
    'db = { user = "a", "secret" = "plainpw7" }',                      # TOML inline table
    "{lr: 0.1, pwd: plainpw7}",                                        # YAML flow mapping
    "A=1 DB_PASSWORD=plainpw7 torchrun train.py",                      # shell assignments
    "torchrun train.py --lr 1 --hub-token=plainpw7",                   # flags
    "python x.py '--api_key' 'plainpw7'",                              # quoted flag
    "if password == 'plainpw7' and rank == 0",                         # code quoted in a
    "if os.environ['API_KEY'] != 'plainpw7':",                         # message: comparisons,
    'os.environ["HF_TOKEN"] = "plainpw7"',                              # subscripts, walrus
    "if (pwd := 'plainpw7'):",
]


@pytest.mark.parametrize("line", ONE_LINE)
def test_every_pair_on_a_line_is_judged_by_its_key(line: str) -> None:
    assert SECRET not in redact_text(line)
    for marker in (" ", "+", "-"):
        assert SECRET not in redact_diff(marker + line)


@pytest.mark.parametrize("line", [
    '{"mixed_precision": "fp8", "fp16": {"enabled": true}}',
    "{'lr': 0.0001, 'tokenizer_name': 'gpt2'}",
    'see "https://github.com/NVIDIA/TransformerEngine/blob/v2.5/x.py"',
])
def test_pairs_that_are_no_secret_stay(line: str) -> None:
    assert redact_text(line) == line
    assert MASK not in redact_diff(" " + line)


def test_diff_of_a_one_line_json_does_not_print_its_secret(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "acc.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: fp8\n"
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    (job / "ds.json").write_text('{"api_key": "plainpw7", "fp16": {"enabled": true}, '
                                 '"zero_optimization": {"stage": 3}}')
    monkeypatch.chdir(job)
    rc = main(["check", "--no-smoke", "--diff", "--assume", "gpu=H100",
               "--assume", "pkg.deepspeed=0.15.4", "--assume", "pkg.accelerate=1.2.1", "."])
    out = capsys.readouterr()
    assert rc in (0, 1)
    assert SECRET not in out.out + out.err
    # the edit was found and withheld for its secret, not lost: the notes name the file
    assert "ds.json" in out.out + out.err
    rc = main(["check", "--no-smoke", "--diff", "--no-redact", "--assume", "gpu=H100",
               "--assume", "pkg.deepspeed=0.15.4", "--assume", "pkg.accelerate=1.2.1", "."])
    assert '"fp16": {"enabled": false}' in capsys.readouterr().out


def test_json_stays_json_and_fact_names_keep_their_provenance() -> None:
    """The same pass runs over a rendered JSON report: a masked value keeps its quotes, a bare
    value (null, a number, a mapping) is left to the key-aware pass that ran before, and a
    dotted fact name's provenance (``"config.x.hub_token": "run.sh:5"``) is no secret."""
    import json

    text = ('{"password": "plainpw7", "token": null, "pin": 12, "auth": {\n "a": 1},\n'
            ' "config.x.hub_token": "run.sh:5", "done": "[REDACTED]"}')
    out = redact_text(text)
    doc = json.loads(out)
    assert doc["password"] == MASK and doc["token"] is None and doc["auth"] == {"a": 1}
    assert doc["config.x.hub_token"] == "run.sh:5" and doc["done"] == MASK


def test_an_undecided_if_test_quoted_in_the_report_shows_no_password(tmp_path: Path, capsys,
                                                                     monkeypatch) -> None:
    """The Python reader quotes an ``if`` test it cannot decide; ``password == 'x'`` in it was
    shown as ``password =[REDACTED] 'x'``: the mask took the second ``=``, not the value."""
    (tmp_path / "train.py").write_text(
        "import os\nfrom accelerate import Accelerator\n"
        "password = os.environ.get('DB_PASSWORD')\n"
        "if password == 'plainpw7':\n    mp = 'fp8'\nelse:\n    mp = 'bf16'\n"
        "Accelerator(mixed_precision=mp)\n")
    monkeypatch.chdir(tmp_path)
    for fmt in ("text", "json", "markdown"):
        main(["check", "--no-smoke", "-v", "--format", fmt, "train.py"])
        out = capsys.readouterr().out
        assert "if password ==" in out and SECRET not in out, fmt
