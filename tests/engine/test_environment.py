"""preflight.engine.environment: which packages the job needs, and the environment verdict.

Facts are plain mappings here (the module is pure); the end-to-end behaviour through the CLI is
in tests/cli/test_strict.py.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from preflight.engine import evaluate, load_rules
from preflight.engine.environment import (
    ENV_RULE_ID,
    environment_finding,
    judge,
    needed_packages,
)
from preflight.facts import Facts, Unknown
from preflight.findings import Severity
from preflight.frameworks._index import DISTRIBUTIONS

JOB = {"config.kinds": ["accelerate", "deepspeed"], "intent.fp8": True, "intent.backend": "te",
       "intent.distributed": "deepspeed"}
NODE = {"gpu.count": 8, "pkg.torch.version": "2.5.1"}


def _dists(facts: dict[str, Any]) -> list[tuple[str, ...]]:
    return [n.dists for n in needed_packages(facts)]


def test_no_job_config_needs_nothing_and_judges_nothing() -> None:
    unknowns, judged = judge({"pkg.torch.version": "2.5.1"}, "this machine")
    assert needed_packages({}) == [] and unknowns == {}
    assert judged.training is None and environment_finding(judged, {}) is None


def test_the_job_needs_its_frameworks_its_backend_and_torch_once_each() -> None:
    assert _dists(JOB) == [("torch",), ("accelerate",), ("deepspeed",), ("transformer-engine",)]


def test_accelerate_fp8_without_a_named_backend_needs_any_fp8_backend() -> None:
    facts = {"config.kinds": ["accelerate"], "intent.fp8": True,
             "intent.backend": Unknown("the configs read do not say which FP8 backend")}
    assert ("transformer-engine", "torchao", "ms-amp") in _dists(facts)
    _, judged = judge({**facts, **NODE, "pkg.accelerate.version": "1.11.0",
                       "pkg.torchao.version": "0.9.0"}, "this machine")
    assert judged.missing == ()  # torchao is one of them: nothing missing


def test_absent_needed_packages_become_unknown_with_the_issue_reason() -> None:
    unknowns, judged = judge({**JOB, **NODE}, "this machine")
    assert set(unknowns) == {"pkg.accelerate.version", "pkg.deepspeed.version",
                             "pkg.transformer-engine.version"}
    reason = unknowns["pkg.deepspeed.version"].reason
    assert "not installed here" in reason and "--snapshot" in reason
    assert "--assume pkg.deepspeed=VERSION" in reason
    assert judged.training is False and judged.gpu_node


def test_planned_packages_are_the_plan_not_missing() -> None:
    unknowns, _ = judge({**JOB, **NODE}, "this machine",
                        frozenset({"accelerate", "deepspeed", "transformer-engine"}))
    assert unknowns == {}


def test_frameworks_need_what_they_run_on() -> None:
    assert _dists({"config.kinds": ["hf_trainer"]}) == [("torch",), ("transformers",),
                                                        ("accelerate",)]
    assert ("mosaicml",) in _dists({"config.kinds": ["llmfoundry"]})


def test_lightning_is_satisfied_by_either_distribution() -> None:
    facts = {"config.kinds": ["lightning"], **NODE, "pkg.pytorch-lightning.version": "2.0.9"}
    assert judge(facts, "this machine")[0] == {}
    unknowns, _ = judge({"config.kinds": ["lightning"], **NODE}, "this machine")
    assert set(unknowns) == {"pkg.lightning.version", "pkg.pytorch-lightning.version"}


def test_fp8_without_a_visible_gpu_is_not_the_training_environment() -> None:
    for gpus in (0, Unknown("NVML: driver not loaded")):
        facts = {"config.kinds": ["accelerate"], "intent.fp8": True, "intent.backend": "torchao",
                 "gpu.count": gpus, "pkg.torch.version": "2.5.1",
                 "pkg.accelerate.version": "1.11.0", "pkg.torchao.version": "0.9.0"}
        unknowns, judged = judge(facts, "this machine")
        assert unknowns == {} and judged.training is False
        finding = environment_finding(judged, facts)
        assert finding is not None and finding.severity is Severity.WARNING


def test_a_gpu_node_with_everything_installed_is_the_training_environment() -> None:
    facts = {**JOB, **NODE, "pkg.accelerate.version": "1.11.0", "pkg.deepspeed.version": "0.16.4",
             "pkg.transformer-engine.version": "2.4.0"}
    _, judged = judge(facts, "this machine")
    assert judged.training is True and environment_finding(judged, facts) is None


def test_missing_on_a_gpu_node_is_an_error_except_what_runs_from_source() -> None:
    _, judged = judge({**JOB, **NODE}, "this machine")
    assert environment_finding(judged, {}).severity is Severity.ERROR   # type: ignore[union-attr]
    megatron = {"config.kinds": ["megatron"], **NODE}
    _, judged = judge(megatron, "this machine")
    finding = environment_finding(judged, megatron)
    assert finding is not None and finding.rule_id == ENV_RULE_ID
    assert finding.severity is Severity.WARNING   # Megatron-LM runs from its checkout
    assert judged.training is None and "may not be" in finding.message
    _, judged = judge({**JOB, "gpu.count": 0, "pkg.torch.version": "2.5.1"}, "this machine")
    assert environment_finding(judged, {}).severity is Severity.WARNING  # type: ignore[union-attr]


@given(kinds=st.lists(st.sampled_from(sorted(DISTRIBUTIONS)), min_size=1, unique=True),
       installed=st.sets(st.sampled_from(sorted({d for ds in DISTRIBUTIONS.values() for d in ds}
                                                | {"torch", "transformer-engine"}))))
def test_unknown_only_for_needed_and_absent_never_over_an_installed_one(
        kinds: list[str], installed: set[str]) -> None:
    facts = {"config.kinds": kinds, **{f"pkg.{d}.version": "1.0" for d in installed}}
    unknowns, judged = judge(facts, "this machine")
    assert not any(f"pkg.{d}.version" in unknowns for d in installed)
    for need in needed_packages(facts):
        absent = not set(need.dists) & installed
        assert (need in judged.missing) == absent
        assert all((f"pkg.{d}.version" in unknowns) == absent for d in need.dists)


def test_the_bundled_version_rules_turn_undetermined_not_quiet() -> None:
    """The point of it all: with the example job (accelerate + DeepSpeed + TE) read for real and
    its FP8 stack absent, version rules that were quietly false become undetermined, with why."""
    from preflight import intent
    from preflight.examples import example_paths
    from preflight.jobs.read import read_paths

    read = read_paths(example_paths())
    facts = Facts({**NODE, "gpu.min_cc": "9.0"}).merged(read.facts, read.provenance)
    facts = facts.merged(*intent.derive(facts))
    rules = load_rules(with_tests=False)
    before = evaluate(rules, facts)
    unknowns, judged = judge(facts, "this machine")
    after = evaluate(rules, facts.merged(unknowns, source="environment"))
    decided = {u.rule_id for u in before.undetermined} | {f.rule_id for f in before.findings}
    newly = {u.rule_id for u in after.undetermined} - decided
    assert {"FP8D-ACC-0001", "FP8D-ACC-0022"} <= newly   # accelerate version rules, TE missing
    for und in after.undetermined:
        if und.rule_id in newly:
            assert any("not installed here" in r for r in und.reasons), und
    assert judged.training is False
