"""Secret-looking env values are compared across ranks by a keyed fingerprint whose key rank 0
makes per run: equal secrets compare equal, different ones are named, and the report's
fingerprint is not a plain hash anyone could check a guess against."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from preflight.cluster.collect import job_env

SECRET = "hunter2"


def test_job_env_fingerprints_depend_on_the_shared_key() -> None:
    env = {"NVTE_HUB_TOKEN": SECRET}
    one, other = b"a" * 32, b"b" * 32
    assert job_env(env, key=one) == job_env(env, key=one)                   # ranks agree
    assert job_env(env, key=one) != job_env(env, key=other)                 # runs differ
    assert job_env(env, key=one) != job_env({"NVTE_HUB_TOKEN": "x"}, key=one)
    plain = hashlib.sha256(SECRET.encode()).hexdigest()[:8]
    assert plain not in job_env(env, key=one)["NVTE_HUB_TOKEN"]


def test_equal_secrets_on_every_rank_are_not_a_difference(torchrun: Callable[..., Any]) -> None:
    """Real torchrun job: every rank holds the same secret, one rank a second, different one."""
    job = torchrun(2, ["--timeout", "60"], per_rank={
        0: f"export NVTE_HUB_TOKEN={SECRET} NVTE_OTHER_TOKEN=qqqXsecret",
        1: f"export NVTE_HUB_TOKEN={SECRET} NVTE_OTHER_TOKEN=qqqYsecret",
    })
    diffs = job.facts()["cluster.diff.env"]
    assert [d["name"] for d in diffs] == ["NVTE_OTHER_TOKEN"]
    values = list(diffs[0]["values"])
    assert len(values) == 2 and all(v.startswith("<masked:") for v in values)
    for secret in ("qqqXsecret", "qqqYsecret", SECRET,
                   hashlib.sha256(b"qqqXsecret").hexdigest()[:8]):
        assert secret not in str(job.report)
