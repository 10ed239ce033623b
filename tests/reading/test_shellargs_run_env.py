"""``shellargs.run_env``: each run of a called script starts with its own environment, never a
sibling run's (shell17 item 2: ``bash s.sh`` beside ``PR=fp8 bash s.sh`` read ``PR=fp8`` in
both, so the BF16 run asked FP8 too)."""

from __future__ import annotations

from preflight.reading.shellargs import ARGV, ENVIRON, encode, run_env, with_env

PLAIN = encode([])


def test_a_plain_run_does_not_keep_the_last_callers_prefix() -> None:
    # the FP8 run's environment, as the reader of that run passed it on
    inherited = {"PR": "fp8", ENVIRON: "PR", "HOME_SET": "x"}
    got = run_env(inherited, PLAIN)
    assert "PR" not in got and ENVIRON not in got
    assert got["HOME_SET"] == "x" and got[ARGV] == PLAIN    # what is not a run's own stays


def test_a_run_with_a_prefix_gets_it() -> None:
    value = with_env({ARGV: PLAIN, ENVIRON: "PR", "PR": "fp8"})
    assert value is not None
    got = run_env({"SEQ": "1", ENVIRON: "SEQ"}, value)
    assert got["PR"] == "fp8" and got[ENVIRON] == "PR" and "SEQ" not in got


def test_a_plain_run_with_no_caller_environment_is_as_given() -> None:
    assert run_env({"A": "1"}, PLAIN) == {"A": "1", ARGV: PLAIN}
