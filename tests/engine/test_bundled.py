"""The bundled rule base: every rule's inline tests and the lint run as part of the suite."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from cputime import cpu_seconds

from preflight.commands import rules as commands
from preflight.commands.rules import run_tests
from preflight.engine import RuleLoadError, RuleSet, bundled_rules_dir, load_rules
from preflight.engine.catalogue import markdown
from preflight.frameworks import rule_areas

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    commands.add_arguments(parser)
    out: list[str] = []
    code = commands.main(parser.parse_args(list(argv)), lambda text, _o: out.append(text))
    return code, "\n".join(out)


def test_bundled_rules_dir_is_the_repo_rules_folder() -> None:
    assert bundled_rules_dir() == Path(__file__).resolve().parents[2] / "rules"


def test_every_bundled_rule_passes_its_inline_tests() -> None:
    code, out = _run("test")
    assert code == 0, out


def test_bundled_rules_lint_clean() -> None:
    code, out = _run("lint")
    assert code == 0, out


def _bundled_ids() -> list[str]:
    """Rule ids for parametrizing; a load error becomes one failing case, not a collection error."""
    try:
        return [r.id for r in load_rules()] or ["(no bundled rules loaded)"]
    except RuleLoadError as exc:
        return [f"(load error: {exc})"]


@pytest.mark.parametrize("rule_id", _bundled_ids())
def test_each_bundled_rule_fires_and_stays_quiet_as_its_tests_say(rule_id: str) -> None:
    rules = load_rules()
    # No skip when nothing loads: an empty rule base is a packaging regression, not "not yet".
    assert len(rules), f"no bundled rules loaded from {bundled_rules_dir()}"
    rule = rules[rule_id]
    assert {"fire", "quiet"} <= {c.expect for c in rule.tests}
    for result in run_tests(RuleSet((rule,))):
        assert result["ok"], result


def test_the_check_fast_path_loads_the_same_rules_without_their_tests() -> None:
    """check loads rules with with_tests=False (tests blanked before parsing): every inline case
    must still come out as expected against those rules, and nothing else may differ."""
    from dataclasses import replace

    full = load_rules()
    quick = load_rules(with_tests=False)
    assert [r.id for r in quick] == [r.id for r in full]
    blanked = 0
    for fast, whole in zip(quick, full):
        assert fast.tests == ()
        assert {k: v for k, v in fast.raw.items() if k != "tests"} == \
            {k: v for k, v in whole.raw.items() if k != "tests"}
        blanked += "tests" not in fast.raw
        # the fast rule's condition, judged by the full rule's own test cases
        for result in run_tests(RuleSet((replace(fast, tests=whole.tests),))):
            assert result["ok"], result
    assert blanked >= len(full) * 0.9, f"the fast path applied to only {blanked} rules"


def test_blanking_tests_keeps_other_lines_and_falls_back_on_odd_layouts(tmp_path: Path) -> None:
    from preflight.engine.loader import parse_file, without_tests

    text = (b"id: X\ntests:\n  - {facts: {a: 1}, expect: fire}\n- {facts: {}, expect: quiet}\n"
            b"modified: '2026-01-01'\n")
    quick = without_tests(text)
    assert quick.count(b"\n") == text.count(b"\n") and b"expect" not in quick
    assert quick.splitlines()[4] == b"modified: '2026-01-01'"
    anchored = b"id: X\ntests:\n  - &case {facts: {}, expect: fire}\nother: *case\n"
    assert without_tests(anchored) is anchored          # an anchor in the tests: leave it
    # flow-style tests whose closing bracket is at column 0: the blanked text does not parse,
    # so the whole file is parsed instead (same rule either way)
    src = (bundled_rules_dir() / "accelerate" / "FP8D-ACC-0001.yaml").read_text()
    head, _, _ = src.partition("\ntests:")
    flow = tmp_path / "FP8D-ACC-0001.yaml"
    flow.write_text(head + "\ntests: [\n  {facts: {intent.fp8: true}, expect: fire}\n]\n")
    rule, problems = parse_file(flow, with_tests=False)
    assert rule is not None and not [p for p in problems if p.level == "error"], problems


def test_every_bundled_rule_file_loads() -> None:
    files = sorted(p.stem for p in bundled_rules_dir().rglob("*.yaml"))
    assert files, f"no rule files under {bundled_rules_dir()}"
    assert sorted(r.id for r in load_rules()) == files


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    expected = markdown(load_rules(), rule_areas())
    assert DOCS.read_text(encoding="utf-8") == expected, (
        "docs/rules.md is stale: run `fp8-doctor rules list --format markdown -o docs/rules.md`")


def test_loading_the_bundled_rules_is_fast() -> None:
    from preflight.engine import loader

    loader._CACHE.clear()
    start = cpu_seconds()
    load_rules()
    elapsed = cpu_seconds() - start
    # CPU seconds, which a shared CI box's load does not stretch (tests/cputime.py); a generous
    # bound all the same: docs/benchmarks.md has the measured numbers
    assert elapsed < 2.0 + 0.02 * len(load_rules())
