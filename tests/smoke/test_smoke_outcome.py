"""Result documents -> smoke.* facts, statuses, job shapes and the all-GPUs view (no torch)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight.registry import registry
from preflight.smoke import outcome
from preflight.smoke.runner import ChildRun

GOOD_SMM = {"api": "tensor", "identity_ok": True, "scale_ok": True, "e5m2_refused": True,
            "sqnr_db": 28.5, "kernel_sqnr_db": 55.6, "engaged": True, "accurate": True,
            "finite": True}


def _run(doc: dict, status: str = "ok", error: str | None = None, device: str = "cuda:0") -> ChildRun:
    base = {"done": status == "ok", "stage": "done", "device": device, "device_name": "NVIDIA H200",
            "torch_version": "2.11.0+cu130", "cc": "9.0"}
    return ChildRun({**base, **doc}, status, error, 0, 3.2, "", device)


def test_healthy_run_is_ok_and_registered() -> None:
    f = outcome.to_facts(_run({"scaled_mm": GOOD_SMM,
                               "speed": {"job": [{"shape": [1024, 1024, 1024], "speedup": 0.73}],
                                         "job_speedup_min": 0.73, "ref_speedup": 1.95}}))
    assert f["smoke.status"] == "ok"
    assert f["smoke.speed.job_speedup_min"] == 0.73 and f["smoke.speed.ref_speedup"] == 1.95
    assert f["smoke.speed.job_shapes"] == [[1024, 1024, 1024]]
    assert all(registry().lookup(n) for n in f)


def test_a_false_check_makes_the_run_failed() -> None:
    assert outcome.to_facts(_run({"scaled_mm": {**GOOD_SMM, "scale_ok": False}}))["smoke.status"] == "failed"
    assert outcome.to_facts(_run({"te": {"ckpt_scale_drift": True}}))["smoke.status"] == "failed"
    unavailable = outcome.to_facts(_run({"te": {"available": False, "reason": "needs cc 8.9"}}))
    assert unavailable["smoke.status"] == "failed" and unavailable["smoke.te.reason"] == "needs cc 8.9"
    assert "smoke.te.reason" not in outcome.to_facts(_run({"te": {"available": True, "reason": ""}}))


def test_backend_not_importable_is_an_error_fact_not_a_backend() -> None:
    f = outcome.to_facts(_run({"scaled_mm": GOOD_SMM,
                               "torchao": {"error": "not importable: x", "importable": False}}))
    assert f["smoke.backends"] == ["scaled_mm"]
    assert f["smoke.torchao.error"] == "not importable: x"


def test_one_bad_gpu_of_several_is_named() -> None:
    main = _run({"scaled_mm": GOOD_SMM})
    good = _run({"scaled_mm": GOOD_SMM}, device="cuda:1")
    crashed = _run({}, "crash", "killed by SIGSEGV during: scaled_mm", device="cuda:2")
    wrong = _run({"scaled_mm": {**GOOD_SMM, "identity_ok": False}}, device="cuda:3")
    f = outcome.to_facts(main, [good, crashed, wrong], all_gpus=True)
    assert f["smoke.gpus.checked"] == 4 and f["smoke.gpus.bad_count"] == 2
    assert f["smoke.gpus.bad"][0].startswith("cuda:2") and "SIGSEGV" in f["smoke.gpus.bad"][0]
    assert "identity_ok" in f["smoke.gpus.bad"][1]
    assert f["smoke.status"] == "failed"
    details = outcome.to_details(main, [good, crashed, wrong], f)
    assert [g["device"] for g in details["gpus"]] == ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]


def test_single_gpu_all_gpus_run_reports_one_checked() -> None:
    f = outcome.to_facts(_run({"scaled_mm": GOOD_SMM}), [], all_gpus=True)
    assert f["smoke.gpus.checked"] == 1 and f["smoke.gpus.bad_count"] == 0


def test_job_shapes_from_intent() -> None:
    facts = {"intent.shapes.hidden": 4096, "intent.shapes.ffn": 14336, "intent.shapes.tokens": 8192}
    assert outcome.job_shapes(facts) == [[8192, 4096, 4096], [8192, 4096, 14336], [8192, 14336, 4096]]
    explicit = {"intent.shapes.gemms": [[16, 32, 48], ["bad"], [0, 1, 2]], **facts}
    assert outcome.job_shapes(explicit, [(1, 2, 3)]) == [[1, 2, 3], [16, 32, 48]]
    assert outcome.job_shapes({"intent.shapes.hidden": 4096}) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["intent.shapes.hidden", "intent.shapes.ffn",
                                        "intent.shapes.tokens", "intent.shapes.gemms"]),
                       st.one_of(st.integers(-5, 10**6), st.none(), st.text(max_size=3),
                                 st.lists(st.lists(st.integers(-3, 10**5), max_size=4), max_size=3))))
def test_job_shapes_are_always_positive_triples(facts: dict) -> None:
    for shape in outcome.job_shapes(facts):
        assert len(shape) == 3 and all(isinstance(v, int) and v > 0 for v in shape)


def test_a_backend_asked_for_by_name_that_cannot_be_imported_fails_the_run() -> None:
    missing = {"scaled_mm": GOOD_SMM,
               "te": {"error": "not importable: No module named 'transformer_engine'",
                      "importable": False}}
    named = outcome.to_facts(_run(missing), requested=("te",))
    assert named["smoke.status"] == "failed"
    assert named["smoke.te.error"].startswith("requested backend te is not installed")
    # "auto" checks what is installed: an absent backend there is no failure.
    assert outcome.to_facts(_run(missing), requested=("auto",))["smoke.status"] == "ok"
    assert outcome.to_facts(_run(missing))["smoke.status"] == "ok"


def test_a_failed_speed_stage_is_not_ok() -> None:
    oom = "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    f = outcome.to_facts(_run({"scaled_mm": GOOD_SMM, "speed": {"error": oom}}))
    assert f["smoke.status"] == "failed"
    assert f["smoke.speed.error"] == oom
