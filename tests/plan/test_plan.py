"""fp8-doctor plan: the smallest version change that clears version-gated findings, proven by
evaluating the real rule base again (real engine, real rules, facts planned with --assume)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight import api, engine
from preflight.base.versions import comparison_key
from preflight.cli import main
from preflight.plan import Releases, candidates, make_plan, pip_line, shipped_releases
from preflight.plan.render import render_text, to_dict
from preflight.plan.run import rederive

ACCELERATE_TE = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: fp8
num_processes: 8
fp8_config:
  backend: TE
  fp8_format: HYBRID
"""
H100_OLD_TE = {"gpu": "H100", "pkg.accelerate": "1.11.0", "pkg.transformer-engine": "1.11.0",
               "pkg.torch": "2.4.0+cu124"}


@pytest.fixture(scope="module")
def rules() -> engine.RuleSet:
    return engine.load_rules(None, with_tests=False)


def _facts(tmp_path: Path, assume: dict[str, str], text: str = ACCELERATE_TE):
    job = tmp_path / "acc.yaml"
    job.write_text(text)
    facts, *_ = api.collect_facts(api.CheckOptions(paths=(str(job),), assume=assume, smoke=False))
    return facts, job


def test_one_upgrade_clears_the_finding_and_the_proof_holds(tmp_path: Path, rules) -> None:
    facts, job = _facts(tmp_path, H100_OLD_TE)
    plan = make_plan(facts, rules, rederive)
    assert plan.gated == ("FP8D-TE-0015",)
    assert [(c.package, c.current) for c in plan.changes] == [("transformer-engine", "1.11.0")]
    change = plan.changes[0]
    assert change.upgrade and change.clears == ("FP8D-TE-0015",)
    assert not plan.uncleared
    # The proof, independently: a check with the planned version assumed no longer fires it,
    # and raises no warning or error the original check did not.
    before = api.check(str(job), assume=H100_OLD_TE)
    after = api.check(str(job), assume={**H100_OLD_TE, "pkg.transformer-engine": change.target})
    serious = {f.rule_id for f in after.findings if f.severity.value in ("error", "warning")}
    assert "FP8D-TE-0015" in {f.rule_id for f in before.findings}
    assert "FP8D-TE-0015" not in serious
    assert serious <= {f.rule_id for f in before.findings}
    assert pip_line(plan) == f"pip install 'transformer-engine[pytorch]=={change.target}'"


def test_nothing_version_gated_means_no_change(tmp_path: Path, rules) -> None:
    facts, _ = _facts(tmp_path, {**H100_OLD_TE, "pkg.transformer-engine": "2.8.0",
                                 "pkg.accelerate": "1.10.1"})
    plan = make_plan(facts, rules, rederive)
    assert plan.gated == () and plan.changes == () and plan.uncleared == ()
    assert "nothing to change" in render_text(plan)


def test_a_finding_no_upgrade_clears_is_said_not_guessed(tmp_path: Path, rules) -> None:
    # The releases the plan may choose from stop at the installed TE: no newer one exists.
    facts, _ = _facts(tmp_path, H100_OLD_TE)
    frozen = Releases("2026-01-01", "test", {"transformer-engine": ("1.11.0", "1.10.0")})
    plan = make_plan(facts, rules, rederive, frozen)
    assert plan.changes == ()
    assert plan.uncleared == ("FP8D-TE-0015",)
    assert plan.why
    doc = to_dict(plan)
    assert doc["pip_install"] is None and doc["uncleared"] == ["FP8D-TE-0015"]


def test_downgrades_only_when_asked(tmp_path: Path, rules) -> None:
    facts, _ = _facts(tmp_path, H100_OLD_TE)
    no_newer = Releases("2026-01-01", "test", {"transformer-engine": ("1.11.0", "1.5.0")})
    assert make_plan(facts, rules, rederive, no_newer).changes == ()
    # TE-0015 needs TE < 2.0 with accelerate >= 1.11: only a newer TE clears it, so even an
    # allowed downgrade of TE must not be offered as a fix.
    down = make_plan(facts, rules, rederive, no_newer, downgrades=True)
    assert all(c.package != "transformer-engine" or c.upgrade for c in down.changes)


@pytest.mark.parametrize(("days", "said"), [(1, "1 day old"), (2, "2 days old"),
                                             (0, "0 days old")])
def test_the_header_gives_the_release_datas_age(tmp_path: Path, rules, days: int, said: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    facts, _ = _facts(tmp_path, H100_OLD_TE)
    plan = make_plan(facts, rules, rederive)
    # the age as of a fixed day, not of the clock (no test may depend on when it runs)
    monkeypatch.setattr(Releases, "age_days", lambda self, today=None: days)
    assert render_text(plan).splitlines()[0].endswith(f", {said})")


def test_partial_plan_on_the_example_job_names_what_it_leaves(rules) -> None:
    from preflight.examples import example_paths

    # On an A100 no accelerate release clears the example job: below 1.9 fp8 silently becomes
    # fp16 (ACC-0019), from 1.9 the named TE backend fails (ACC-0094). (On an H100 its only
    # unclearable finding was ACC-0012, quiet since its HYBRID/1024/max equal TE's defaults.)
    assume = {"gpu": "A100", "pkg.accelerate": "1.8.0", "pkg.transformer-engine": "1.11.0",
              "pkg.torch": "2.4.0+cu124", "pkg.torchao": "0.9.0"}
    facts, *_ = api.collect_facts(api.CheckOptions(paths=tuple(example_paths()), assume=assume))
    plan = make_plan(facts, rules, rederive)
    assert plan.gated and plan.uncleared
    assert set(plan.uncleared) <= set(plan.gated) | set(plan.new_findings)
    text = render_text(plan)
    assert "Partial" in text and "Proof" not in text
    # every change is an upgrade and is applied in the proof facts
    assert all(c.upgrade for c in plan.changes)


def test_cuda_build_label_kept_and_torch_index_named() -> None:
    from preflight.plan import Change, Plan

    plan = Plan(("X",), (Change("torch", "2.4.0+cu124", "2.6.0+cu124", ("X",)),))
    assert pip_line(plan) == ("pip install 'torch==2.6.0' --extra-index-url "
                              "https://download.pytorch.org/whl/cu124")


def test_shipped_release_data_is_dated_and_sane() -> None:
    data = shipped_releases()
    assert data.age_days() is not None and data.age_days() >= 0
    for name in ("torch", "transformer-engine", "torchao", "accelerate", "deepspeed"):
        assert data.packages[name], name
        assert all(comparison_key(v) is not None and "+" not in v for v in data.packages[name])


VERSIONS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(0, 3)),
                    min_size=1, max_size=25).map(lambda ts: [f"{a}.{b}.{c}" for a, b, c in ts])


@given(VERSIONS, st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12)), max_size=4),
       st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(0, 3)), st.booleans())
def test_candidates_are_real_releases_and_never_the_current_one(
        releases: list[str], bounds: list[tuple[int, int]], now: tuple[int, int, int],
        down: bool) -> None:
    current = ".".join(map(str, now))
    named = [f"{a}.{b}.0" for a, b in bounds]
    got = candidates("pkg", current, named, Releases("x", "", {"pkg": tuple(releases)}),
                     downgrades=down)
    assert set(got) <= set(releases)
    assert all(comparison_key(v) != comparison_key(current) for v in got)
    if not down:
        assert all(comparison_key(v) > comparison_key(current) for v in got)
    newest = max(releases, key=comparison_key)
    if comparison_key(newest) > comparison_key(current):
        assert newest in got


def test_cli_plan_json_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "acc.yaml"
    job.write_text(ACCELERATE_TE)
    out = tmp_path / "plan.json"
    argv = ["plan", str(job), "--format", "json", "-o", str(out)]
    for key, value in H100_OLD_TE.items():
        argv += ["--assume", f"{key}={value}"]
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    assert doc["changes"][0]["package"] == "transformer-engine"
    assert doc["releases"]["generated"] == shipped_releases().generated
    assert doc["proof"]["still_firing"] is not None


def test_cli_plan_exit_code_1_when_something_stays(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assume = ["--assume", "gpu=A100", "--assume", "pkg.accelerate=1.8.0", "--assume",
              "pkg.transformer-engine=1.11.0", "--assume", "pkg.torchao=0.9.0"]
    assert main(["plan", "--example", *assume]) == 1
    assert "Still firing" in capsys.readouterr().out


# The newcomer's b_foundry job (issue 24, item 4; shared/research/newcomer-review-2026-11.md #3):
# an MPT-1B llm-foundry YAML with TE layers, meta init and FSDP, on TE 1.11 / torch 2.4.
FOUNDRY = """\
variables:
  run_name: mpt-1b-fp8
max_seq_len: 2048
precision: amp_fp8
model:
  name: mpt_causal_lm
  init_device: meta
  d_model: 2048
  n_heads: 16
  n_layers: 24
  fc_type: te
  ffn_config:
    ffn_type: te_ln_mlp
fsdp_config:
  sharding_strategy: FULL_SHARD
  activation_checkpointing: true
"""
FOUNDRY_STACK = {"gpu": "H100", "pkg.transformer-engine": "1.11.0", "pkg.torch": "2.4.0+cu124",
                 "pkg.llm-foundry": "0.14.0", "pkg.mosaicml": "0.26.0"}


def _installable(plan, releases) -> list[str]:
    """Every recorded requirement of the planned stack that fails (should be none)."""
    from preflight.plan.requires import Requires

    stack = {**{k[4:]: v for k, v in FOUNDRY_STACK.items() if k.startswith("pkg.")},
             **{c.package: c.target for c in plan.changes}}
    req = Requires(releases.requires, {"python_version": "3.11", "python_full_version":
                                       "3.11.7", "platform_system": "Linux",
                                       "sys_platform": "linux", "platform_machine": "x86_64",
                                       "extra": "", "os_name": "posix",
                                       "platform_python_implementation": "CPython",
                                       "implementation_name": "cpython"})
    return [str(c) for c in req.conflicts(stack, list(stack))
            if c.package in {ch.package for ch in plan.changes}
            or c.other in {ch.package for ch in plan.changes}]


def test_the_llm_foundry_plan_is_installable_or_says_none_is(tmp_path: Path, rules) -> None:
    """llm-foundry 0.22.0 requires torch>=2.7.0,<2.7.1 and mosaicml>=0.32.1,<0.33: a plan
    that moves llm-foundry alone on torch 2.4 cannot be installed and is never proposed."""
    releases = shipped_releases()
    assert releases.requires is not None
    assert "torch<2.7.1,>=2.7.0" in releases.requires["llm-foundry"]["0.22.0"]
    facts, _ = _facts(tmp_path, FOUNDRY_STACK, FOUNDRY)
    plan = make_plan(facts, rules, rederive, releases)
    moved = {c.package: c.target for c in plan.changes}
    assert moved.get("llm-foundry") != "0.22.0" or moved.get("torch", "").startswith("2.7.0")
    assert _installable(plan, releases) == []
    if not plan.changes:
        assert plan.uncleared and plan.why
    text = render_text(plan)
    assert "Installable" in text or "No plan" in text


def test_a_plan_pip_would_refuse_is_never_proposed(tmp_path: Path, rules) -> None:
    """The same job against release data of three packages, where the only release that
    clears the finding needs a newer torch: the plan moves torch too, or says none exists."""
    real = shipped_releases()
    facts, _ = _facts(tmp_path, FOUNDRY_STACK, FOUNDRY)
    free = make_plan(facts, rules, rederive, Releases("2026-11-27", "test", real.packages, None))
    assert "Installability not checked" in render_text(free) or not free.changes
    pinned = make_plan(facts, rules, rederive, real)
    for change in pinned.changes:
        assert change.target.split("+")[0] in real.packages[change.package]
    assert _installable(pinned, real) == []
    doc = to_dict(pinned)
    assert doc["installable"]["requirements_recorded"] is True


def test_requirements_follow_markers_and_ignore_what_the_job_lacks() -> None:
    from preflight.plan.requires import Requires, environment

    table = {"a": {"1.0": ["b<2", "c==9; python_version < '3.0'"]}, "b": {"1.5": [], "2.0": []}}
    req = Requires(table, environment({"host.python": "3.11.7", "host.os": "Linux",
                                       "host.arch": "x86_64"}))
    assert req.conflicts({"a": "1.0", "b": "1.5"}, ["a"]) == []
    bad = req.conflicts({"a": "1.0", "b": "2.0+cu12"}, ["b"])
    assert [(c.package, c.other, c.specifier) for c in bad] == [("a", "b", "<2")]
    assert req.conflicts({"a": "1.0", "b": "2.0"}, ["x"]) == []     # the job's own conflict
    assert req.conflicts({"a": "1.0", "c": "1.0"}, ["a"]) == []     # marker false on 3.11
    assert req.unchecked({"a": "1.0", "b": "3.0"}, ["b"]) == ["b 3.0"]
    assert req.satisfying("b", ["<2"], ["1.0", "1.5", "2.0"]) == ["1.0", "1.5"]


def test_bounds_come_from_the_typed_affected_ranges(rules) -> None:
    from preflight.plan.search import bounds

    rule = next(r for r in rules if r.affected)
    pkg = rule.affected[0].package
    events = {v for r in rule.affected[0].ranges for _, v in r.events if v[:1].isdigit()}
    assert events and {e for e in events if "." in e} <= bounds(rule, pkg)


def test_release_data_never_holds_what_pypi_does_not_release() -> None:
    """TE skipped 2.20.0 and 2.20.1 on PyPI (2.20.2 followed 2.19.0) and 2.21.0 is on GitHub
    only (issue 23 item 6): a plan never suggests a version pip cannot install."""
    te = shipped_releases().packages["transformer-engine"]
    assert "2.20.2" in te and not {"2.20.0", "2.20.1"} & set(te)
    assert "2.15.0" in shipped_releases().packages["torch"]


def test_no_plan_blames_installability_only_when_an_uninstallable_stack_would_clear(
        tmp_path: Path, rules) -> None:
    """Acceptance audit of issue 24 item 4 (main eafd747): on the llm-foundry job the plan said
    "no known release ... clears them in a stack that can be installed (94 candidate stacks
    passed over as not installable, e.g. llm-foundry 0.22.0 requires ...)", but FP8D-LLMF-0004
    fires there on `ffn_type: te_ln_mlp` with no version in that branch: no release clears it,
    installable or not, and the installability note sent the reader after the wrong cause."""
    facts, _ = _facts(tmp_path, FOUNDRY_STACK, FOUNDRY)
    plan = make_plan(facts, rules, rederive, shipped_releases())
    assert plan.changes == () and plan.uncleared == ("FP8D-LLMF-0004",)
    assert "install" not in plan.why and plan.blocked == ()
    assert "Not installable" not in render_text(plan)
    # The other way round: TE 2.8.0 would clear FP8D-TE-0015 but needs a torch that no release
    # of this data has; then the reason is installability, and it is said.
    facts, _ = _facts(tmp_path, H100_OLD_TE)
    walled = Releases("2026-11-27", "test",
                      {"transformer-engine": ("2.8.0", "1.11.0"), "torch": ("2.4.0",)},
                      {"transformer-engine": {"2.8.0": ["torch>=99"], "1.11.0": []},
                       "torch": {"2.4.0": []}})
    plan = make_plan(facts, rules, rederive, walled)
    assert plan.changes == () and "can be installed" in plan.why
    assert plan.blocked and "torch>=99" in plan.blocked[0]
