"""Each kind of defective rule file gives one clear problem naming the file and the line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from preflight.commands.rules import lint_problems
from preflight.engine import RuleLoadError, load_rules

BAD = Path(__file__).parent / "data" / "bad"

# kind -> (line, fragment of the message, caught by load (True) or only by lint (False))
TABLE = {
    "python_tag": (3, "could not determine a constructor for the tag", True),
    "duplicate_key": (6, "duplicate key 'severity' (first at line 4)", True),
    "unquoted_version": (9, "2.10 is not quoted, so YAML reads it as a number", True),
    "unquoted_test_version": (16, "1.10 is not quoted, so YAML reads it as a number", True),
    "unknown_fact": (8, "unknown fact 'intent.fp9'", True),
    "unknown_operator": (8, "unknown operator 'equals'", True),
    "bad_regex": (8, "bad regular expression 'NVIDIA H100('", True),
    "catastrophic_regex": (8, "regular expression '(a+)+$' can take exponential time", True),
    "bad_specifier": (9, "'<<2.0' is not a PEP 440 specifier clause", True),
    "bad_cc": (8, "'9' is not a compute capability", True),
    "bad_osv_event": (9, "unknown OSV event 'fixd'", True),
    "type_mismatch": (8, "lt cannot compare fact gpu.name of type str", True),
    "unknown_placeholder": (10, "placeholder {pkg.accelerate.versoin} names an unknown fact", True),
    "missing_references": (1, "every rule needs at least one typed reference", True),
    "duplicate_id": (3, "duplicate rule id 'FP8D-ACC-0009'", True),
    "missing_test_kinds": (15, "no test case that expects 'quiet'", False),
    "wrong_file_name": (2, "does not match its file name 'FP8D-ACC-0010.yaml'", False),
    # A pack may use its own prefix (ACME-0001); ACC-9 follows no scheme at all.
    "bad_id_scheme": (2, "does not follow PREFIX-NNNN or PREFIX-AREA-NNNN", False),
    "bad_fp8d_area": (2, "does not follow FP8D-<AREA>-NNNN", False),
    # intent.backend is one of te | torchao | msamp | none (registry choices): never matches
    "outside_vocabulary": (6, "no reader produces that value", False),
}


def _file_of(folder: Path, message: str) -> Path:
    """The file a message starts with (the folders hold one file, duplicate_id two)."""
    return next(f for f in sorted(folder.glob("*.yaml")) if message.startswith(f"{f}:"))


@pytest.mark.parametrize("kind", sorted(TABLE))
def test_lint_reports_exactly_one_problem_with_file_and_line(kind: str) -> None:
    line, fragment, _ = TABLE[kind]
    folder = BAD / kind
    problems = lint_problems([str(folder)])
    errors = [p for p in problems if p.level == "error"]
    assert len(errors) == 1, [str(p) for p in problems]
    text = str(errors[0])
    assert fragment in text
    assert text.startswith(f"{_file_of(folder, text)}:{line}: ")


@pytest.mark.parametrize("kind", sorted(k for k, v in TABLE.items() if v[2]))
def test_load_raises_on_the_first_problem_naming_file_and_line(kind: str) -> None:
    line, fragment, _ = TABLE[kind]
    with pytest.raises(RuleLoadError) as info:
        load_rules([str(BAD / kind)])
    text = str(info.value)
    assert fragment in text
    assert f".yaml:{line}: " in text
    assert "\n" not in text


@pytest.mark.parametrize("kind", sorted(k for k, v in TABLE.items() if not v[2]))
def test_lint_only_defects_still_load(kind: str) -> None:
    assert len(load_rules([str(BAD / kind)])) == 1


def test_unknown_extra_key_is_a_warning_not_an_error() -> None:
    folder = BAD / "unknown_extra_key"
    ruleset = load_rules([str(folder)])
    assert len(ruleset) == 1
    assert [str(w) for w in ruleset.warnings] == [
        f"{folder / 'FP8D-ACC-0009.yaml'}:6: warning: unknown key 'severty' ignored "
        "(not in rule schema 1.x)"]
    problems = lint_problems([str(folder)])
    assert [p.level for p in problems] == ["warning"]


def test_many_bad_files_are_all_collected_for_lint() -> None:
    kinds = [k for k, v in TABLE.items() if v[2] and k != "duplicate_id"]
    problems = lint_problems([str(BAD / k) for k in kinds])
    errors = [p for p in problems if p.level == "error"]
    assert len(errors) == len(kinds)
    with pytest.raises(RuleLoadError, match=r"and \d+ more problem"):
        load_rules([str(BAD / k) for k in kinds])


def test_python_tag_never_runs_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    f = tmp_path / "FP8D-ACC-0001.yaml"
    f.write_text(f'id: !!python/object/apply:os.system ["touch {marker}"]\n')
    with pytest.raises(RuleLoadError):
        load_rules([str(f)])
    assert not marker.exists()


def test_a_rule_nested_thousands_deep_is_one_load_error(tmp_path: Path) -> None:
    f = tmp_path / "FP8D-ACC-0100.yaml"
    f.write_text("id: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(RuleLoadError,
                       match="FP8D-ACC-0100.yaml:1: collections nested more than 64 deep"):
        load_rules([str(f)])


def test_missing_folder_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(RuleLoadError, match="no such rule file or folder"):
        load_rules([str(tmp_path / "nope")])


@pytest.mark.parametrize(("facts", "fragment"), [
    ("{intent.fp8: \"yes\", pkg.accelerate.version: \"1.5\"}", "'yes' is not a bool"),
    ("{intent.fp8: true, gpu.count: \"8\", pkg.accelerate.version: \"1.5\"}", "'8' is not a int"),
    ("{intent.fp8: true, pkg.accelerate.version: \"1.5\", intent.fp9: true}",
     "unknown fact 'intent.fp9'"),
])
def test_test_case_facts_are_checked(tmp_path: Path, facts: str, fragment: str) -> None:
    src = (BAD / "unknown_extra_key" / "FP8D-ACC-0009.yaml").read_text().replace(
        "severty: error\n", "")
    lines = src.splitlines()
    lines[15] = f"  - {{facts: {facts}, expect: fire}}"
    f = tmp_path / "FP8D-ACC-0009.yaml"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(RuleLoadError) as info:
        load_rules([str(f)])
    assert str(info.value).startswith(f"{f}:16: ")
    assert fragment in str(info.value)


def test_unquoted_version_in_affected(tmp_path: Path) -> None:
    src = (BAD / "unknown_extra_key" / "FP8D-ACC-0009.yaml").read_text().replace(
        "severty: error\n", "affected:\n  - package: accelerate\n"
                           "    ranges: [{introduced: \"1.0\", fixed: 2.10}]\n")
    f = tmp_path / "FP8D-ACC-0009.yaml"
    f.write_text(src)
    with pytest.raises(RuleLoadError, match=r':8: versions must be quoted strings: 2\.10 is not'):
        load_rules([str(f)])


# --- small rule-file checks ----------------------------------------------------------------------

SAMPLE = Path(__file__).parent / "data" / "rules" / "acc" / "FP8D-ACC-0001.yaml"


def _sample_with(tmp_path: Path, old: str, new: str) -> Path:
    text = SAMPLE.read_text()
    assert old in text
    f = tmp_path / SAMPLE.name
    f.write_text(text.replace(old, new, 1))
    return f


@pytest.mark.parametrize("aliases, line, message", [
    ("aliases: [FP8D-ACC-0001]", 3, "alias 'FP8D-ACC-0001' is the rule's own id"),
    ("aliases:\n  - FP8D-ACC-0900\n  - FP8D-ACC-0001", 5, "alias 'FP8D-ACC-0001' is the rule's"),
    ("aliases: [FP8D-ACC-0900, FP8D-ACC-0900]", 3, "alias 'FP8D-ACC-0900' is listed twice"),
])
def test_alias_equal_to_the_own_id_is_an_error(tmp_path: Path, aliases: str, line: int,
                                               message: str) -> None:
    f = _sample_with(tmp_path, "aliases: []", aliases)
    with pytest.raises(RuleLoadError, match=re.escape(f"{f.name}:{line}: {message}")):
        load_rules([str(f)])


@pytest.mark.parametrize("old, new, line", [
    ("severity: error\n", "severity: error\n<<: {severity: warning}\n", 6),
    ("fix:\n", "defaults: &d {text: Upgrade.}\nfix:\n  <<: *d\n", 21),
])
def test_merge_keys_are_refused_in_rule_files(tmp_path: Path, old: str, new: str,
                                              line: int) -> None:
    f = _sample_with(tmp_path, old, new)
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(f)])
    assert str(err.value.problems[0]) == (
        f"{f}:{line}: YAML merge keys (<<) are not allowed in a rule file: write every key out "
        "in the rule itself")


def test_a_quoted_merge_lookalike_is_not_a_merge_key(tmp_path: Path) -> None:
    f = _sample_with(tmp_path, "title: FP8 silently not applied under DeepSpeed",
                     "title: \"FP8 silently << not applied: under DeepSpeed\"")
    assert load_rules([str(f)]).get("FP8D-ACC-0001") is not None


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_an_empty_rule_file_is_an_error_on_line_1(tmp_path: Path, text: str) -> None:
    f = tmp_path / "FP8D-ACC-0100.yaml"
    f.write_text(text)
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(f)])
    assert [str(p) for p in err.value.problems] == [
        f"{f}:1: the rule file is empty: a rule file is one YAML mapping "
        "(id, title, severity, when, ...)"]


@pytest.mark.parametrize("fact, value, message", [
    ("gpu.min_cc", "[1]", "test fact gpu.min_cc is a cc: its value must be a quoted "
                          "\"major.minor\" string such as \"8.9\", not a list [1]"),
    ("gpu.min_cc", "{a: 1}", "not a mapping {'a': 1}"),
    ("gpu.min_cc", "true", "not the bool True"),
    ("gpu.min_cc", "null", "not null None"),
    ("pkg.torch.version", "[2, 5]", "test fact pkg.torch.version is a version: its value must "
                                    "be a quoted version string such as \"2.5.1\", not a list"),
    ("gpu.min_cc", "8.9", "is not quoted, so YAML reads it as a number"),  # unchanged
])
def test_a_cc_or_version_test_fact_of_the_wrong_shape_says_so(
        tmp_path: Path, fact: str, value: str, message: str) -> None:
    f = _sample_with(tmp_path, "{facts: {intent.fp8: true, intent.distributed: deepspeed, "
                               "pkg.accelerate.version: \"1.2.1\"}, expect: fire}",
                     f"{{facts: {{intent.fp8: true, intent.distributed: deepspeed, "
                     f"pkg.accelerate.version: \"1.2.1\", {fact}: {value}}}, expect: fire}}")
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(f)])
    got = str(err.value.problems[0])
    assert got.startswith(f"{f}:26: ") and message in got, got
    if value != "8.9":  # a list is not "an unquoted number"
        assert "reads it as a number" not in got, got


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "preflight", *argv], capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)})


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_in_a_rule_folder_is_refused_not_waited_on(tmp_path: Path) -> None:
    # issue 13 item 2: `rules lint` and `check --rules` hung forever on a FIFO named *.yaml.
    import os
    import shutil

    good = next(Path(__file__).resolve().parents[2].glob("rules/te/FP8D-TE-0001.yaml"))
    shutil.copy(good, tmp_path / good.name)
    fifo = tmp_path / "FP8D-TE-0999.yaml"
    os.mkfifo(fifo)
    with pytest.raises(RuleLoadError) as err:
        load_rules([tmp_path])
    [problem] = err.value.problems
    assert problem.path == str(fifo) and "FIFO" in problem.message
    lint = _cli("rules", "lint", str(tmp_path))
    assert lint.returncode == 1 and f"{fifo}:" in lint.stdout + lint.stderr
    check = _cli("check", "--no-smoke", "--rules", str(tmp_path))
    assert check.returncode == 2 and f"{fifo}:" in check.stderr
    assert "Traceback" not in check.stderr + lint.stderr
    with pytest.raises(RuleLoadError) as err:  # named on its own
        load_rules([fifo])
    assert "FIFO" in err.value.problems[0].message


def test_a_rule_file_linked_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    link = tmp_path / "FP8D-TE-0998.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(RuleLoadError) as err:
        load_rules([tmp_path])
    assert "character device" in err.value.problems[0].message
