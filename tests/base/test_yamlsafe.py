"""Tests for preflight.base.yamlsafe: refusals with line numbers, and fidelity on plain YAML."""

from __future__ import annotations

import pytest
import yaml
from cputime import cpu_seconds
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.base.yamlsafe import YamlError, load


def test_key_lines_by_path() -> None:
    loaded = load("a: 1\nb:\n  c: [1, 2]\n  d: x\n")
    assert loaded.data == {"a": 1, "b": {"c": [1, 2], "d": "x"}}
    assert loaded.lines[("b", "d")] == 4
    assert loaded.line_of(("b", "c", 1)) == 3
    assert loaded.line_of(("b", "zz")) == 2  # nearest ancestor


@pytest.mark.parametrize("text, message, line", [
    ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1)", 3),
    ("x: !!python/object/apply:os.system ['true']\n", "could not determine a constructor", 1),
    ("a: [1, 2\n", "did not find expected", 2),
    ("a: &a [*a]\n", "recursive alias", 1),
    ("k:\n  - 1\n - 2\n", "", 3),
])
def test_refusals_name_the_line(text: str, message: str, line: int) -> None:
    with pytest.raises(YamlError) as err:
        load(text)
    assert message in err.value.message
    assert err.value.line == line


def test_binary_and_non_utf8_are_refused() -> None:
    with pytest.raises(YamlError, match="binary"):
        load(b"\x00\x01\x02")
    with pytest.raises(YamlError, match="not UTF-8"):
        load(b"a: \xff\xfe\n")


def test_billion_laughs_is_refused_fast() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    start = cpu_seconds()
    with pytest.raises(YamlError, match="expands to more than"):
        load("\n".join(lines) + "\n")
    assert cpu_seconds() - start < 1.0     # CPU time: not stretched by load (tests/cputime.py)


def test_merge_keys_are_not_duplicates() -> None:
    assert load("b: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n").data["d"] == {"x": 1, "y": 2}


def test_empty_document_is_none() -> None:
    assert load("").data is None
    assert load("# only a comment\n").data is None


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=15),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(plain)
def test_agrees_with_safe_load_on_plain_documents(value: object) -> None:
    text = yaml.safe_dump(value)
    assert load(text).data == yaml.safe_load(text)


# --- the fast path for anchor-free documents must be indistinguishable from the full path ---

FAST_CASES = [
    "a: 1\nb: [x, {c: 2.5, d: null, e: true}]\n",
    "when: 2026-11-21\nat: 2001-12-14t21:59:43.10-05:00\n",         # timestamps
    "v: 2.10\nw: '2.10'\nx: 0x1F\ny: .inf\nz: ~\n",
    "s: !!set {a, b}\n",                                               # falls back: set tag
    "b: !!binary aGVsbG8=\n",                                          # falls back: binary
    "m:\n  <<: {x: 1}\n  y: 2\n",                                      # merge key without anchor
    "? [1, 2]\n: complex key\n",                                       # non-scalar key
    "1: a\n0x1: b\n",                                                  # same key after construction
    "- " * 30 + "deep\n",
    "k: !custom x\n",
]


@pytest.mark.parametrize("text", FAST_CASES)
def test_fast_path_equals_full_path(text: str) -> None:
    from preflight.base.yamlsafe import _load

    def outcome(fast: bool) -> object:
        try:
            got = _load(text, fast=fast)
            return got.data, got.lines
        except YamlError as exc:
            return "error", exc.message, exc.line

    assert outcome(True) == outcome(False)


@pytest.mark.parametrize("text, line", [
    ("a: 1\nb:\n  c: 1\n  c: 2\n", 4),
    ("- {x: 1, x: 2}\n", 1),
    ("a: !!python/object/apply:os.system ['true']\na: 2\n", 2),  # duplicate reported first
])
def test_fast_path_refusals_are_the_same(text: str, line: int) -> None:
    from preflight.base.yamlsafe import _load

    with pytest.raises(YamlError) as fast:
        _load(text, fast=True)
    with pytest.raises(YamlError) as full:
        _load(text, fast=False)
    assert (fast.value.message, fast.value.line) == (full.value.message, full.value.line)
    assert fast.value.line == line


def test_fast_path_equals_full_path_on_every_rule_file() -> None:
    from pathlib import Path

    from preflight.base.yamlsafe import _load

    root = Path(__file__).resolve().parents[2]
    files = sorted((root / "rules").rglob("*.yaml")) + sorted((root / "tests").rglob("*.yaml"))
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        try:
            fast = _load(text, fast=True)
        except YamlError as exc:
            with pytest.raises(YamlError) as full:
                _load(text, fast=False)
            assert (exc.message, exc.line) == (full.value.message, full.value.line), f
            continue
        full_ = _load(text, fast=False)
        assert (fast.data, fast.lines) == (full_.data, full_.lines), f


@settings(max_examples=60, deadline=None)
@given(plain)
def test_fast_path_agrees_on_plain_documents(value: object) -> None:
    from preflight.base.yamlsafe import _load

    text = yaml.safe_dump(value)
    assert "&" in text or _load(text, fast=True) == _load(text, fast=False)


# --- nesting: libyaml's composer recurses per level and segfaults ~30,000 deep ---------------
# Each case runs the real loader in a child process, so a crash fails the test (exit -11)
# instead of killing pytest. 50,000 levels crashes an unguarded load on an 8 MB stack.

DEEP = 50_000
DEEP_CASES = {  # name: (text, line of the first level too deep)
    "flow sequences": ("a: " + "[" * DEEP + "]" * DEEP + "\n", 1),
    "flow mappings": ("a: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n", 1),
    "block sequences": ("- " * DEEP + "x\n", 1),                # compact: one line, no indent
    "block mappings": ("? " * DEEP + "x\n", 1),                 # explicit keys nest compactly
    "mixed block": ("k:\n" + "  - ? " * (DEEP // 2) + "x\n", 2),
    "block then flow": ("- " * 30 + "[" * DEEP + "]" * DEEP + "\n", 1),
    # Indented block mappings: 50,000 levels would take 1.25 GB of spaces; 2,000 show the guard.
    "indented block mappings": ("".join(" " * i + f"k{i}:\n" for i in range(2000)) + "v\n", 65),
    "indented block sequences": ("".join(" " * i + "-\n" for i in range(2000)) + "x\n", 65),
    "CR line breaks": ("".join(" " * i + f"k{i}:\r" for i in range(2000)) + "v\r", 65),
}
_CHILD = """
import sys
from preflight.base import yamlsafe
try:
    yamlsafe.load(sys.stdin.buffer.read())
except yamlsafe.YamlError as exc:
    print(exc.line, exc.message)
    sys.exit(3)
print("loaded")
"""


@pytest.mark.parametrize("text, line", DEEP_CASES.values(), ids=DEEP_CASES.keys())
def test_deep_nesting_is_an_error_with_a_line_not_a_crash(text: str, line: int) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    start = cpu_seconds()          # with the child's, once reaped (tests/cputime.py)
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=text.encode(),
                          capture_output=True, env=env, timeout=60, check=False)
    assert proc.returncode == 3, (proc.returncode, proc.stderr.decode()[-400:])
    got, _, message = proc.stdout.decode().strip().partition(" ")
    assert message.startswith("collections nested more than 64 deep"), message
    assert int(got) == line
    assert cpu_seconds() - start < 20


@pytest.mark.parametrize("text, line", [
    ("a: " + "[" * 64 + "]" * 64 + "\n", 1),                    # the mapping is level 1
    ("ok: 1\nb: x\nc: " + "[" * 70 + "]" * 70 + "\n", 3),
    ("".join("  " * i + f"k{i}:\n" for i in range(70)) + "  " * 70 + "v\n", 65),
])
def test_depth_error_names_the_line_of_the_first_level_too_deep(text: str, line: int) -> None:
    with pytest.raises(YamlError, match="nested more than 64 deep") as err:
        load(text)
    assert err.value.line == line


@pytest.mark.parametrize("text", [
    "a: " + "[" * 63 + "]" * 63 + "\n",                         # exactly the limit
    "a: '" + "[" * 500 + "'\nb: \"" + "{" * 500 + "\"\n",       # brackets in strings
    "m: |\n" + "".join(" " * (i + 2) + "[\n" for i in range(300)),  # in a block scalar
    "# " + "[" * 1000 + "\nk: v\n",                              # in a comment
])
def test_shallow_documents_with_many_brackets_still_load(text: str) -> None:
    load(text)  # the cheap bound is over the limit; the exact count says it is shallow


def test_every_bundled_rule_is_far_from_the_depth_limit() -> None:
    from pathlib import Path

    from preflight.base.yamlsafe import check_depth

    for f in sorted((Path(__file__).resolve().parents[2] / "rules").rglob("*.yaml")):
        check_depth(f.read_text(encoding="utf-8"), limit=20)


def _nest(depth: int, leaf: object, kinds: list[bool]) -> object:
    for i in range(depth):
        leaf = {"k": leaf} if kinds[i % len(kinds)] else [leaf]
    return leaf


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 90), st.lists(st.booleans(), min_size=1, max_size=5),
       st.sampled_from([False, None, True]), st.integers(2, 6))
def test_depth_guard_is_exact_in_every_style(depth: int, kinds: list[bool], flow: bool | None,
                                             indent: int) -> None:
    # The cheap bound may only ever send a document on to the exact count, never let a too-deep
    # one through: in block, flow and mixed styles, at any indentation.
    from preflight.base.yamlsafe import check_depth

    value = _nest(depth, "x", kinds)
    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent, width=10_000)
    if _depth(value) > 64:
        with pytest.raises(YamlError, match="nested more than 64 deep"):
            check_depth(text)
    else:
        check_depth(text)
