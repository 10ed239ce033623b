"""Operator truth tables (present / absent / Unknown facts) and three-valued logic properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.engine.conditions import All, AnyOf, Leaf, Node, Not
from preflight.facts import Unknown

from .helpers import compile_when

U = Unknown("probe failed")
ABSENT = object()

# (fact, op, value, fact value, expected)   expected: True / False / None (undetermined)
TABLE: list[tuple[str, str, Any, Any, bool | None]] = [
    ("intent.fp8", "eq", True, True, True),
    ("intent.fp8", "eq", True, False, False),
    ("intent.fp8", "eq", True, 1, False),           # JSON: true is not 1
    ("intent.fp8", "eq", True, ABSENT, False),
    ("intent.fp8", "eq", True, U, None),
    ("intent.fp8", "ne", True, False, True),
    ("intent.fp8", "ne", True, ABSENT, False),      # a leaf on an absent fact is false
    ("intent.fp8", "ne", True, U, None),
    ("intent.zero_stage", "eq", 3, 3, True),
    ("intent.zero_stage", "eq", 3, "3", False),     # type differs at run time: false
    ("intent.zero_stage", "lt", 3, 2, True),
    ("intent.zero_stage", "lt", 3, 3, False),
    ("intent.zero_stage", "le", 3, 3, True),
    ("intent.zero_stage", "gt", 1, 3, True),
    ("intent.zero_stage", "ge", 3, 3, True),
    ("intent.zero_stage", "ge", 3, "3", False),
    ("intent.zero_stage", "ge", 3, True, False),
    ("intent.zero_stage", "ge", 3, ABSENT, False),
    ("intent.zero_stage", "ge", 3, U, None),
    ("config.deepspeed.zero_optimization.stage", "ge", 3, "auto", False),  # 'any' fact
    ("config.deepspeed.zero_optimization.stage", "eq", "auto", "auto", True),
    ("gpu.min_cc", "lt", "8.9", "8.0", True),
    ("gpu.min_cc", "lt", "8.9", "8.9", False),
    ("gpu.min_cc", "lt", "10.0", "9.0", True),     # tuples, not strings: "9.0" < "10.0"
    ("gpu.min_cc", "ge", "8.9", "12.0", True),
    ("gpu.min_cc", "eq", "9.0", "9.0", True),
    ("gpu.min_cc", "lt", "8.9", "n/a", None),       # unusable cc: undetermined
    # Facts are parsed by the one cc parser (preflight.base.cc.parse_cc) everywhere.
    ("gpu.min_cc", "ge", "8.9", "sm_90", True),
    ("gpu.min_cc", "lt", "8.9", "90", False),
    ("gpu.min_cc", "eq", "9.0", "sm_90a", True),
    ("pkg.torch.version", "lt", "2.10", "2.9.1", True),   # PEP 440, not string order
    ("pkg.torch.version", "ge", "2.4", "2.4.0a0+3bcc3cd.nv24.07", True),
    ("pkg.torch.version", "eq", "2.5.1", "2.5.1+cu124", True),
    ("pkg.torch.version", "lt", "2.4", "unknown", None),
    ("pkg.torch.version", "eq", "2.4", "unknown", None),
    ("pkg.torch.version", "version_in", ">=2.3,<2.6", "2.5.1+cu121", True),
    ("pkg.torch.version", "version_in", ">=2.3,<2.6", "2.6.0", False),
    ("pkg.torch.version", "version_in", ">=2.3,<2.6", "2.6.0.dev20250101", True),
    ("pkg.torch.version", "version_in", ">=2.3,<2.6", "garbage", None),
    ("pkg.torch.version", "version_in", ">=2.3,<2.6", ABSENT, False),
    ("pkg.torch.version", "version_in", [{"introduced": "2.3"}, {"fixed": "2.6"}], "2.5.0", True),
    ("pkg.torch.version", "version_in", [{"introduced": "0"}, {"last_affected": "2.5"}], "2.5",
     True),
    ("pkg.torch.version", "version_in", [{"introduced": "0"}, {"last_affected": "2.5"}],
     "2.5.1", False),
    ("intent.recipe", "in", ["delayed", "current"], "delayed", True),
    ("intent.recipe", "in", ["delayed", "current"], "mxfp8", False),
    ("intent.recipe", "in", ["delayed"], ABSENT, False),
    ("intent.recipe", "not_in", ["delayed", "current"], "mxfp8", True),
    ("intent.recipe", "not_in", ["delayed"], "delayed", False),
    ("intent.recipe", "not_in", ["delayed"], ABSENT, False),
    ("intent.recipe", "not_in", ["delayed"], U, None),
    ("pkg.torch.version", "in", ["2.5.1"], "2.5.1+cu121", True),
    ("intent.recipe", "exists", None, "delayed", True),
    ("intent.recipe", "exists", None, ABSENT, False),
    ("intent.recipe", "exists", None, U, None),
    ("intent.recipe", "missing", None, ABSENT, True),
    ("intent.recipe", "missing", None, "x", False),
    ("intent.recipe", "missing", None, U, None),
    ("gpu.name", "matches", "NVIDIA H100.*", "NVIDIA H100 80GB HBM3", True),
    ("gpu.name", "matches", "H100", "NVIDIA H100 80GB HBM3", False),  # anchored
    ("config.accelerate.mixed_precision", "matches", "fp8", 8, False),   # non-string: false
    ("gpu.ccs", "contains", "8.9", ["9.0", "8.9"], True),
    ("gpu.ccs", "contains", "8.9", ["9.0"], False),
    ("config.megatron.fp8_format", "contains", "x", "xyz", False),       # not a list: false
    ("gpu.ccs", "contains", "8.9", U, None),
    ("config.deepspeed.bf16.enabled", "type_is", "bool", True, True),
    ("config.deepspeed.bf16.enabled", "type_is", "bool", "auto", False),
    ("config.deepspeed.train_batch_size", "type_is", "int", True, False),
    ("config.deepspeed.train_batch_size", "type_is", "int", 8, True),
    ("config.deepspeed.train_batch_size", "type_is", "float", 8.0, True),
    ("config.deepspeed.train_batch_size", "type_is", "str", ABSENT, False),
    ("config.deepspeed.train_batch_size", "type_is", "str", U, None),
]


def _leaf(fact: str, op: str, value: Any) -> dict[str, Any]:
    d = {"fact": fact, "op": op}
    if op not in ("exists", "missing"):
        d["value"] = value
    return d


@pytest.mark.parametrize(("fact", "op", "value", "actual", "expected"), TABLE)
def test_operator_truth_table(fact: str, op: str, value: Any, actual: Any,
                              expected: bool | None) -> None:
    node, rep = compile_when(_leaf(fact, op, value))
    assert rep.problems == []
    values = {} if actual is ABSENT else {fact: actual}
    assert node.fn(values) is expected


@pytest.mark.parametrize("op", ["eq", "lt", "in", "version_in", "matches", "contains",
                                "type_is", "exists", "missing"])
def test_every_operator_on_unknown_is_undetermined_and_explained(op: str) -> None:
    fact = {"contains": "gpu.ccs", "matches": "gpu.name", "lt": "gpu.count",
            "version_in": "pkg.torch.version", "type_is": "gpu.name"}.get(op, "gpu.name")
    value = {"eq": "x", "lt": 1, "in": ["x"], "version_in": ">=1", "matches": "x",
             "contains": "9.0", "type_is": "str"}.get(op)
    node, rep = compile_when({"all": [_leaf(fact, op, value)]})
    assert rep.problems == []
    assert node.fn({fact: U}) is None
    leaves = node.deciding({fact: U}, None)
    assert [leaf.fact for leaf in leaves] == [fact]
    assert leaves[0].reason({fact: U}) == "probe failed"


def test_invalid_version_reason_is_given() -> None:
    node, _ = compile_when({"fact": "pkg.torch.version", "op": "version_in", "value": ">=2"})
    assert isinstance(node, Leaf)
    assert node.reason({"pkg.torch.version": "unknown"}) == "'unknown' is not a PEP 440 version"


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a*)*", "(a+)*b", "(a|a)+", r"(\w+\s?)+$",
                                     "(?:x(a{2,}))+", "(?:a|b|ab)*c", "(a|aa)+", "(x|.)+",
                                     "(?:|a)+"])
def test_catastrophic_regex_is_a_load_error(pattern: str) -> None:
    _, rep = compile_when(_leaf("gpu.name", "matches", pattern))
    assert [p.level for p in rep.problems] == ["error"]
    assert "exponential time" in rep.problems[0].message


@pytest.mark.parametrize("pattern", ["(?i).*fsdp.*", "(true|True|TRUE|1|yes)", "(ab)+",
                                     "a+b+", "(a+)?", "NVIDIA H100.*", "(a++)+", "(cu12|cu13)+",
                                     r"(\w|\d)+", "(ab|cd)*", "([a-c]|x)+"])
def test_ordinary_regexes_still_load(pattern: str) -> None:
    # (cu12|cu13)+ and (\w|\d)+ look ambiguous but re's parser merges them into a prefix and a
    # class, so they match in linear time; the check looks at what re will run.
    _, rep = compile_when(_leaf("gpu.name", "matches", pattern))
    assert rep.problems == []


@pytest.mark.parametrize("pattern", ["a{99999999999}", "(" * 5000 + "a" + ")" * 5000])
def test_regexes_re_cannot_compile_are_load_errors(pattern: str) -> None:
    _, rep = compile_when(_leaf("gpu.name", "matches", pattern))
    assert [p.level for p in rep.problems] == ["error"]
    assert "bad regular expression" in rep.problems[0].message


@pytest.mark.timeout(10)
def test_matches_does_not_scan_past_the_length_cap() -> None:
    """A huge value is not scanned (undetermined): linear patterns up to MATCH_LIMIT characters,
    quadratic ones (two unbounded repetitions that trade characters) up to QUADRATIC_LIMIT."""
    from preflight.engine.regexbounds import MATCH_LIMIT, QUADRATIC_LIMIT

    for pattern, cap in ((".*b", MATCH_LIMIT), (".*a.*b", QUADRATIC_LIMIT)):
        node, rep = compile_when({"all": [_leaf("gpu.name", "matches", pattern)]})
        assert rep.problems == []
        huge = {"gpu.name": "a" * 200_000}
        assert node.fn(huge) is None
        leaf = node.deciding(huge, None)[0]
        assert f"matches scans at most {cap} with this pattern" in (leaf.reason(huge) or "")
        assert node.fn({"gpu.name": "a" * (cap - 1) + "b"}) is True  # at the cap: scanned
        assert node.fn({"gpu.name": "a" * cap + "b"}) is None


def test_deciding_leaves() -> None:
    node, _ = compile_when({"any": [
        {"fact": "intent.fp8", "op": "eq", "value": True},
        {"all": [{"fact": "gpu.count", "op": "gt", "value": 1},
                 {"fact": "gpu.name", "op": "exists"}]}]})
    values = {"intent.fp8": False, "gpu.count": 2, "gpu.name": "H100"}
    assert node.fn(values) is True
    assert [leaf.fact for leaf in node.deciding(values, True)] == ["gpu.count", "gpu.name"]
    values = {"intent.fp8": False, "gpu.count": U, "gpu.name": "H100"}
    assert node.fn(values) is None
    assert [leaf.fact for leaf in node.deciding(values, None)] == ["gpu.count"]
    neg, _ = compile_when({"not": {"all": [{"fact": "intent.fp8", "op": "eq", "value": True},
                                           {"fact": "gpu.count", "op": "gt", "value": 1}]}})
    values = {"intent.fp8": True, "gpu.count": 1}
    assert neg.fn(values) is True
    assert [leaf.fact for leaf in neg.deciding(values, True)] == ["gpu.count"]


# --- three-valued logic properties --------------------------------------------------------------

TRI = [True, False, None]


class Const(Node):
    """A leaf with a fixed outcome, to test the connectives in isolation."""

    def __init__(self, value: bool | None) -> None:
        self.value = value
        self.fn = lambda values: value

    def fact_names(self) -> list[str]:
        return []


def tri_not(a: bool | None) -> bool | None:
    return None if a is None else not a


nodes = st.recursive(
    st.sampled_from(TRI).map(Const),
    lambda kids: st.one_of(
        st.lists(kids, min_size=1, max_size=4).map(All),
        st.lists(kids, min_size=1, max_size=4).map(AnyOf),
        kids.map(Not)),
    max_leaves=12)


@settings(deadline=None)  # a shared, loaded CI box must not flake
@given(st.lists(st.sampled_from(TRI), min_size=1, max_size=6))
def test_all_and_any_follow_kleene_logic(vals: list[bool | None]) -> None:
    a = All([Const(v) for v in vals]).fn({})
    o = AnyOf([Const(v) for v in vals]).fn({})
    assert a is (False if False in vals else None if None in vals else True)
    assert o is (True if True in vals else None if None in vals else False)


@settings(deadline=None)  # a shared, loaded CI box must not flake
@given(st.lists(nodes, min_size=1, max_size=4))
def test_de_morgan(children: list[Node]) -> None:
    lhs = Not(All(children)).fn({})
    rhs = AnyOf([Not(c) for c in children]).fn({})
    assert lhs is rhs
    assert Not(AnyOf(children)).fn({}) is All([Not(c) for c in children]).fn({})


@settings(deadline=None)  # a shared, loaded CI box must not flake
@given(nodes)
def test_identities(node: Node) -> None:
    r = node.fn({})
    assert Not(Not(node)).fn({}) is r
    assert All([node]).fn({}) is r and AnyOf([node]).fn({}) is r
    assert All([node, Const(True)]).fn({}) is r          # true is the identity of all
    assert AnyOf([node, Const(False)]).fn({}) is r       # false is the identity of any
    assert All([node, Const(False)]).fn({}) is False     # false annihilates all
    assert AnyOf([node, Const(True)]).fn({}) is True     # true annihilates any
    assert Not(node).fn({}) is tri_not(r)


@settings(deadline=None)  # a shared, loaded CI box must not flake
@given(st.lists(nodes, min_size=1, max_size=5), st.randoms())
def test_order_does_not_change_the_outcome(children: list[Node], rnd: Any) -> None:
    shuffled = list(children)
    rnd.shuffle(shuffled)
    assert All(children).fn({}) is All(shuffled).fn({})
    assert AnyOf(children).fn({}) is AnyOf(shuffled).fn({})


@pytest.mark.parametrize(("when", "fragment"), [
    ({"all": []}, "all takes a non-empty list"),
    ({"not": [{"fact": "intent.fp8", "op": "exists"}]}, "not takes one condition"),
    ({"all": [{"fact": "intent.fp8", "op": "exists", "value": 1}]}, "exists takes no value"),
    ({"fact": "intent.fp8", "op": "eq"}, "operator eq needs a value"),
    ({"fact": "intent.fp8", "op": "eq", "value": "yes"}, "fact intent.fp8 is a bool"),
    ({"fact": "gpu.name", "op": "eq", "value": 1}, "quote the value"),
    ({"fact": "gpu.name", "op": "contains", "value": "x"}, "contains needs a list fact"),
    ({"fact": "gpu.count", "op": "matches", "value": "x"}, "matches needs a string fact"),
    ({"fact": "gpu.count", "op": "version_in", "value": ">=1"}, "version_in needs a version fact"),
    ({"fact": "pkg.torch.version", "op": "version_in", "value": 2.1}, "versions must be quoted"),
    ({"fact": "pkg.torch.version", "op": "in", "value": "2.1"}, "takes a non-empty list"),
    ({"fact": "pkg.torch.version", "op": "eq", "value": "latest"}, "not a PEP 440 version"),
    ({"fact": "gpu.min_cc", "op": "lt", "value": 8.9}, "compute capability values must be quoted"),
    # Rule values keep the documented "major.minor" form, stricter than facts.
    ({"fact": "gpu.min_cc", "op": "lt", "value": "90"}, "is not a compute capability"),
    ({"fact": "gpu.names", "op": "type_is", "value": "tuple"}, "type_is takes one of"),
    ({"fact": "gpu.count", "op": "lt", "value": "8"}, "is not a number"),
    ({"all": [{"fact": "intent.fp8", "op": "exists"}], "any": []}, "exactly one of all / any"),
    ("intent.fp8", "a condition must be a mapping"),
])
def test_condition_errors(when: Any, fragment: str) -> None:
    _, rep = compile_when(when)
    assert [p.level for p in rep.problems] == ["error"]
    assert fragment in rep.problems[0].message


def test_unknown_key_in_leaf_is_a_warning() -> None:
    node, rep = compile_when({"fact": "intent.fp8", "op": "eq", "value": True, "note": "x"})
    assert [(p.level, p.message) for p in rep.problems] == [
        ("warning", "unknown key 'note' in condition ignored")]
    assert node.fn({"intent.fp8": True}) is True


def test_template_fact_names_are_accepted() -> None:
    _, rep = compile_when({"all": [
        {"fact": "pkg.transformer-engine.version", "op": "version_in", "value": ">=1.0"},
        {"fact": "config.deepspeed.zero_optimization.stage", "op": "eq", "value": 3},
        {"fact": "env.NVTE_FP8_DPA", "op": "eq", "value": "1"}]})
    assert rep.problems == []


def test_unquoted_version_inside_an_osv_list_is_found() -> None:
    _, rep = compile_when({"fact": "pkg.torch.version", "op": "version_in",
                           "value": [{"introduced": "1.0"}, {"fixed": 2.1}]})
    assert [p.message for p in rep.problems] == [
        'versions must be quoted strings: 2.1 is not quoted, so YAML reads it as a number '
        '(2.10 becomes 2.1); write "2.1"']
