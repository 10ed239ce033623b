"""The rules parsed in a thread while the smoke children run (engine/loader.py ``prewarm``, issue
26) against a hostile rule pack (redteam6, issue 21): a pack that breaks, or is mended, between
the thread's read and the check's own (here the smoke child itself rewrites the file: nothing
else runs in between), a rule file that is a FIFO, and a walk of ``/``. The check's own load
decides, from the files as they are when it runs; the thread never hangs the check."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.engine import RuleLoadError, loader
from preflight.smoke import SmokeOptions

RULE: dict[str, Any] = {
    "schema_version": "1.0", "id": "ACME-0001", "title": "an accelerate FP8 job",
    "severity": "warning", "confidence": "inferred",
    "when": {"fact": "config.accelerate.mixed_precision", "op": "eq", "value": "fp8"},
    "message": "m", "fix": {"text": "f"},
    "references": [{"type": "DOCS", "url": "https://example.com/a"}],
    "tests": [{"facts": {"config.accelerate.mixed_precision": "fp8"}, "expect": "fire"},
              {"facts": {"config.accelerate.mixed_precision": "bf16"}, "expect": "quiet"}]}
BROKEN = "id: ACME-0001\nwhen: {fact: [unclosed\n"
# the smoke child: copies $SRC over $DST (atomically), then ends
CHILD = ("import os, shutil; shutil.copy(os.environ['SRC'], os.environ['DST'] + '.new'); "
         "os.replace(os.environ['DST'] + '.new', os.environ['DST'])")


def _spy_prewarm(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What each ``loader.prewarm`` call returned (the thread), with the rule cache emptied."""
    started: list[Any] = []
    real = loader.prewarm

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(real(*args, **kwargs))
        return started[-1]
    monkeypatch.setattr(loader, "prewarm", spy)
    monkeypatch.setattr(loader, "_CACHE", {})
    return started


def _check(tmp_path: Path, first: str, then: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    started = _spy_prewarm(monkeypatch)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "ACME-0001.yaml").write_text(first)
    (tmp_path / "next.yaml").write_text(then)
    job = tmp_path / "accelerate.yaml"
    job.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                   "mixed_precision: fp8\nnum_processes: 8\n")
    options = SmokeOptions(device="cpu", timeout=60, cache=False,
                           command=(sys.executable, "-c", CHILD),
                           env={"SRC": str(tmp_path / "next.yaml"),
                                "DST": str(pack / "ACME-0001.yaml")})
    try:
        return preflight.check([str(job)], smoke=True, smoke_options=options,
                               rules_paths=[str(pack)])
    finally:
        assert started and started[0] is not None      # the thread ran beside the child


def test_a_pack_broken_during_the_smoke_step_is_refused_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuleLoadError) as caught:
        _check(tmp_path, json.dumps(RULE), BROKEN, monkeypatch)
    assert any(p.path.endswith("ACME-0001.yaml") for p in caught.value.problems)


def test_a_pack_mended_during_the_smoke_step_is_evaluated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _check(tmp_path, BROKEN, json.dumps(RULE) + "\n" * 7, monkeypatch)   # size too
    assert report.facts.get("smoke.ran") is True
    assert "ACME-0001" in {f.rule_id for f in report.findings}


@pytest.mark.parametrize("where", ["fifo", "root"])
def test_the_thread_never_waits_on_a_fifo_or_walks_the_disk(tmp_path: Path, where: str,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setattr(loader, "_CACHE", {})
    pack = tmp_path / "pack"
    pack.mkdir()
    if where == "fifo":
        os.mkfifo(pack / "ACME-0001.yaml")
    thread = loader.prewarm([str(pack) if where == "fifo" else "/"], bundled=False)
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert not loader._CACHE            # nothing cached from what does not load



def test_ctrl_c_during_the_smoke_step_with_the_thread_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C while the runner waits for the smoke child and the rules thread parses beside it
    # (as tests/smoke/test_smoke_interrupt.py lands it: from the runner's own wait loop): the
    # check ends with KeyboardInterrupt, nothing joins the thread on the way out, the child is
    # killed and reaped
    import signal

    started = _spy_prewarm(monkeypatch)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "ACME-0001.yaml").write_text(json.dumps(RULE))
    job = tmp_path / "accelerate.yaml"
    job.write_text("compute_environment: LOCAL_MACHINE\nmixed_precision: fp8\n")
    pidfile = tmp_path / "child.pid"
    child = ("import json, os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
             "json.dump({'stage': 'asleep'}, open(sys.argv[3], 'w')); time.sleep(600)")

    def progress(message: str) -> None:
        if message.startswith("smoke child on cpu: asleep"):
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        preflight.check([str(job)], smoke=True, rules_paths=[str(pack)], progress=progress,
                        smoke_options=SmokeOptions(device="cpu", timeout=300, cache=False,
                                                   command=(sys.executable, "-c", child,
                                                            str(pidfile))))
    assert started and started[0] is not None
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)
