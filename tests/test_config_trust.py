"""Trust of configuration (issue 21 item 4): ``[tool.fp8-doctor]`` and baselines are used only
from files owned by the user or root that no other user can change, as git does for
``safe.directory``; a file skipped is a warning in the report naming it and why.

Before, another user's ``pyproject.toml`` in ``/tmp`` (a world-writable folder) decided the
result of a check under ``/tmp``: here its ``fail-on = "never"`` would turn an error into exit 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostenv import can_chown_to

from preflight import cli
from preflight.redact import redact_text
from preflight.trust import untrusted

DS = '{"train_batch_size": 8, "fp16": {"enabled": true}, "zero_optimization": {"stage": 3}}\n'
ACC = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: fp8\n"
       "deepspeed_config:\n  deepspeed_config_file: ds.json\nnum_processes: 8\n")
OTHER = 4242            # a user id that is neither the test's user nor root
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
# Planting another user's file needs chown: root, and, in a user namespace (a rootless CI
# container), the other ids mapped; asked of the machine, not read off the user id.
CHOWN = can_chown_to(OTHER, OTHER) and can_chown_to(OTHER + 1, OTHER + 1)


def shown(path: Path) -> str:
    """``path`` as the report shows it: a tmp_path under a home folder (TMPDIR there) is ~/..."""
    return redact_text(str(path))


def _job(folder: Path) -> Path:
    job = folder / "job"
    job.mkdir(parents=True)
    (job / "ds.json").write_text(DS)
    (job / "acc.yaml").write_text(ACC)
    return job


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    try:
        code = cli.main(["check", "--no-smoke", "--format", "json", *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def _untrusted(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["id"] == "FP8D-CFG-UNTRUSTED"]


def test_a_world_writable_pyproject_is_not_used_and_the_report_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = _job(tmp_path)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.fp8-doctor]\nfail-on = "never"\n')
    code, doc = _check(capsys, str(job))
    assert code == 0 and doc["fail_on"] == "never"          # the team's own file: used
    pyproject.chmod(0o666)
    code, doc = _check(capsys, str(job))
    assert code == 1 and doc["fail_on"] == "error"           # skipped: the errors fail again
    (finding,) = _untrusted(doc)
    assert finding["severity"] == "warning" and shown(pyproject) in finding["message"]
    assert "world-writable" in finding["message"]


@pytest.mark.skipif(not CHOWN, reason="planting another user's file needs chown (root)")
def test_another_users_pyproject_in_a_shared_folder_is_not_used(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)                                     # like /tmp
    job = _job(shared)
    planted = shared / "pyproject.toml"
    planted.write_text('[tool.fp8-doctor]\nfail-on = "never"\nignore = ["FP8D-DS-0002"]\n')
    os.chown(planted, OTHER, OTHER)
    code, doc = _check(capsys, str(job))
    assert code == 1 and doc["ignored"] == []
    (finding,) = _untrusted(doc)
    assert "uid 4242" in finding["message"] and "not by you or root" in finding["message"]
    os.chown(planted, os.getuid(), os.getgid())              # one's own file in /tmp: used
    code, doc = _check(capsys, str(job))
    assert code == 0 and not _untrusted(doc)


def test_the_rules_by_owner_and_folder(tmp_path: Path) -> None:
    me = os.getuid()
    mine = tmp_path / "mine.toml"
    mine.write_text("")
    owner = me
    if ROOT:                         # root's files are trusted by everyone: give it to a user
        if not CHOWN:
            pytest.skip("root here cannot chown to another user (an id not mapped)")
        owner = OTHER + 1
        os.chown(mine, owner, owner)
    assert untrusted(str(mine), uid=owner) is None
    assert "owned by" in str(untrusted(str(mine), uid=OTHER))
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    (open_folder / "f.toml").write_text("")
    open_folder.chmod(0o777)                                 # world-writable, no sticky bit
    assert "writable by every user" in str(untrusted(str(open_folder / "f.toml"), uid=me))
    open_folder.chmod(0o1777)                                # sticky and the user's own: fine
    assert untrusted(str(open_folder / "f.toml"), uid=me) is None


@pytest.mark.skipif(not CHOWN, reason="needs chown to another user and group (root)")
def test_a_file_another_user_can_change_through_a_group_or_a_folder_is_not_used(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Red team: a root-owned pyproject.toml writable by another group, or in a folder another
    user owns (who can replace it at will), decided the result: ``fail-on = "never"``."""
    shared = tmp_path / "shared"
    job = _job(shared)
    pyproject = shared / "pyproject.toml"
    pyproject.write_text('[tool.fp8-doctor]\nfail-on = "never"\n')
    code, doc = _check(capsys, str(job))
    assert code == 0                                          # the user's own file: used
    os.chown(pyproject, 0, OTHER)
    pyproject.chmod(0o664)                                    # group OTHER may write it
    code, doc = _check(capsys, str(job))
    assert code == 1 and "group" in _untrusted(doc)[0]["message"]
    pyproject.chmod(0o644)
    os.chown(shared, OTHER, OTHER)                            # another user's folder
    code, doc = _check(capsys, str(job))
    assert code == 1 and "could replace it" in _untrusted(doc)[0]["message"]
    os.chown(shared, 0, OTHER)
    shared.chmod(0o775)                                       # a folder another group writes
    code, doc = _check(capsys, str(job))
    assert code == 1 and _untrusted(doc)
    shared.chmod(0o1775)                                      # sticky and root's: fine again
    code, doc = _check(capsys, str(job))
    assert code == 0 and not _untrusted(doc)


def test_the_users_own_group_may_write(tmp_path: Path) -> None:
    """Where each user has a group of their own, umask 002 makes files group-writable: that
    group is the user's, not another user's."""
    mine = tmp_path / "mine.toml"
    mine.write_text("")
    os.chown(mine, os.getuid(), os.getgid())
    mine.chmod(0o664)
    assert untrusted(str(mine)) is None


@pytest.mark.parametrize("how", ["world-writable", "other-owner"])
def test_an_untrusted_baseline_accepts_nothing(tmp_path: Path, how: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if how == "other-owner" and not CHOWN:
        pytest.skip("needs chown to another user (root)")
    job = _job(tmp_path)
    base = tmp_path / "fp8-baseline.json"
    assert cli.main(["check", "--no-smoke", str(job), "--write-baseline", str(base)]) == 0
    code, doc = _check(capsys, str(job), "--baseline", str(base))
    assert code == 0 and doc["baselined"]
    if how == "world-writable":
        base.chmod(0o666)
    else:
        os.chown(base, OTHER, OTHER)
    code, doc = _check(capsys, str(job), "--baseline", str(base))
    assert code == 1 and not doc.get("baselined")
    (finding,) = _untrusted(doc)
    assert shown(base) in finding["message"] and "no finding was accepted" in finding["message"]
