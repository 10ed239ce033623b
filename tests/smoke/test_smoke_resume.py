"""The resume check: its verdicts (pure logic, hypothesis), and the real thing on the CPU with
torchao's emulated float8 (save, load, compare), a truncated and a non-checkpoint file."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.smoke import resume_check as rc

diffs = st.one_of(st.none(), st.floats(min_value=0, max_value=10, allow_nan=False))
flags = st.one_of(st.none(), st.booleans())


@given(st.one_of(st.none(), st.text(min_size=1, max_size=20)), diffs, flags, flags)
def test_classify_is_total_and_ordered(error, diff, equal, stateful) -> None:  # noqa: ANN001
    status = rc.classify(error, diff, equal, stateful)
    assert status in rc.STATUSES
    if error:
        assert status == "refused"                      # a refused load is never "restored"
    elif diff is None:
        assert status == "error"
    elif diff > rc.RESUME_REL_TOL or equal is False:
        assert status == "drifted"
    else:
        assert status == ("not_applicable" if stateful is False else "restored")


def test_fix_names_the_variable_for_the_pickle_refusal() -> None:
    err = ("RuntimeError: Refusing to load pickled Transformer Engine extra state for Linear. "
           "To load it anyway, set NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1.")
    assert rc.UNSAFE_PICKLE_ENV in rc.fix_for(err, "refused")
    assert rc.fix_for(None, "restored") is None and rc.fix_for(None, "not_applicable") is None
    assert "strict=True" in rc.fix_for(None, "drifted")


def test_failure_names_the_cause_of_a_wrapped_error() -> None:
    class CheckpointException(BaseException):   # torch.distributed.checkpoint's is one too
        pass

    exc = CheckpointException("CheckpointException ranks:dict_keys([0])\nTraceback (most recent "
                              "call last): (RANK 0)\n  File x.py, line 3\nValueError: Size mismatch "
                              "between saved torch.Size([1945]) and current: torch.Size([0]) for "
                              "_extra_state")
    text = rc.failure(exc)
    assert text.startswith("CheckpointException: ValueError: Size mismatch")
    assert "in place" in rc.fix_for(text, "refused")
    with pytest.raises(KeyboardInterrupt):
        rc.failure(KeyboardInterrupt())


def test_env_set_restores_the_environment() -> None:
    name = "FP8_DOCTOR_TEST_RESUME_VAR"
    os.environ.pop(name, None)
    with rc.env_set(name, "1"):
        assert os.environ[name] == "1"
    assert name not in os.environ
    with rc.env_set(name, None):
        assert name not in os.environ


def test_private_dir_is_removed_even_on_error() -> None:
    with pytest.raises(ValueError), rc.private_dir() as folder:
        open(os.path.join(folder, "x"), "w").close()
        raise ValueError
    assert not os.path.exists(folder)


torch = pytest.importorskip("torch")


def test_truncated_and_foreign_files_are_findings_not_tracebacks(tmp_path) -> None:  # noqa: ANN001
    good = tmp_path / "model.pt"
    torch.save({"w": torch.ones(64, 64)}, good)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint\n")
    for path in (cut, text):
        sd, err = rc.torch_load(str(path))
        assert sd is None and err.startswith(f"unreadable checkpoint {path.name}")
        assert rc.classify(err, None, None, None) == "refused"
        assert "save it again" in rc.fix_for(err, "refused")
    sd, err = rc.torch_load(str(good))
    assert err is None and sd["w"].shape == (64, 64)


def test_torchao_resume_on_the_cpu() -> None:
    pytest.importorskip("torchao")
    from preflight.smoke import ao_resume

    res = ao_resume.run_all("cpu", emulate=True)
    details = res["resume"]
    # Dynamic scaling keeps no state: the loaded model's next step is the same, bit for bit.
    for name in ("tensorwise", "rowwise", "tensorwise_fsdp_all_gather"):
        for mode in ("torch_save", "dcp"):
            out = details[name][mode]
            assert out["status"] == "not_applicable", (name, mode, out)
            assert out["max_abs_diff"] == 0.0
    assert details["tensorwise_fsdp_all_gather"]["weight_type"] == "WeightWithDynamicFloat8CastTensor"
    assert res["resume_status"] == "not_applicable"


def test_a_dropped_weight_is_drift_not_restored() -> None:
    """The comparison catches a load that silently lost something (here: a weight)."""
    lin = torch.nn.Linear(32, 32)
    x = torch.randn(8, 32)

    def step(m):  # noqa: ANN001, ANN202
        return {"out": m(x).detach()}

    ref = step(lin)
    fresh = torch.nn.Linear(32, 32)
    fresh.load_state_dict({"bias": lin.bias.detach()}, strict=False)
    out = rc.outcome("dropped", ref, fresh, step, None, None, None, True)
    assert out["status"] == "drifted" and out["max_abs_diff"] > 0
