"""The frameworks registry is built on first use, and KINDS (which --help and a check with no job
config read without importing the readers) names the records in order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import preflight.frameworks as fw


def test_kinds_are_the_records_in_detection_order() -> None:
    assert fw.KINDS == tuple(f.kind for f in fw.FRAMEWORKS) == tuple(fw.BY_KIND)
    assert set(fw.FORMATS) == set(fw.KINDS)


def test_a_check_with_no_job_config_loads_no_reader() -> None:
    code = ("import sys; from preflight import api; api.collect_facts(api.CheckOptions()); "
            "print(sorted(m for m in sys.modules if m.startswith('preflight.frameworks.') "
            "and not m.split('.')[-1].startswith('_')))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=root, check=True,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                              "HOME": "/nonexistent"})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_cli_check_with_no_job_loads_no_reader(tmp_path: Path) -> None:
    # the CLI checks its paths before the API runs (FILE.py::NAME included): that must stay light
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "preflight", "check",
                          "--no-smoke", "--format", "json"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path)})
    loaded = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
              if line.startswith("import time:")}
    readers = sorted(m for m in loaded if m.startswith(("preflight.frameworks.", "preflight.jobs."))
                     and m.rsplit(".", 1)[-1] not in ("_record", "_view", "_derived", "_index",
                                                       "parse", "types", "defaults", "formats",
                                                       "boundary"))
    assert readers == [], readers
