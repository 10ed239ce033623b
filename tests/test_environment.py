"""preflight.environment: which packages the job needs, and the environment verdict.

Facts are plain mappings here (the module is pure); the end-to-end behaviour through the CLI is
in tests/cli/test_strict.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.builtin_findings import BUILTIN
from preflight.engine import evaluate, load_rules
from preflight.environment import (
    CI_RUNNER,
    ENV_RULE_ID,
    OFF_NODE_TAG,
    PLANNING,
    TRAINING_NODE,
    EnvironmentJudged,
    environment_finding,
    judge,
    judge_place,
    needed_packages,
    off_node,
    running_in_ci,
)
from preflight.facts import Facts, Unknown
from preflight.findings import Evidence, Finding, Fix, Severity
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


# --- Where the check runs (issue 24 item 2) -------------------------------------------------

def _facts(values: dict[str, Any], prov: dict[str, str] | None = None) -> Facts:
    return Facts(values, prov or {})


def test_the_place_is_the_training_node_only_where_a_gpu_was_probed() -> None:
    assert judge_place(_facts({"gpu.count": 8}, {"gpu.count": "nvml"})) == TRAINING_NODE
    # --assume gpu=H100 beside this machine's torch is a plan, not a GPU node (the false error).
    assert judge_place(_facts({"gpu.count": 8}, {"gpu.count": "assume"})) == PLANNING
    assert judge_place(_facts({"gpu.count": 0}, {"gpu.count": "nvml"})) == PLANNING
    assert judge_place(_facts({"gpu.count": Unknown("NVML: not found")})) == PLANNING
    assert judge_place(_facts({}), ci=True) == CI_RUNNER
    assert judge_place(_facts({"gpu.count": 8}, {"gpu.count": "nvml"}), ci=True) == TRAINING_NODE
    # The user may say where it runs (a GPU node whose driver cannot be asked).
    said = _facts({"host.place": "training-node"}, {"host.place": "assume"})
    assert judge_place(said) == TRAINING_NODE


def test_ci_is_read_from_the_variables_ci_systems_set() -> None:
    assert running_in_ci({"GITHUB_ACTIONS": "true"}) and running_in_ci({"CI": "1"})
    assert not running_in_ci({}) and not running_in_ci({"CI": "false"})


def test_an_assumed_gpu_with_local_torch_is_not_an_import_error() -> None:
    facts = _facts({**JOB, "gpu.count": 8, "pkg.torch.version": "2.13.0+cpu"},
                   {"gpu.count": "assume", "pkg.torch.version": "packages"})
    _, judged = judge(facts, "this machine")
    finding = environment_finding(judged, facts)
    assert judged.place == PLANNING and not judged.gpu_node
    assert finding is not None and finding.severity is Severity.WARNING
    assert "not an error" in finding.message and "--strict" in finding.message
    probed = _facts(dict(facts), {"gpu.count": "nvml"})
    _, judged = judge(probed, "this machine")
    assert environment_finding(judged, probed).severity is Severity.ERROR  # type: ignore[union-attr]


def _cpu_torch_finding(source: str) -> Finding:
    return Finding("FP8D-TORCH-0003", Severity.ERROR, "CPU torch", "m", Fix("f"),
                   evidence=(Evidence("intent.fp8", True, "job.yaml:3"),
                             Evidence("cuda.torch_variant", "cpu", source)))


@pytest.mark.parametrize("place, strict, source, severity", [
    (PLANNING, False, "packages", Severity.WARNING),
    (CI_RUNNER, False, "packages", Severity.WARNING),
    (PLANNING, True, "packages", Severity.ERROR),        # --strict still fails it
    (TRAINING_NODE, False, "packages", Severity.ERROR),  # where the job trains: an error
    (PLANNING, False, "assume", Severity.ERROR),         # the plan itself says so
])
def test_errors_about_this_machines_build_hold_only_on_the_training_node(
        place: str, strict: bool, source: str, severity: Severity) -> None:
    judged = EnvironmentJudged("this machine", None, place=place)
    [out] = off_node([_cpu_torch_finding(source)], judged, strict=strict)
    assert out.severity is severity
    assert (OFF_NODE_TAG in out.tags) is (severity is Severity.WARNING)


def test_a_finding_about_the_job_is_never_downgraded() -> None:
    job = Finding("FP8D-ACC-0003", Severity.ERROR, "t", "m", Fix("f"),
                  evidence=(Evidence("config.accelerate.mixed_precision", "fp8", "a.yaml:2"),))
    crash = BUILTIN["FP8D-IMPORT-FAIL"].make("m", "f")   # catalogue: training_node_only
    judged = EnvironmentJudged("this machine", None, place=PLANNING)
    assert [f.severity for f in off_node([job, crash], judged)] == [Severity.ERROR,
                                                                    Severity.WARNING]
    assert off_node([job], None) == (job,)   # not a job check (inspect): nothing judged
