"""--deep: an import that crashes or hangs is an ERROR finding that changes the exit code (where
the job trains; a warning with the reason elsewhere, issue 24 item 2).

Real child imports of stand-in ``torch`` / ``deepspeed`` packages written into tmp_path (issue 13
item 4: before, only the JSON facts said so, and the exit code was 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.findings import Severity
from preflight.import_findings import RULE_ID, import_failures
from preflight.probes.imports import probe_imports

ROOT = Path(__file__).resolve().parents[1]
FAKES = {
    "crash": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "hang": "import time\ntime.sleep(600)\n",
    "raises": "raise RuntimeError('CUDA driver initialization failed')\n",
}


def _site(tmp_path: Path, **modules: str) -> Path:
    site = tmp_path / "site"
    for name, kind in modules.items():
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text(FAKES[kind])
    return site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


@pytest.mark.parametrize("kind, says", [("crash", "crashed the interpreter"),
                                        ("hang", "did not finish"),
                                        ("raises", "failed")])
def test_a_failed_import_is_an_error_finding(tmp_path: Path, kind: str, says: str) -> None:
    site = _site(tmp_path, torch=kind)
    # The crash, the exception and the missing module must end on their own; only the hang
    # (600 s) runs into the timeout. 10 s first (the hang waits that long); where a loaded machine
    # did not even finish the others' children in it, once more with 60 s: the load does not
    # decide the outcome (a child that ends on its own costs no more for a longer limit).
    ends = ("no_such_module_here",) if kind == "hang" else ("no_such_module_here", "torch")
    for timeout in (10.0, 60.0):
        result = probe_imports(("torch", "no_such_module_here"), timeout=timeout, env=_env(site))
        if all(result.facts[f"import.{m}.error_kind"] != "timeout" for m in ends):
            break
    [finding] = import_failures(result)  # a module that is not installed is not a failure
    assert finding.rule_id == RULE_ID and finding.severity is Severity.ERROR
    assert "import torch" in finding.title and says in finding.title
    assert {e.fact for e in finding.evidence} >= {"import.torch.ok", "import.torch.error_kind"}


def test_te_failures_left_to_their_rules_but_its_hang_is_reported(tmp_path: Path) -> None:
    site = _site(tmp_path, transformer_engine="crash")
    crashed = probe_imports(("transformer_engine",), timeout=60, env=_env(site))   # ends alone
    assert crashed.facts["import.transformer_engine.error_kind"] == "crash"
    assert import_failures(crashed) == []  # FP8D-TE-0011 reports it
    hung = probe_imports(("transformer_engine",), timeout=1.0,
                         env=_env(_site(tmp_path / "h", transformer_engine="hang")))
    assert [f.rule_id for f in import_failures(hung)] == [RULE_ID]


def test_a_clean_import_gives_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "deepspeed").mkdir(parents=True)
    (site / "deepspeed" / "__init__.py").write_text("__version__ = '0.16.0'\n")
    assert import_failures(probe_imports(("deepspeed",), timeout=30, env=_env(site))) == []


@pytest.mark.parametrize("flags, code, severity", [
    ((), 0, "warning"),                                         # this machine: no GPU probed
    (("--strict",), 1, "error"),                                # --strict still fails it
    (("--assume", "host.place=training-node"), 1, "error"),     # where the job trains
])
def test_check_deep_import_crash_is_an_error_where_the_job_trains(
        tmp_path: Path, flags: tuple[str, ...], code: int, severity: str) -> None:
    # Issue 24 item 2: an import that fails here breaks the job only if it trains here; off the
    # training node it is a warning that says so (the exit code follows).
    site = _site(tmp_path, torch="crash")
    out = subprocess.run([sys.executable, "-m", "preflight", "check", "--deep", "--no-smoke",
                          "--format", "json", *flags], capture_output=True, text=True,
                         timeout=300, env={**_env(site), "CI": ""}, cwd=tmp_path)
    assert out.returncode == code, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    found = [f for f in doc["findings"] if f["id"] == RULE_ID]
    assert any("import torch" in f["title"] for f in found), found
    assert {f["severity"] for f in found} == {severity}
    if severity == "warning":
        assert all("training-node-only" in f["tags"] and "Not an error here" in f["message"]
                   for f in found)
