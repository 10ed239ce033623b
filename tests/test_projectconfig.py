"""preflight.projectconfig: the nearest pyproject.toml's [tool.fp8-doctor] table."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.findings import FailOn
from preflight.projectconfig import ProjectConfigError, find_pyproject, load_project_config


def test_the_nearest_pyproject_above_the_first_path_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fp8-doctor]\nstrict = true\n")
    job = tmp_path / "team" / "job"
    job.mkdir(parents=True)
    (job / "a.yaml").write_text("x: 1\n")
    assert find_pyproject([str(job / "a.yaml")]) == str(tmp_path / "pyproject.toml")
    (tmp_path / "team" / "pyproject.toml").write_text('[tool.fp8-doctor]\nfail-on = "info"\n')
    found = find_pyproject([str(job)])
    assert found == str(tmp_path / "team" / "pyproject.toml")
    config = load_project_config(found)
    assert config.fail_on is FailOn.INFO and config.strict is None


def test_paths_in_the_table_are_relative_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.fp8-doctor]\nrules = ["rules"]\nbaseline = "b.json"\n'
                    'assume = {"gpu" = "H100", "gpu.count" = 8}\n')
    config = load_project_config(str(path))
    assert config.rules == (str(tmp_path / "rules"),)
    assert config.baseline == str(tmp_path / "b.json")
    assert config.assume == {"gpu": "H100", "gpu.count": "8"}


def test_no_table_is_no_defaults_and_a_bad_one_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "fp8-doctor-user"\n')
    assert load_project_config(str(path)).path is None
    path.write_text('[project]\nname = "x"\n\n[tool.fp8-doctor]\nignore = "FP8D-ACC-0001"\n')
    with pytest.raises(ProjectConfigError, match=f"{path}:4: ignore must be a list"):
        load_project_config(str(path))
