"""The Python API's input handling: ``preflight.check`` / ``assert_ready`` take one path or many.

Real checks on this machine (no smoke step), with the bundled example job as the config.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.errors import UserInputError

EXAMPLE = Path(preflight.__file__).parent / "examples" / "accelerate_fp8_deepspeed.yaml"


def _no_such(report: Any) -> list[str]:
    return [f.message for f in report.findings if "no such file" in f.message]


@pytest.mark.parametrize("one", [str(EXAMPLE), EXAMPLE], ids=["str", "PathLike"])
def test_one_path_is_one_path_not_its_characters(one: Any) -> None:
    # A str used to be iterated: one "path" per character ("m: no such file or folder", ...).
    as_one = preflight.check(one)
    as_list = preflight.check([one])
    assert _no_such(as_one) == []
    assert as_one.inputs == as_list.inputs
    assert any(str(EXAMPLE) in i for i in as_one.inputs)
    assert {f.rule_id for f in as_one.findings} == {f.rule_id for f in as_list.findings}


def test_assert_ready_takes_one_path_too() -> None:
    report = preflight.assert_ready(str(EXAMPLE), smoke=False, fail_on="never")
    assert _no_such(report) == [] and any(str(EXAMPLE) in i for i in report.inputs)
    with pytest.raises(preflight.PreflightError) as err:
        preflight.assert_ready(str(EXAMPLE), smoke=False)
    assert "FP8D-ACC-0003" in str(err.value)


def test_rules_paths_takes_one_folder(tmp_path: Path) -> None:
    # An empty folder holds no rule: the usage error names the folder, not its characters.
    with pytest.raises(UserInputError, match=f"found in {re.escape(str(tmp_path))} "):
        preflight.check(str(EXAMPLE), rules_paths=str(tmp_path))


@pytest.mark.parametrize("bad, says", [
    (5, "paths must be a path (str or os.PathLike) or a list of paths, not int"),
    (None, "paths must be a path (str or os.PathLike) or a list of paths, not NoneType"),
    (b"job.yaml", "not bytes"),
    ({"job.yaml": 1}, "not dict"),
    ([str(EXAMPLE), 3], "paths must hold paths (str or os.PathLike), not int: 3"),
    ([b"job.yaml"], "not bytes"),
])
def test_other_types_are_a_clear_type_error(bad: Any, says: str) -> None:
    with pytest.raises(TypeError, match=re.escape(says)):
        preflight.check(bad)
    with pytest.raises(TypeError, match="must"):
        preflight.assert_ready(bad, smoke=False)
