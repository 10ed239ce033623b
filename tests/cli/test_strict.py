"""Issue 12 "done when": with the FP8 stack absent, the same job reports the version rules as
undetermined with the reason, the report says it judged another environment, and ``--strict``
exits 1 (CLI) / raises (``assert_ready(strict=True)``).

The environments are real snapshots written by ``fp8-doctor snapshot`` for the bundled example
job (accelerate + DeepSpeed + Transformer Engine) on a planned H100 node: one with the training
node's FP8 stack, one without it, so the test does not depend on what this machine has.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import preflight
from preflight import cli
from preflight.api import evaluate_facts
from preflight.errors import UserInputError
from preflight.examples import example_paths
from preflight.facts import Facts

NODE = ["--assume", "gpu=H100", "--assume", "pkg.torch=2.5.1+cu124",
        "--assume", "pkg.torchao=none"]
# accelerate 1.8.1: its version rules fire on the example job (ACC-0001: FP8 from the config is
# dropped under DeepSpeed before 1.11). On 1.10.0 the one that did was ACC-0012, quiet since
# issue 23 because the example's fp8_config equals TE's DelayedScaling() defaults.
STACK = ["--assume", "pkg.accelerate=1.8.1", "--assume", "pkg.deepspeed=0.16.4",
         "--assume", "pkg.transformer-engine=2.4.0"]
FP8_STACK = ("pkg.accelerate.version", "pkg.deepspeed.version", "pkg.transformer-engine.version")


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("snap")
    out = {"bare": folder / "bare.json", "full": folder / "full.json"}
    assert cli.main(["snapshot", *example_paths(), *NODE, "-o", str(out["bare"])]) == 0
    assert cli.main(["snapshot", *example_paths(), *NODE, *STACK, "-o", str(out["full"])]) == 0
    return out


def _check(capsys: pytest.CaptureFixture[str], snap: Path, *flags: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli.main(["check", "--snapshot", str(snap), "--format", "json", *flags])
    return code, json.loads(capsys.readouterr().out)


def _uses_stack(entry: dict, key: str) -> bool:
    return any(e["fact"] in FP8_STACK for e in entry[key])


def test_absent_fp8_stack_is_undetermined_with_the_reason_not_an_all_clear(
        snapshots: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, full = _check(capsys, snapshots["full"], "--no-smoke")
    _, bare = _check(capsys, snapshots["bare"], "--no-smoke")
    fired = {f["id"] for f in full["findings"] if _uses_stack(f, "evidence")}
    assert fired, "the training node's versions should fire version rules"
    undetermined = {u["id"]: u for u in bare["undetermined"]}
    for rule_id in fired:
        assert rule_id in undetermined, f"{rule_id} is silently quiet without the FP8 stack"
        reasons = [e["value"]["$unknown"] for e in undetermined[rule_id]["unknown"]
                   if e["fact"] in FP8_STACK]
        assert reasons and all("is not installed in the snapshot" in r and "--assume pkg." in r
                               for r in reasons)
    env = bare["environment"]
    assert env["is_training_environment"] is False
    assert {d for m in env["missing_packages"] for d in m["packages"]} == {
        "accelerate", "deepspeed", "transformer-engine"}
    assert "FP8D-ENV-NOT-TRAINING" in {f["id"] for f in bare["findings"]}
    # A planned node (GPU assumed) with the whole stack: nothing is missing, but an assumed GPU
    # is a plan, not the training node (issue 24 item 2), so the verdict stays open.
    assert full["environment"]["is_training_environment"] is None
    assert full["environment"]["place"] == "planning"
    assert "FP8D-ENV-NOT-TRAINING" not in {f["id"] for f in full["findings"]}


def test_strict_exits_1_on_undetermined_rules(snapshots: dict[str, Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # --fail-on never isolates --strict's own findings from the example job's errors.
    code, lax = _check(capsys, snapshots["bare"], "--no-smoke", "--fail-on", "never")
    assert code == 0 and lax["undetermined"]
    code, doc = _check(capsys, snapshots["bare"], "--no-smoke", "--strict")
    assert code == 1 and doc["strict"] is True
    strict = [f for f in doc["findings"] if f["id"] == "FP8D-STRICT-UNDETERMINED"]
    assert len(strict) == 1 and strict[0]["severity"] == "error"
    assert "FP8D-STRICT-SMOKE" not in {f["id"] for f in doc["findings"]}  # --no-smoke: chosen


def test_strict_fails_when_an_fp8_jobs_smoke_step_could_not_run(
        snapshots: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _check(capsys, snapshots["full"], "--strict")
    smoke = [f for f in doc["findings"] if f["id"] == "FP8D-STRICT-SMOKE"]
    assert len(smoke) == 1 and "snapshot" in smoke[0]["message"]
    _, lax = _check(capsys, snapshots["full"])
    assert not [f for f in lax["findings"] if f["id"].startswith("FP8D-STRICT-")]


def test_assert_ready_strict_raises_on_undetermined(snapshots: dict[str, Path]) -> None:
    kwargs = dict(snapshot=str(snapshots["bare"]), smoke=False, fail_on="never")
    assert preflight.assert_ready(**kwargs).undetermined  # lax: passes
    with pytest.raises(preflight.PreflightError) as err:
        preflight.assert_ready(strict=True, **{**kwargs, "fail_on": "error"})
    assert "FP8D-STRICT-UNDETERMINED" in {f.rule_id for f in err.value.findings}


@pytest.mark.parametrize("bad", ["warnings", "ERROR", "", None, 1])
def test_a_bad_fail_on_is_refused_at_every_entry_point_even_on_a_clean_report(bad) -> None:
    # Issue 14: evaluate_facts used to accept it until a finding existed to compare with.
    with pytest.raises(UserInputError):
        evaluate_facts(Facts(), fail_on=bad)
    with pytest.raises(UserInputError):
        preflight.check(fail_on=bad)
