"""redteam18 (session 44): the two classes redteam17 left open, then attacks on the readers merged
in session 43. Each case of a "not" test failed before its fix.

- ``{ }`` groups in an ``if`` / ``while`` test (reading/shellchain.py): a group later in the test
  (``A || { B && C; }``) or behind ``!`` (``! { A; }``) was an opaque test, so both arms were
  read as maybe-runs where bash decides one; now the list is evaluated as bash groups it (the
  expected arm below is what bash 5 printed for each test with ``echo`` in place of the launch);
- a bare redirection (``> f``, ``>| f``, ``2> f``: bash's null command with that redirection
  truncates f) was dropped by the split, and a write by another descriptor (``ls 2> f``,
  ``exec 3> f``, ``cmd >& f``) was never seen: a script written before and run after was
  followed from the text it no longer holds;
- a NeMo 1.x Hydra config with a long chain of ``${a.b}`` references (nemo_omegaconf): each
  reference restarted the depth count, Python's recursion limit ended the app's read and the job
  read as no framework at all.

- the agreement scoring took a report that read a rollout but states nothing of its FP8 as "no
  rollout" (benchmarks/agreement.py score, fixed by the lead: only a report with no rollout fact).
Fixed (shell19, the lead's policy): a launch word from a variable the script never sets is read
as empty, as bash does, and said (FP8D-CFG-EMPTY-ASSUMED at its line).
Attacked and holding: ``@hydra_runner`` config paths out of the job (absolute, ``..``, symlinked
file or group folder, defaults entries with ``..``): Unknown with the reason, nothing opened;
oc.env / oc.decode cycles through the environment; launchedit's passive commands.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown

_ARMS = "; then python train.py --fp8 1; else python train.py --fp8 0; fi\n"


def _arms(text: str) -> list[str]:
    """The ``--fp8`` value of each launch the walk considers (both arms: the test undecided)."""
    from preflight.reading.shellexpand import launches
    from preflight.reading.shellheredoc import kept_text
    from preflight.reading.shellwords import split
    got = launches(split(kept_text(text)), lambda w: w == "train.py" or w.endswith("/train.py"))
    return [la.args[1].text for la in got]


# --- `{ }` groups in an if test (reading/shellchain.py) -----------------------------------------

@pytest.mark.parametrize("test, bash", [
    ("A=1\nif [ $A = 2 ] || { [ $A = 1 ] && [ $A = 3 ]; }", "0"),
    ("A=1\nif { [ $A = 2 ] || [ $A = 1 ]; } && { [ $A = 3 ]; }", "0"),
    ("if ! { true; }", "0"),
    ("if ! { false; }", "1"),
    ("A=1\nif ! { [ $A = 1 ] || false; } && true", "0"),
    ("A=1\nif [ $A = 1 ] && ! { [ $A = 2 ]; }", "1"),
    ("A=1\nif { { [ $A = 1 ]; }; }", "1"),
    ("A=1\nif { ! { [ $A = 2 ]; } && [ $A = 1 ]; } || false", "1"),
    ("if true || { false; } && false", "0"),
    ("if true || { false && false; }", "1"),
    ("if ! ! true", "1"),
    ("A=1\nif {\n  [ $A = 2 ] ||\n  [ $A = 1 ]\n} && true", "1"),
])
def test_a_group_in_an_if_test_is_the_arm_bash_runs(test: str, bash: str) -> None:
    assert _arms(test + _ARMS) == [bash]


@pytest.mark.parametrize("test", [
    "if { [ $X = 1 ]; }", "if true && ! { [ $X = 1 ]; }", "if false || { [ $X = 1 ] && true; }",
    "if { true; false; } && [ $X = 1 ]",          # `;` in a group: its last command decides
    "if ! { false; } | [ $X = 1 ]",               # a pipe: its last command decides
])
def test_a_group_on_a_run_time_value_is_undecided(test: str) -> None:
    assert sorted(_arms(test + _ARMS)) == ["0", "1"]


@pytest.mark.parametrize("test", [
    "if " + "{ " * 5000 + "true; " + "}; " * 5000,          # deep: no recursion
    "if " + "! " * 5000 + "{ true; }",
    "if " + "{ true; } && " * 3000 + "true",              # long: MAX_CHAIN
    "if true; }; }",                                      # closes nothing opened
])
def test_hostile_groups_are_read_in_bounded_time(test: str) -> None:
    from tests.cputime import cpu_seconds
    before = cpu_seconds()
    got = _arms(test + _ARMS)
    assert set(got) <= {"0", "1"}
    assert cpu_seconds() - before < 20      # ~0.3 s quiet


@pytest.mark.parametrize("test", [
    "if " + "true && " * 16 + "{ true && true; }",       # MAX_CHAIN reached inside a group
    "if { true | true; }",                                 # a pipe inside a group
    "while " + "[ 1 = 1 ] || " * 20 + "{ false; }",
])
def test_a_group_cut_by_the_bounds_is_no_script_bash_refuses(test: str) -> None:
    # the `{` merged into the test before the cut was never opened for the `}` after it:
    # Split.unclosed said bash refuses a script it runs
    from preflight.reading.shellwords import split
    tail = "; do break; done\n" if test.startswith("while") else _ARMS
    assert split(test + tail).unclosed is None


# --- a bare redirection and other descriptors' writes (reading/shellwords.py, shellfiles.py) ------

_WRITE = 'echo "python train.py --fp8 1" > '
_HERE = "cat > f.sh <<EOF\npython train.py --fp8 1\nEOF\n"


@pytest.mark.parametrize("text", [
    _WRITE + "f\n> f\nbash f\n", _WRITE + "f\n>| f\nbash f\n", _WRITE + "f\n2> f\nbash f\n",
    _WRITE + "f\n>f; bash f\n", _WRITE + "f\n[ -d x ] || > f\nbash f\n",
    _WRITE + "f\nls 2> f\nbash f\n", _WRITE + "f\nls 2>>f\nbash f\n",
    _WRITE + "f\nexec 3> f\nbash f\n", _WRITE + "f\nls >& f\nbash f\n",
    _WRITE + "f\nls 1>/dev/null 2>f\nbash f\n",
    _HERE + "> f.sh\nbash f.sh\n", _HERE + "make 2> f.sh\nbash f.sh\n",
])
def test_a_file_emptied_or_written_by_another_descriptor_is_not_followed(text: str) -> None:
    assert _arms(text) == []


@pytest.mark.parametrize("text", [
    _WRITE + "f\n>> f\nbash f\n", _WRITE + "f\n< f\nbash f\n", _WRITE + "f\nls 2> g\nbash f\n",
    _WRITE + "f\nls 2>&1\nbash f\n", 'echo "python train.py --fp8 1" > f 2>/dev/null\nbash f\n',
    _WRITE + "f\n> g\nbash f\n", _HERE + "ls 2>/dev/null\nbash f.sh\n",
])
def test_a_file_still_held_is_followed(text: str) -> None:
    assert _arms(text) == ["1"]


def test_a_bare_redirection_in_an_if_test_succeeds() -> None:
    # bash: `if > f; then` runs the null command, status 0 (checked with bash 5)
    assert _arms("if > /tmp/x" + _ARMS) == ["1"]


# --- NeMo 1.x Hydra configs (frameworks/nemo_omegaconf.py) --------------------------------------

def test_a_long_chain_of_references_is_unknown_not_a_lost_app(tmp_path: Path) -> None:
    # 3,000 `${model.rN}` each naming the next: each reference read at depth 0, Python's recursion
    # limit ended the read of the whole app (the job then read as no framework at all)
    from tests.cputime import cpu_seconds
    from tests.frameworks.test_nemo_hydra import _YAML, _job, _read
    chain = "".join(f"  r{i}: ${{model.r{i + 1}}}\n" for i in range(3000))
    yaml = _YAML.replace("fp8: ${oc.decode:${oc.env:FP8,False}}", "fp8: ${model.r0}") + chain + \
        "  r3000: ${oc.decode:${oc.env:FP8,False}}\n"
    before = cpu_seconds()
    facts, _, values = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n", yaml))
    assert cpu_seconds() - before < 40        # ~2 s quiet
    assert isinstance(facts["config.nemo.model.fp8"], Unknown)
    assert facts["config.nemo.model.fp8_params"] is True       # the rest of the app still read
    assert isinstance(values["intent.fp8"], Unknown) or values["intent.fp8"] is True


def test_a_short_chain_of_references_is_followed(tmp_path: Path) -> None:
    from tests.frameworks.test_nemo_hydra import _YAML, _job, _read
    chain = "".join(f"  r{i}: ${{model.r{i + 1}}}\n" for i in range(5))
    yaml = _YAML.replace("fp8: ${oc.decode:${oc.env:FP8,False}}", "fp8: ${model.r0}") + chain + \
        "  r5: ${oc.decode:${oc.env:FP8,False}}\n"
    facts, _, _ = _read(_job(tmp_path, "export FP8=True\ntorchrun src/train.py\n", yaml))
    assert facts["config.nemo.model.fp8"] is True


# --- open (strict xfail) ----------------------------------------------------------------------

def test_a_rollout_read_without_its_fp8_does_not_pass_for_no_rollout() -> None:
    from tests.benchmarks.test_agreement import _load_agreement
    ag = _load_agreement()
    exp = ag.Expected(asks_fp8=False, rollout_fp8=False, fire=(), must_not_fire=(), tolerated=(),
                      scored_gaps=(), determined=True)
    report = {"facts": {"config.verl.actor_rollout_ref.rollout.name": "vllm",
                        "intent.rollout.engine": "vllm", "intent.fp8": False},
              "findings": [], "undetermined": []}
    assert ag.score(exp, report).outcome != "agree"


def test_launch_flags_from_an_unset_variable_are_not_a_confident_no(tmp_path: Path) -> None:
    from tests.frameworks.test_finetrainers import _intent, _job
    # the lead's policy (session 44, shell19): read as empty, as bash does when the caller sets
    # nothing, but said: an FP8D-CFG-EMPTY-ASSUMED note naming the variable and its line
    intent, read = _intent(_job(tmp_path, upcast="$UPCAST_FLAGS"))
    notes = [p for p in read.problems if p.code == "assumed_empty"]
    assert intent["fp8_weight_storage"][0] is False
    assert [(n.level, n.line, "$UPCAST_FLAGS" in n.message) for n in notes] == [("info", 14, True)]
