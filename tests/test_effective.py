"""preflight/effective.py: the recipe that really runs, and the token divisibility it needs.

The default-recipe table is what get_default_fp8_recipe() returns at each Transformer Engine tag
(read with git show: fp8.py v1.0-v2.8, quantization.py v2.9-v2.18; check_mxfp8_support at v2.5,
v2.6, v2.9, v2.18).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.effective import apply, derive, te_default_recipe, token_align_needed
from preflight.facts import Facts, Unknown
from preflight.registry.intent import RECIPES

H100, L40S, B200, B300, THOR, RTX5090, GB10 = (9, 0), (8, 9), (10, 0), (10, 3), (11, 0), \
    (12, 0), (12, 1)

# (TE version, cc) -> what that tag's get_default_fp8_recipe() returns.
READ_AT_TAGS = [
    ("1.13.0", B200, "delayed"),        # v1.13: return DelayedScaling()
    ("1.0.0", RTX5090, "delayed"),
    ("2.0.0", H100, "delayed"),         # v2.0: cc >= (10, 0) -> MXFP8BlockScaling()
    ("2.0.0", B200, "mxfp8"),
    ("2.5.0", RTX5090, "mxfp8"),        # v2.5: no sm_12x branch yet (refused at run time)
    ("2.6.0", RTX5090, "delayed"),      # v2.6: check_mxfp8_support() False on 12.0+
    ("2.6.0", B200, "mxfp8"),
    ("2.7.0", RTX5090, "current"),      # v2.7: Float8CurrentScaling() on 12.0+
    ("2.7.0", GB10, "current"),
    ("2.9.0", THOR, "mxfp8"),           # 10.0 <= cc < 12.0
    ("2.18.0", B300, "mxfp8"),
    ("2.18.0", H100, "delayed"),
    ("2.18.0", L40S, "delayed"),
]


@pytest.mark.parametrize(("version", "cc", "recipe"), READ_AT_TAGS)
def test_the_default_recipe_read_at_the_tags(version: str, cc: tuple[int, int],
                                             recipe: str) -> None:
    assert te_default_recipe(version, cc) == recipe


versions = st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.integers(0, 3), st.integers(0, 30),
                     st.integers(0, 3))
ccs = st.tuples(st.integers(7, 13), st.integers(0, 9))


@given(versions, ccs)
def test_the_default_is_always_a_recipe_of_the_vocabulary(version: str,
                                                          cc: tuple[int, int]) -> None:
    assert te_default_recipe(version, cc) in RECIPES


@given(versions, st.tuples(st.integers(7, 9), st.integers(0, 9)))
def test_before_blackwell_it_is_always_delayed_scaling(version: str, cc: tuple[int, int]) -> None:
    assert te_default_recipe(version, cc) == "delayed"


@given(st.tuples(st.integers(2, 3), st.integers(0, 30), st.integers(0, 3)),
       st.tuples(st.integers(10, 11), st.integers(0, 9)))
def test_datacenter_blackwell_gets_mxfp8_from_2_0(v: tuple[int, int, int],
                                                  cc: tuple[int, int]) -> None:
    assert te_default_recipe(".".join(map(str, v)), cc) == "mxfp8"


@given(versions, ccs, st.sampled_from(["rc1", ".dev20250101", "+cu12", "a0+3bcc3cd.nv25.01"]))
def test_labels_do_not_change_the_answer(version: str, cc: tuple[int, int], tail: str) -> None:
    # A release candidate runs its release's code; a build flavour or an NGC build too.
    assert te_default_recipe(version + tail, cc) == te_default_recipe(version, cc)


def test_an_unparseable_version_is_none() -> None:
    assert te_default_recipe("not-a-version", H100) is None


@pytest.mark.parametrize(("recipe", "tp", "sp", "cp", "needed"), [
    ("delayed", 1, False, 1, 16),
    ("delayed", 2, True, 1, 16),     # 8 per rank before the all-gather, 16 after it
    ("delayed", 4, True, 1, 32),
    ("delayed", 4, False, 1, 16),    # no sequence split without SP
    ("current", 2, True, 2, 32),
    ("mxfp8", 4, True, 1, 128),      # ms-swift issue 9723: TP x 32
    ("mxfp8", 1, False, 1, 32),
    ("blockwise", 2, True, 1, 256),
    ("nvfp4", 1, False, 2, 256),
])
def test_token_alignment(recipe: str, tp: int, sp: bool, cp: int, needed: int) -> None:
    assert token_align_needed(recipe, tp, sp, cp) == needed


def test_a_recipe_transformer_engine_does_not_run_has_no_alignment() -> None:
    assert token_align_needed("rowwise", 1, False, 1) is None


def _facts(**values: object) -> Facts:
    # gpu__cc -> gpu.cc; te -> pkg.transformer-engine.version
    names = {"te": "pkg.transformer-engine.version"}
    return Facts({names.get(k, k.replace("__", ".")): v for k, v in values.items()})


def _derive(intent: dict[str, object], **machine: object) -> dict[str, object]:
    values, _ = derive(_facts(**machine), {f"intent.{k}": v for k, v in intent.items()})
    return {k.removeprefix("effective."): v for k, v in values.items()}


TE_JOB = {"fp8": True, "backend": "te", "recipe_by_backend": True,
          "recipe": Unknown("te.autocast() without a recipe")}


def test_a_job_leaving_the_recipe_to_te_gets_the_gpu_default() -> None:
    b200 = _derive(TE_JOB, gpu__cc="10.0", te="2.8.0")
    h100 = _derive(TE_JOB, gpu__cc="9.0", te="2.8.0")
    assert (b200["recipe"], b200["recipe_source"]) == ("mxfp8", "te_default")
    assert (h100["recipe"], h100["recipe_source"]) == ("delayed", "te_default")


def test_a_stated_recipe_is_the_one_that_runs() -> None:
    out = _derive({**TE_JOB, "recipe": "delayed"}, gpu__cc="10.0",
                  te="2.8.0")
    assert (out["recipe"], out["recipe_source"], out["te_default_recipe"]) == \
        ("delayed", "job", "mxfp8")


def test_unknown_gpu_or_te_leaves_the_default_unknown_with_the_reason() -> None:
    no_te = _derive(TE_JOB, gpu__cc="10.0")
    assert isinstance(no_te["recipe"], Unknown) and "not installed" in no_te["recipe"].reason
    no_gpu = _derive(TE_JOB, te="2.8.0")
    assert isinstance(no_gpu["te_default_recipe"], Unknown)
    nvml = _derive(TE_JOB, gpu__cc=Unknown("NVML failed"),
                   te="2.8.0")
    assert "NVML failed" in nvml["recipe"].reason


def test_no_fp8_no_effective_facts() -> None:
    assert _derive({"fp8": False, "backend": "none"}, gpu__cc="10.0") == {}


PACKED = {"fp8": True, "backend": "te", "recipe": "mxfp8", "tp": 4, "sequence_parallel": True,
          "cp": 1, "packing": True}


@pytest.mark.parametrize(("pad", "ok"), [(16, False), (128, True), (256, True), (64, False)])
def test_a_packed_job_is_aligned_only_through_its_pad_multiple(pad: int, ok: bool) -> None:
    out = _derive({**PACKED, "pad_multiple": pad})
    assert out["token_align_needed"] == 128
    assert out["token_align_ok"] is ok


def test_a_packed_job_without_a_stated_pad_multiple_is_undetermined() -> None:
    out = _derive(PACKED)
    assert isinstance(out["token_align_ok"], Unknown)
    out = _derive({**PACKED, "pad_multiple": Unknown("set by the launcher")})
    assert "set by the launcher" in out["token_align_ok"].reason


def test_static_shapes_are_left_to_the_static_rule() -> None:
    out = _derive({**PACKED, "packing": False, "pad_multiple": 16})
    assert out["token_align_needed"] == 128 and "token_align_ok" not in out


def test_unknown_tensor_parallel_size_makes_the_need_unknown() -> None:
    out = _derive({**PACKED, "tp": Unknown("set on the command line"), "pad_multiple": 128})
    assert isinstance(out["token_align_needed"], Unknown)
    assert isinstance(out["token_align_ok"], Unknown)


def test_apply_recomputes_and_keeps_only_what_was_assumed() -> None:
    facts = Facts({"intent.fp8": True, "intent.backend": "te", "intent.recipe": "mxfp8",
                   "effective.token_align_ok": False, "effective.recipe": "nvfp4"},
                  {"effective.token_align_ok": "snapshot", "effective.recipe": "assume"})
    out = apply(facts)
    assert out["effective.recipe"] == "nvfp4"                 # assumed: kept
    assert "effective.token_align_ok" not in out              # a stale value is dropped
    assert out["effective.token_align_needed"] == 32
    assert out.source("effective.token_align_needed") == \
        "effective.recipe, intent.tp, intent.cp"


@pytest.mark.parametrize(("env", "recipe"), [("b200", "mxfp8"), ("h100", "delayed")])
def test_the_check_reports_the_gpu_dependent_default_end_to_end(env: str, recipe: str) -> None:
    # A job that leaves the recipe to TE (what a reader of `te.autocast()` without a recipe
    # states), replayed on a B200 and an H100 node: the same job, two recipes (FP8D-TE-0050).
    import preflight

    snapshot = Path(__file__).resolve().parent / "scenarios" / "_envs" / f"{env}.json"
    report = preflight.check([], smoke=False, snapshot=str(snapshot), assume={
        "intent.fp8": "true", "intent.backend": "te", "intent.recipe_by_backend": "true",
        "pkg.transformer-engine": "2.8.0"})
    found = {f.rule_id: f for f in report.findings}
    assert "FP8D-TE-0050" in found
    assert f" {recipe} on this " in found["FP8D-TE-0050"].message


# --- the recipe not known, the layout known: what every TE recipe needs decides ----------------

UNKNOWN_RECIPE = {"fp8": True, "backend": "te", "recipe": Unknown("the base config is not here"),
                  "tp": 4, "sequence_parallel": False, "cp": 1, "packing": True}


@pytest.mark.parametrize(("pad", "ok"), [
    (8, False),           # misses 16, the per-tensor need, so every recipe's (firing)
    (4, False),
    (16, None),           # enough for per-tensor, not for MXFP8 (32) or block scaling (128)
    (64, None),
    (128, True),          # every recipe's (quiet)
    (1024, True),
])
def test_an_unknown_recipe_is_decided_where_every_recipe_agrees(pad: int, ok: bool | None) -> None:
    out = _derive({**UNKNOWN_RECIPE, "pad_multiple": pad})
    assert isinstance(out["token_align_needed"], Unknown)
    if ok is None:
        assert isinstance(out["token_align_ok"], Unknown)
        assert "base config" in out["token_align_ok"].reason
    else:
        assert out["token_align_ok"] is ok


def test_an_unknown_recipe_under_sequence_and_context_parallelism() -> None:
    # TP 2 with SP, CP 2: per-tensor needs 2 x lcm(16, 16) = 32, block scaling 128 x 2 x 2 = 512
    layout = {**UNKNOWN_RECIPE, "tp": 2, "sequence_parallel": True, "cp": 2}
    assert _derive({**layout, "pad_multiple": 16})["token_align_ok"] is False
    assert isinstance(_derive({**layout, "pad_multiple": 256})["token_align_ok"], Unknown)
    assert _derive({**layout, "pad_multiple": 512})["token_align_ok"] is True


@pytest.mark.parametrize("pad", [Unknown("set by the launcher"), True, 0, -16, "16", 2 ** 80 + 8])
def test_hostile_pad_multiples_with_an_unknown_recipe(pad: object) -> None:
    out = _derive({**UNKNOWN_RECIPE, "pad_multiple": pad})
    ok = out["token_align_ok"]
    assert ok is False if pad == 2 ** 80 + 8 else isinstance(ok, Unknown)


def test_an_unknown_recipe_with_an_unknown_layout_stays_unknown() -> None:
    out = _derive({**UNKNOWN_RECIPE, "tp": Unknown("set on the command line"), "pad_multiple": 8})
    assert isinstance(out["token_align_ok"], Unknown)
    assert "command line" in out["token_align_ok"].reason


def test_fixed_length_samples_with_an_unknown_recipe_state_no_packed_answer() -> None:
    out = _derive({**UNKNOWN_RECIPE, "packing": False, "pad_multiple": 8})
    assert "token_align_ok" not in out
