"""The failure-mode ledger: the committed docs/coverage.md is what ledger/*.yaml generates, and
the checks that keep it true (duplicate ids, rules that do not exist, missing why) really fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.engine import ledger

ROOT = Path(__file__).resolve().parents[2]
GOOD = """tracker: NVIDIA/TransformerEngine
method: search tool, corpus issues, query "fp8 checkpoint"; 2026-11-24
modes:
  - id: te-1-a
    title: one
    versions: "transformer-engine>=1.6,<1.12"
    references: ["https://github.com/NVIDIA/TransformerEngine/issues/1"]
    status: rule
    rules: [FP8D-TE-0001]
  - id: te-2-b
    title: two
    versions: unknown
    references: ["https://github.com/NVIDIA/TransformerEngine/issues/2"]
    status: not-detectable
    why: numerical only
"""


def _write(tmp_path: Path, text: str, name: str = "NVIDIA__TransformerEngine.yaml") -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_committed_coverage_page_is_current_and_the_ledger_is_clean() -> None:
    page, problems = ledger.build()
    assert problems == []
    assert (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8") == page, \
        "docs/coverage.md is stale: python -m preflight.engine.ledger -o docs/coverage.md"


def test_check_flag_fails_on_a_stale_page(tmp_path: Path) -> None:
    stale = tmp_path / "coverage.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert ledger.main(["--check", str(stale)]) == 1
    stale.write_text(ledger.build()[0], encoding="utf-8")
    assert ledger.main(["--check", str(stale)]) == 0


def test_a_good_file_loads_and_renders_counts(tmp_path: Path) -> None:
    trackers, problems = ledger.load_ledger(_write(tmp_path, GOOD), ["FP8D-TE-0001"])
    assert problems == []
    page = ledger.render(trackers, 1)
    assert "2 failure mode(s) triaged from 1 tracker(s): 1 rule, 1 not-detectable" in page
    assert "| `te-2-b`: two | unknown | not-detectable | numerical only |" in page


@pytest.mark.parametrize("old, new, line", [
    ("id: te-2-b", "id: te-1-a", 10),                       # duplicated id
    ("rules: [FP8D-TE-0001]", "rules: [FP8D-TE-9999]", 4),  # rule that does not exist
    ("    why: numerical only\n", "", 10),                  # not-detectable without why
    ("status: rule", "status: maybe", 4),
    ("issues/2", "blob/main/README.md", 10),                # moving branch
])
def test_each_broken_ledger_is_a_problem_at_the_mode(tmp_path: Path, old: str, new: str,
                                                     line: int) -> None:
    _, problems = ledger.load_ledger(_write(tmp_path, GOOD.replace(old, new, 1)),
                                     ["FP8D-TE-0001"])
    assert problems and {p.line for p in problems} == {line}


def test_the_same_id_in_two_trackers_is_a_problem(tmp_path: Path) -> None:
    _write(tmp_path, GOOD)
    _write(tmp_path, GOOD.replace("NVIDIA/TransformerEngine", "pytorch/ao"), "pytorch__ao.yaml")
    _, problems = ledger.load_ledger(tmp_path, ["FP8D-TE-0001"])
    assert len(problems) == 2 and all("used twice" in p.message for p in problems)


def test_file_name_must_match_tracker_and_unsafe_yaml_is_refused(tmp_path: Path) -> None:
    _, problems = ledger.load_ledger(_write(tmp_path, GOOD, "te.yaml"), ["FP8D-TE-0001"])
    assert problems and problems[0].line == 1
    bad = tmp_path / "x"
    bad.mkdir()
    _write(bad, "tracker: !!python/object/apply:os.system [echo]\n")
    _, problems = ledger.load_ledger(bad, [])
    assert len(problems) == 1 and problems[0].line == 1
