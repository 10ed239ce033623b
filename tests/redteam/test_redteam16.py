"""redteam16 (session 43): attacks on the readers written in session 42 (reading/shellargvset,
shellreach, pyenvset; the ROCm KFD probe) and redteam15's two open classes. Each case of the
first part failed before its fix (a confident FP8 "yes" / "no", or a gpu.count, where the input
decides the opposite or nothing):

- an argument loop (``for a in "$@"; do export "$a"; done``) whose words are not the caller's
  where it runs: a loop in a subshell (``done | tee log``, ``done &``, ``( for ...)``, ``$(for
  ...)``: nothing it sets reaches the script), the script's arguments changed before it
  (``shift``, ``set -- TE_FP8=0``), a ``while [ $# -gt 0 ]`` loop that moves by ``shift 2`` (it was
  skipped: the default read) (shellargvset);
- ``exec cmd`` ends the script as ``exit`` does; a function named ``exit`` makes ``exit`` no end;
  a function named ``python`` defined above ``python - <<EOF`` runs instead of the program
  (shellreach);
- a call Python refuses with TypeError (more positional arguments than the function takes, a
  keyword that names no parameter, one given twice, a required one missing) still bound its
  parameters: a confident value from a call that never happens (pysig.misfit, used by
  pycallers, pyenvset; redteam15's open class);
- a name imported in a cycle of the job's modules (``from other import MP`` in cfg.py, ``from cfg
  import MP`` in other.py; a module importing itself; a module importing the script being run)
  was read as the text ``'other.MP'`` ("none of no, fp8, ..."), naming the wrong module, or as
  the script's value though Python stops with ImportError (jobs/pynames; redteam15's open class);
- os.environ writes the walk did not see (``|=``, ``+=``, an annotated or unpacking target,
  ``update(mapping, X=...)``'s keywords) or read wrongly (a decorated function's body as what its
  call runs; a method, a nested function, a lambda or a function defined twice not followed and
  their writes not made Unknown) (pyenvset);
- ``ROCR_VISIBLE_DEVICES`` with ``HIP_VISIBLE_DEVICES``: HIP picks among the GPUs ROCr exposes,
  read as ROCr's list alone (probes/rocm);
- a yq model YAML with a merge key (``<<: *base``: yq keeps ``<<`` as a key unless
  ``explode(.)``) or a tag (``!!binary``) was read as the YAML loader here reads it: the merged
  ``--fp8-format`` a flag yq never prints (frameworks/megatron_yq).

The last part pins what held: the framework readers of session 42 (yq, NeMo launcher, cloudai,
ChatLearn, EasyR1) open nothing outside the job through symlinks, FIFOs, devices or /proc, and a
reference through one never reaches the facts.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

TRAIN = textwrap.dedent("""\
    import argparse, torch
    import transformer_engine.pytorch as te
    p = argparse.ArgumentParser()
    p.add_argument("--fp8", type=int, default=0)
    a = p.parse_args()
    m = te.Linear(16, 16)
    opt = torch.optim.AdamW(m.parameters())
    for i in range(3):
        with te.fp8_autocast(enabled=bool(a.fp8)):
            m(torch.randn(16, 16)).sum().backward()
        opt.step()
    """)


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _fp8(root: Path, files: dict[str, str], entry: str = "run.sh") -> Any:
    read = read_paths([str(_job(root, files) / entry)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values.get("intent.fp8")


# --- argument loops whose words are not the caller's --------------------------------------------

LOOP = 'for a in "$@"; do export "$a"; done'
TAIL = 'TE_FP8="${TE_FP8:-0}"\npython train.py --fp8 "$TE_FP8"\n'


@pytest.mark.parametrize("script", [
    LOOP + " | tee log\n",                        # a pipeline part: a subshell
    LOOP + " &\n",                                # the background: a subshell
    "( " + LOOP + " )\n",
    "(\n" + LOOP.replace("; do", "; do\n").replace("; done", "\ndone") + "\n)\n",
    "X=$(" + LOOP + ")\n",
    "shift\n" + LOOP + "\n",                      # the caller's first word dropped
    "set -- TE_FP8=0\n" + LOOP + "\n",            # the words replaced
    "set -e -- TE_FP8=0\n" + LOOP + "\n",
    "shift\nexport \"$@\"\n",
    'while [ $# -gt 0 ]; do export "$1"; shift 2; done\n',     # was skipped: the default
    'while [ $# -gt 0 ]; do export "$1"; shift; shift; done\n',
])
def test_an_argument_loop_that_does_not_get_the_callers_words_decides_nothing(
        tmp_path: Path, script: str) -> None:
    got = _fp8(tmp_path, {"run.sh": "bash train.sh TE_FP8=1 TP=8\n", "train.sh": script + TAIL,
                          "train.py": TRAIN})
    assert isinstance(got, Unknown), got            # was True (or False for the while loops)


@pytest.mark.parametrize("script", [
    LOOP + "\n",
    "set -euo pipefail\nset -x\n" + LOOP + "\n",   # options only: the words stay
    "f() { shift; }\nf a b\n" + LOOP + "\n",       # a function's shift is its own
    LOOP + " > log 2>&1\n",                        # a redirection is no subshell
    'for a in "$@"; do shift; export "$a"; done\n',  # `for` expanded "$@" once, before
    'while [ $# -gt 0 ]; do export "$1"; shift; done\n',
])
def test_an_argument_loop_with_the_callers_words_still_decides(tmp_path: Path,
                                                               script: str) -> None:
    assert _fp8(tmp_path, {"run.sh": "bash train.sh TE_FP8=1 TP=8\n",
                           "train.sh": script + TAIL, "train.py": TRAIN}) is True


# --- commands that never run: exec, shadowing functions -----------------------------------------

PROG = ("python - <<'EOF'\nimport torch\nimport transformer_engine.pytorch as te\n"
        "m = te.Linear(16, 16)\nopt = torch.optim.AdamW(m.parameters())\n"
        "with te.fp8_autocast(enabled=True):\n    y = m(torch.randn(16, 16))\n"
        "y.sum().backward()\nopt.step()\nEOF\n")


@pytest.mark.parametrize("head", [
    "exec true\n",                               # the shell becomes `true`: nothing after runs
    "exec -a name sleep 1\n",
    "python() { echo skipped; }\n",              # bash runs the function, not the program
    "function python { :; }\n",
])
def test_a_program_bash_never_runs_is_not_the_jobs(tmp_path: Path, head: str) -> None:
    assert _fp8(tmp_path, {"run.sh": head + PROG}) is not True       # was True


@pytest.mark.parametrize("head", [
    "exec > log 2>&1\n",                         # redirections only: the script goes on
    "exec 3>&1\n",
    "exit() { :; }\nexit 0\n",                   # `exit` is the script's function here
    "exec() { :; }\nexec true\n",
    "setup() { :; }\n",
    'python() { CUDA_VISIBLE_DEVICES=0 command python "$@"; }\n',   # a wrapper runs it
])
def test_a_program_bash_runs_is_still_read(tmp_path: Path, head: str) -> None:
    assert _fp8(tmp_path, {"run.sh": head + PROG}) is True


def test_a_function_defined_after_the_program_does_not_shadow_it(tmp_path: Path) -> None:
    assert _fp8(tmp_path, {"run.sh": PROG + "python() { :; }\n"}) is True


# --- calls Python refuses with TypeError --------------------------------------------------------

MAKE = "from accelerate import Accelerator\ndef make({params}):\n" \
       "    return Accelerator(mixed_precision=mp)\nacc = make({call})\n"


@pytest.mark.parametrize("params, call", [
    ("mp", "'fp8', 'extra'"),                    # one positional too many
    ("mp='no'", "'fp8', 'extra'"),
    ("mp", "mp='fp8', bogus=1"),                 # a keyword no parameter has
    ("mp", "'fp8', mp='fp8'"),                   # given twice
    ("mp, /", "mp='fp8'"),                       # positional-only by keyword
    ("mp, *, k", "'fp8'"),                       # a required keyword-only one missing
])
def test_a_call_python_refuses_binds_nothing(tmp_path: Path, params: str, call: str) -> None:
    got = _fp8(tmp_path, {"train.py": MAKE.format(params=params, call=call)}, "train.py")
    assert isinstance(got, Unknown) and "TypeError" in got.reason     # was True


@pytest.mark.parametrize("params, call", [
    ("mp", "'fp8'"), ("mp='fp8'", ""), ("mp, *a", "'fp8', 1"), ("mp, **kw", "mp='fp8', x=1"),
    ("mp, /", "'fp8'"), ("mp, *, k=1", "'fp8'"),
])
def test_a_call_python_accepts_still_binds(tmp_path: Path, params: str, call: str) -> None:
    assert _fp8(tmp_path, {"train.py": MAKE.format(params=params, call=call)},
                "train.py") is True


def test_a_constructor_given_too_many_arguments_binds_nothing(tmp_path: Path) -> None:
    text = ("from accelerate import Accelerator\nclass M:\n    def __init__(self, mp):\n"
            "        self.acc = Accelerator(mixed_precision=mp)\nM('fp8', 'x')\n")
    got = _fp8(tmp_path, {"train.py": text}, "train.py")
    assert isinstance(got, Unknown) and "TypeError" in got.reason


def test_misfit_leaves_decorated_functions_and_star_calls_alone() -> None:
    """``@hydra.main`` calls ``main()`` with its config: a decorator may take any signature."""
    from preflight.reading.pysig import misfit

    def one(src: str, call: str) -> str | None:
        fn = ast.parse(src).body[0]
        node = ast.parse(call).body[0].value        # type: ignore[attr-defined]
        return misfit(fn, node)

    assert one("@hydra.main()\ndef main(cfg): pass", "main()") is None
    assert one("def f(a): pass", "f(*xs)") is None and one("def f(a): pass", "f(**kw)") is None
    assert one("def f(a): pass", "f()") is not None
    assert one("def f(a, b=1): pass", "f(1, 2, 3)") is not None


# --- names imported in a cycle of the job's modules ---------------------------------------------

USE = "from accelerate import Accelerator\nfrom {m} import MP\nacc = Accelerator(mixed_precision=MP)\n"


@pytest.mark.parametrize("files, module", [
    ({"cfg.py": "from cfg import MP\n"}, "cfg.py"),
    ({"cfg.py": "from other import MP\n", "other.py": "from cfg import MP\n"}, "cfg.py"),
    ({"cfg.py": "from b import MP\n", "b.py": "from c import MP\n", "c.py": "from cfg import MP\n"},
     "cfg.py"),
])
def test_a_name_imported_in_a_cycle_names_the_cycle(tmp_path: Path, files: dict[str, str],
                                                    module: str) -> None:
    got = _fp8(tmp_path, {"train.py": USE.format(m="cfg"), **files}, "train.py")
    # was "mixed_precision 'other.MP' is none of no, fp8, ...": a name read as its own text
    assert isinstance(got, Unknown) and "cycle" in got.reason and module in got.reason
    assert ".MP'" not in got.reason


def test_a_module_importing_the_script_being_run_is_no_value(tmp_path: Path) -> None:
    """cfg.py's ``from train import BASE`` runs train.py again as a module, whose ``from cfg
    import MP`` meets cfg partly initialised: ImportError. Read as train.py's BASE: True."""
    train = ("from accelerate import Accelerator\nfrom cfg import MP\nBASE = 'fp8'\n"
             "acc = Accelerator(mixed_precision=MP)\n")
    got = _fp8(tmp_path, {"train.py": train, "cfg.py": "from train import BASE\nMP = BASE\n"},
               "train.py")
    assert isinstance(got, Unknown) and "train.py" in got.reason and "cycle" in got.reason


def test_a_script_named_like_the_library_it_imports_is_still_read(tmp_path: Path) -> None:
    """lightning.py's ``import lightning as L``: the library, as before (no cycle)."""
    text = ("import lightning as L\ntrainer = L.Trainer(precision='transformer-engine')\n"
            "trainer.fit(model)\n")
    assert _fp8(tmp_path, {"lightning.py": text}, "lightning.py") is True


def test_a_name_passed_on_through_job_modules_is_their_value(tmp_path: Path) -> None:
    got = _fp8(tmp_path, {"train.py": USE.format(m="cfg"), "cfg.py": "from other import MP\n",
                          "other.py": "MP = 'fp8'\n"}, "train.py")
    assert got is True              # (was the text 'other.MP': Unknown)


# --- os.environ writes the walk did not see ------------------------------------------------------

def _left(text: str) -> dict[str, Any]:
    from preflight.reading.pyenvset import left
    from preflight.reading.pysource import Module

    return {k: w.value for k, w in left(Module("t.py", ast.parse(text), environ={})).vars.items()}


@pytest.mark.parametrize("text, value", [
    ("import os\nos.environ['X'] = 'no'\nos.environ |= {'X': 'fp8'}\n", "fp8"),
    ("import os\nos.environ.update({'X': 'no'}, X='fp8')\n", "fp8"),
    ("import os\nos.environ['X']: str = 'fp8'\n", "fp8"),
    ("import os\nos.environ['X'] = 'f'\nos.environ['X'] += 'p8'\n", "fp8"),
])
def test_an_environment_write_of_another_form_is_read(text: str, value: str) -> None:
    assert _left(text)["X"] == value


@pytest.mark.parametrize("text", [
    "import os\nos.environ['X'], y = 'fp8', 1\n",
    "import os\ndef f(v):\n    os.environ['X'] = v\nf('fp8', 'extra')\n",
    "import os\ndef f(v):\n    os.environ['X'] = 'fp8'\nf()\n",
    "import os\ndef f(v='a'):\n    os.environ['X'] = 'fp8'\nf(w=1)\n",
    "import os\ndef deco(fn):\n    return lambda: None\n@deco\ndef f():\n"
    "    os.environ['X'] = 'fp8'\nf()\n",
    "import os\ndef f():\n    os.environ['X'] = 'fp8'\ndef f():\n    pass\nf()\n",
    "import os\nclass C:\n    def f(self):\n        os.environ['X'] = 'fp8'\nC().f()\n",
    "import os\ndef f():\n    def g():\n        os.environ['X'] = 'fp8'\n    g()\nf()\n",
    "import os\nos.environ['X'] = 'a'\nos.environ['X'] += os.getenv('Y')\n",
])
def test_an_environment_write_not_decided_is_unknown(text: str) -> None:
    from preflight.reading.pyvalues import Unresolved

    got = _left(text)
    assert isinstance(got.get("X"), Unresolved), got      # was 'fp8', absent or 'a'


# --- ROCr and HIP visible devices compose ---------------------------------------------------------

@pytest.mark.parametrize("env, seen", [
    ({"ROCR_VISIBLE_DEVICES": "0,1", "HIP_VISIBLE_DEVICES": "1"}, (1,)),    # was (0, 1)
    ({"ROCR_VISIBLE_DEVICES": "2,3", "CUDA_VISIBLE_DEVICES": "1"}, (3,)),   # was (2, 3)
    ({"ROCR_VISIBLE_DEVICES": "3", "HIP_VISIBLE_DEVICES": "1"}, ()),
    ({"ROCR_VISIBLE_DEVICES": "1,0"}, (1, 0)),
    ({"HIP_VISIBLE_DEVICES": "1", "CUDA_VISIBLE_DEVICES": "0,1"}, (1,)),
])
def test_visible_amd_gpus_compose_rocr_then_hip(env: dict[str, str], seen: tuple[int, ...]) -> None:
    from preflight.probes.rocm import _visible

    assert _visible(4, env) == (seen, "")


# --- the new checks stay bounded ------------------------------------------------------------------

def test_the_new_checks_stay_bounded_on_hostile_scripts() -> None:
    """16 argument loops after 15,000 `set` lines (each loop looks back for a shift), 10,000
    `exec` lines under a function named exec and 200 `python()` functions, 1,000 methods writing
    the environment each called once and 1,000 `+=` on it: under 1 CPU s each on a loaded box
    (8x: bounds of 10)."""
    from preflight.reading.pyenvset import left
    from preflight.reading.pysource import Module
    from preflight.reading.shellargs import Given
    from preflight.reading.shellargvset import writers
    from preflight.reading.shellreach import unreached
    from tests.cputime import cpu_seconds

    start = cpu_seconds()
    text = "set -e\n" * 15000 + (LOOP + "\n") * 16 + "echo $TE_FP8\n"
    assert len(writers(text, [Given("TE_FP8=1", "run.sh:1")])) == 16
    assert cpu_seconds() - start < 10
    start = cpu_seconds()
    text = "exec() { :; }\n" + "exec true\n" * 10000 + "python() { :; }\n" * 200 + PROG
    never = unreached(text)
    assert never(text.index("import torch")) is not None
    assert cpu_seconds() - start < 10
    start = cpu_seconds()
    src = "import os\n" + "".join(f"class C{i}:\n    def f{i}(self):\n        os.environ['X{i}'] = 'a'\n"
                                  for i in range(1000)) + \
        "".join(f"obj.f{i}()\n" for i in range(1000)) + "os.environ['A'] += 'x'\n" * 1000
    got = left(Module("t.py", ast.parse(src), environ={}))
    assert len(got.vars) <= 256 + 1 and cpu_seconds() - start < 10


# --- a yq model YAML the loader here reads otherwise than yq -------------------------------------

YQ = ("F=$(yq '... comments=\"\" | .MODEL_ARGS | to_entries | .[] | select(.value != \"false\") | "
      "with(select(.value == \"true\"); .value = \"\") | [.key + \" \" + .value] | join(\"\")' "
      "model.yaml | tr '\\n' ' ')\ntorchrun pretrain_gpt.py --num-layers 2 ${F}\n")


@pytest.mark.parametrize("model, fp8", [
    # yq keeps `<<` as a key unless explode(.) (mikefarah/yq#766): the loader merged it
    ("base: &b\n  --fp8-format: hybrid\nMODEL_ARGS:\n  <<: *b\n  --bf16: true\n", None),
    ("MODEL_ARGS:\n  --fp8-format: !!binary aHlicmlk\n  --bf16: true\n", None),   # was "b'hybrid'"
    ("MODEL_ARGS:\n  --fp8-format: hybrid\n  --bf16: true\n", "hybrid"),
])
def test_a_yq_file_with_merge_keys_or_tags_is_a_run_time_value(tmp_path: Path, model: str,
                                                               fp8: str | None) -> None:
    read = read_paths([str(_job(tmp_path, {"model.yaml": model, "run.sh": YQ}) / "run.sh")])
    assert read.facts.get("config.megatron.fp8_format") == fp8


# --- open (fwtt, frameworks/cloudai.py): a scenario's tests -------------------------------------

CLOUDAI_TEST = ('name = "{n}"\ntest_template_name = "NeMoRun"\n[cmd_args]\nrecipe_name = '
                '"llama3_70b"\n[cmd_args.trainer.plugins]\n{p}\n')


@pytest.mark.xfail(strict=True, reason="open, fwtt (frameworks/cloudai.py _scenario): cloudai "
                   "finds a test by the `name` in its TOML; the file named like it is read")
def test_a_scenario_naming_no_tests_name_is_not_that_file(tmp_path: Path) -> None:
    got = _fp8(tmp_path, {"conf/common/test/a.toml": CLOUDAI_TEST.format(n="zzz", p='fp8 = "hybrid"'),
                          "conf/common/test_scenario/s.toml":
                          'name = "s"\n[[Tests]]\nid = "t1"\ntest_name = "a"\n'},
               "conf/common/test_scenario/s.toml")
    assert not isinstance(got, bool)         # cloudai: no test named "a" (the TOML says zzz)


@pytest.mark.xfail(strict=True, reason="open, fwtt (frameworks/cloudai.py _scenario): the facts "
                   "of two linked tests merge into one job; one FP8 test decides the scenario")
def test_a_scenario_of_an_fp8_test_and_a_bf16_test_is_not_one_fp8_job(tmp_path: Path) -> None:
    got = _fp8(tmp_path, {"conf/common/test/a.toml": CLOUDAI_TEST.format(n="a", p='fp8 = "hybrid"'),
                          "conf/common/test/b.toml": CLOUDAI_TEST.format(n="b", p=""),
                          "conf/common/test_scenario/s.toml":
                          'name = "s"\n[[Tests]]\nid = "t1"\ntest_name = "a"\n'
                          '[[Tests]]\nid = "t2"\ntest_name = "b"\n'},
               "conf/common/test_scenario/s.toml")
    assert not isinstance(got, bool)


# --- held: the framework readers of session 42 stay inside the job -------------------------------

SECRET = "SECRETxyz0123"
_RECORDING: list[list[str]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING and event in ("open", "os.listdir", "os.scandir") and args and \
            isinstance(args[0], (str, bytes)):
        _RECORDING[-1].append(os.fsdecode(args[0]))


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_redteam16_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_redteam16_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


JOBS: dict[str, tuple[str, str, dict[str, str], str]] = {
    # kind: (the referenced file, its text, the other files, the entry)
    "yq": ("model.yaml", f"MODEL_ARGS:\n  --fp8-format: hybrid\n  --note: {SECRET}\n",
           {"run.sh": "P=model.yaml\nF=$(yq '.MODEL_ARGS | to_entries | .[] | [.key + \" \" + "
                      ".value] | join(\"\")' $P | tr '\\n' ' ')\n"
                      "torchrun pretrain_gpt.py --num-layers 2 $F\n"}, "run.sh"),
    "nemo_launcher": ("launcher_scripts/conf/training/llama/llama2_7b.yaml",
                      f"model:\n  fp8: True\n  note: {SECRET}\n",
                      {"launcher_scripts/main.py": "import hydra\n",
                       "run.sh": "python3 launcher_scripts/main.py stages=[training] "
                                 "training=llama/llama2_7b\n"}, "run.sh"),
    "cloudai": ("src/cloudai/workloads/nemo_run/cloudai_nemorun.py",
                "import nemo_run as run\ndef cloudai_x_recipe():\n    return run.Partial(llm.pretrain"
                ", trainer=run.Config(nl.Trainer, plugins=run.Config(nl.MegatronMixedPrecision, "
                f"fp8='hybrid', precision='{SECRET}')))\n",
                {"conf/common/test/t.toml": 'name = "t"\ntest_template_name = "NeMoRun"\n'
                                            '[cmd_args]\nrecipe_name = "cloudai_x_recipe"\n'},
                "conf/common/test/t.toml"),
    "cloudai_scenario": ("conf/common/test/t.toml",
                         'name = "t"\ntest_template_name = "NeMoRun"\n[cmd_args]\n'
                         'recipe_name = "llama3_70b"\n[cmd_args.trainer.plugins]\n'
                         f'fp8 = "hybrid"\nnote = "{SECRET}"\n',
                         {"conf/common/test_scenario/s.toml":
                          'name = "s"\n[[Tests]]\nid = "t1"\ntest_name = "t"\n'},
                         "conf/common/test_scenario/s.toml"),
    "chatlearn": ("template/grpo.yaml", f"runtime_args:\n  train_backend: {SECRET}\n",
                  {"scripts/train.sh": "python chatlearn/entrypoint.py grpo --config-file "
                                       "template/grpo.yaml models.policy.x=1\n"},
                  "scripts/train.sh"),
    "easyr1": ("examples/config.yaml", f"worker:\n  rollout:\n    dtype: {SECRET}\n",
               {"examples/run.sh": "python3 -m verl.trainer.main config=examples/config.yaml "
                                   "trainer.n_gpus_per_node=1\n"}, "examples/run.sh"),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind", JOBS)
@pytest.mark.parametrize("how", ["plain", "symlink", "fifo", "device", "proc"])
def test_the_new_readers_open_nothing_outside_the_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str], kind: str,
        how: str) -> None:
    ref, text, files, entry = JOBS[kind]
    job, outside = tmp_path / "job", tmp_path / "outside"
    outside.mkdir()
    _job(job, files)
    target, real = job / ref, outside / Path(ref).name
    real.write_text(text)
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "plain":
        target.write_text(text)
    elif how == "symlink":
        target.symlink_to(real)
    elif how == "fifo":
        os.mkfifo(target)                       # no writer: an open without O_NONBLOCK hangs
    else:
        target.symlink_to("/dev/zero" if how == "device" else "/proc/self/environ")
    monkeypatch.chdir(tmp_path)
    opened.clear()                              # (the files written above)
    read = read_paths([str(job / entry)])
    blob = json.dumps(read.facts, default=str) + repr(read.problems)
    assert (SECRET in blob) is (how == "plain")     # the plain file is read (the control)
    root, inside = os.path.realpath(tmp_path), os.path.realpath(job) + os.sep
    strays = [p for p in map(os.path.realpath, opened) if not p.startswith(inside)
              and p.startswith((root, "/proc", "/dev"))]
    assert strays == []
