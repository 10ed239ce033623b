"""A check imports only what its run needs (issue 26 item 4: the static check's start-up time).

Each module below was imported by every ``fp8-doctor check`` and is now imported only where it
is used: the frameworks' record types and the reading kit (a check without a job reads no
file), ``preflight.snapshot`` (only ``--snapshot`` replays one), ``datetime`` (only for a date
in a rule file's YAML: the wheel's rule index holds strings), ``difflib`` (only to suggest a
name for a typo). What is asserted is ``sys.modules`` after a real run in a child, never a
timing; the bundled rules come through an index built here from ``rules/``, as the wheel ships
them (a source checkout parses YAML, and PyYAML imports datetime).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from preflight.engine import bundled_rules_dir, index
from preflight.engine.loader import find_rule_files

ROOT = Path(__file__).resolve().parents[2]
NOT_WITHOUT_A_JOB = ("preflight.frameworks._record", "preflight.reading.parse",
                     "preflight.reading.types", "preflight.reading.boundary", "datetime")
NEVER_ON_A_CHECK = ("preflight.snapshot", "difflib")

_CHILD = """\
import io, sys
from pathlib import Path
from preflight.engine import loader
loader._package_dir = lambda: Path({index_dir!r})       # as installed from the wheel
loader.bundled_rules_dir = lambda: Path({rules!r})
from preflight.cli import main
sys.stdout = io.StringIO()
try:
    code = main({argv!r})
except SystemExit as exc:   # a usage error
    code = exc.code
sys.stdout = sys.__stdout__
print(code, sorted(m for m in {watch!r} if m in sys.modules))
"""


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    root = bundled_rules_dir()
    (folder / index.INDEX_NAME).write_text(json.dumps(index.build_index(
        root, find_rule_files([root]))), encoding="utf-8")
    return folder


def _loaded(index_dir: Path, tmp_path: Path, argv: list[str], watch: tuple[str, ...],
            codes: tuple[str, ...] = ("0", "1")) -> str:
    """The modules of ``watch`` imported by ``fp8-doctor ARGV`` run in a fresh child."""
    code = _CHILD.format(index_dir=str(index_dir), rules=str(bundled_rules_dir()), argv=argv,
                         watch=watch)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path)})
    assert res.returncode == 0, res.stderr[-2000:]
    exit_code, _, loaded = res.stdout.strip().partition(" ")
    assert exit_code in codes, res.stdout + res.stderr[-2000:]
    return loaded


def test_a_check_without_a_job_loads_no_reading_kit_snapshot_or_date_code(
        index_dir: Path, tmp_path: Path) -> None:
    argv = ["check", "--no-smoke", "--format", "json"]
    assert _loaded(index_dir, tmp_path, argv, NOT_WITHOUT_A_JOB + NEVER_ON_A_CHECK) == "[]"


def test_a_check_of_the_example_job_loads_no_snapshot_or_difflib(
        index_dir: Path, tmp_path: Path) -> None:
    argv = ["check", "--no-smoke", "--example", "--format", "json"]
    assert _loaded(index_dir, tmp_path, argv, NEVER_ON_A_CHECK) == "[]"


def test_the_watch_list_is_real(index_dir: Path, tmp_path: Path) -> None:
    # The same child does see these modules where a run needs them (a mistyped --assume key is
    # answered with suggestions, a job is read with the reading kit), so an empty list above
    # means "not imported", not "not looked for".
    argv = ["check", "--no-smoke", "--example", "--format", "json"]
    assert "preflight.reading.parse" in _loaded(index_dir, tmp_path, argv, NOT_WITHOUT_A_JOB)
    typo = ["check", "--no-smoke", "--assume", "pkg.torch.versoin=2.5"]
    assert "difflib" in _loaded(index_dir, tmp_path, typo, NEVER_ON_A_CHECK, codes=("2",))
