"""redteam12 (session 39): attacks on what session 38 added (reading/pyfire, pyconstruct,
pyforeign, pypretrained, pyfromyaml, pyloopstep, pybuiltins, shellnames, shellfuncs;
frameworks/pytorch_loop, gpt_neox; fixdiff/layers; the pre-commit hook's file filter). Each case
of the first part failed before its fix:

- ``def train(...)`` then ``from helpers import train`` (or ``train = ...``, a second ``def``):
  ``fire.Fire(train)`` runs that, but the launch line was bound to the ``def`` (pyfire, new
  reading/pyrebound.py);
- ``sed 's.a\\.b.Y.'``: GNU sed reads an escaped delimiter that is a regex operator as that
  operator; ``\\.`` was a literal dot (shellnames);
- an ``export`` in a function whose body is a ``( ... )`` subshell, or in a ``( ... )`` spread over
  lines; a call before the function's definition ("command not found"); ``setup &`` (a
  background subshell); ``local X`` then ``export X=1`` (the function's own X); ``return`` before
  the export: all reached the launch command (shellfuncs, launchenv);
- ``te-fp8-mha: false`` then ``te_fp8_mha: true`` in one GPT-NeoX file: from_ymls refuses it
  (ValueError); the later one won, FP8 "yes" (gpt_neox);
- an object built only in a function nothing calls decided a method's ``if self.use_fp8``
  (pyconstruct); a backward pass and optimizer step only in such a function made a "plain
  PyTorch job" out of a script that trains nothing (pytorch_loop);
- ``if it == 10: break`` (or ``continue``, ``raise``, ``sys.exit()``) before ``if it >= 100:`` in
  ``for it in range(200)``: the last step was taken as a witness of a call that never runs
  (pyloopstep);
- the pre-commit hook filtered changed files by lower-case extension: ``Config.YAML``, a sourced
  ``common.env``, an extensionless launcher or ``acc.conf`` decide a verdict and did not re-run it
  (tests/test_ecosystem.py holds the hook's ``always_run``).

The rest pin what held (no traceback, bounded, nothing outside the job read or reported).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.boundary import enforced
from preflight.reading.launchenv import launch_env
from preflight.reading.shellvars import RUNTIME, collect_variables, strip_comments

SENTINEL = "SENTINEL_REDTEAM12_9q4z"
BASH = shutil.which("bash")


def _job(root: Path, files: dict[str, Any]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, Path):
            os.symlink(text, path)
        else:
            path.write_text(textwrap.dedent(text))
    return root


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}


def _outside(tmp_path: Path, name: str, text: str) -> Path:
    out = tmp_path / "elsewhere"
    out.mkdir(exist_ok=True)
    (out / name).write_text(text.replace("SENT", SENTINEL))
    return out / name


def _cli(job: Path, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "preflight", "check", "--no-smoke", "--format",
                           "json", str(job / target)], capture_output=True, text=True,
                          timeout=300, cwd=job)


# --- python-fire: a component name the file binds again ---------------------------------------

FIRE = """
import fire
import torch
import transformer_engine.pytorch as te
def train(config_file, model_name, enable_fp8: bool = False):
    model = te.Linear(8, 8)
    with te.fp8_autocast(enabled=enable_fp8):
        model(torch.randn(8, 8)).sum().backward()
{extra}
if __name__ == "__main__":
    fire.Fire(train)
"""
HELPERS = "def train(config_file, model_name, enable_fp8=False):\n    pass\n"


def _fire(tmp_path: Path, extra: str, flags: str) -> Any:
    job = _job(tmp_path, {"train.py": FIRE.format(extra=extra), "helpers.py": HELPERS,
                          "run.sh": f"torchrun --nproc_per_node=8 train.py c.json m {flags}\n"})
    return _intent(job / "run.sh")["fp8"]


@pytest.mark.parametrize("extra, flags", [
    ("from helpers import train", "--enable_fp8 True"),     # a job module's train runs
    ("from somepkg import train", "--enable_fp8 True"),     # an installed one
    ("train = lambda *a, **k: None", "--enable_fp8 True"),
    ("def train(config_file, model_name, enable_fp8=True):\n    pass", ""),
    ("import functools\ntrain = functools.partial(train, enable_fp8=True)", ""),
    ("def rebind():\n    global train\n    train = print\nrebind()", "--enable_fp8 True"),
])
def test_fire_of_a_name_bound_again_is_unknown(tmp_path: Path, extra: str, flags: str) -> None:
    got = _fire(tmp_path, extra, flags)
    assert isinstance(got, Unknown), got


@pytest.mark.parametrize("extra, fp8", [
    ("from helpers import train as other", True),           # another name: train is the def
    ("def helper():\n    train = 1\n    return train", True),   # a local of another function
    ("", True),
])
def test_fire_of_the_files_own_def_is_still_bound(tmp_path: Path, extra: str, fp8: bool) -> None:
    assert _fire(tmp_path, extra, "--enable_fp8 True") is fp8


@pytest.mark.parametrize("value", ["'" + "(" * 150 + "0" + ")" * 150 + "'",
                                   "'" + "[" * 1000 + "]" * 1000 + "'", "1" * 5000,
                                   "'not False'", "'{[]: 1}'"])
def test_fire_hostile_values_are_bounded(tmp_path: Path, value: str) -> None:
    got = _fire(tmp_path, "", f"--enable_fp8 {value}")
    assert got is not False         # never read as "no FP8"; a string is truthy for Fire


# --- sed: an escaped delimiter that is a regex operator -----------------------------------------

@pytest.mark.parametrize("body, want", [
    ("C=$(echo axb | sed 's.a\\.b.Y.')", "Y"),      # `\.` with `.` as delimiter: any character
    ("C=$(echo a.b | sed 's.a\\.b.Y.')", "Y"),
    ("C=$(echo a.b | sed 's/a\\.b/Y/')", "Y"),      # another delimiter: a literal dot
    ("C=$(echo axb | sed 's/a\\.b/Y/')", "axb"),
])
def test_sed_escaped_delimiter_as_gnu_sed_reads_it(tmp_path: Path, body: str, want: str) -> None:
    script = _job(tmp_path, {}) / "x.sh"
    with enforced([str(script)]):
        got = collect_variables(body + "\n", script=str(script)).get("C")
    assert got == want
    if BASH is not None and shutil.which("sed"):
        script.write_text(f'{body}\nprintf "%s" "$C"\n')
        out = subprocess.run([BASH, "--norc", "--noprofile", str(script)], capture_output=True,
                             timeout=20, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
        assert out.stdout.decode() == want


@pytest.mark.parametrize("sed", ["s*a\\*b*Y*", "s[a\\[b[Y["])
def test_sed_escaped_operator_delimiter_is_unknown(tmp_path: Path, sed: str) -> None:
    script = _job(tmp_path, {}) / "x.sh"
    with enforced([str(script)]):
        got = collect_variables(f"C=$(echo aab | sed '{sed}')\n", script=str(script)).get("C")
    assert got is None or got.startswith(RUNTIME)


# --- shell functions and subshells --------------------------------------------------------------

F = "setup() {\n  export NVTE_FP8=1\n}\n"


def _env(script: str) -> dict[str, tuple[str | None, int]]:
    text = strip_comments(script)
    got = launch_env(text, text.index("torchrun"), collect_variables(text), True)
    return {n: (None if v.startswith(RUNTIME) else v, text.count("\n", 0, p) + 1)
            for n, v, p in got}


@pytest.mark.parametrize("script", [
    "setup() (\n  export NVTE_FP8=1\n)\nsetup\ntorchrun train.py\n",   # the body is a subshell
    "(\n  export NVTE_FP8=1\n)\ntorchrun train.py\n",                 # a subshell over lines
    "setup\n" + F + "torchrun train.py\n",                   # called before it is defined
    F + "setup &\ntorchrun train.py\n",                      # in the background
    "setup() {\n  local NVTE_FP8\n  export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
    "setup() {\n  declare NVTE_FP8=0; export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
])
def test_an_export_that_never_reaches_the_command(script: str) -> None:
    assert "NVTE_FP8" not in _env(script)


@pytest.mark.parametrize("script", [
    "setup() {\n  return 0\n  export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
    "setup() {\n  [ -n \"$X\" ] && return\n  export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
])
def test_an_export_after_a_return_is_unknown(script: str) -> None:
    assert _env(script).get("NVTE_FP8", ("x", 0))[0] is None


@pytest.mark.parametrize("script", [
    "(\n  export NVTE_FP8=1\n  torchrun train.py\n)\n",      # the command in the same subshell
    F + "setup && echo ok\ntorchrun train.py\n",
    F + "setup > log 2>&1\ntorchrun train.py\n",
    F + "time setup\ntorchrun train.py\n",
    "setup() {\n  local -g NVTE_X\n  export NVTE_FP8=1\n}\nsetup\ntorchrun train.py\n",
    "main() {\n  local NVTE_FP8\n  export NVTE_FP8=1\n  torchrun train.py\n}\nmain\n",
])
def test_an_export_that_reaches_the_command(script: str) -> None:
    assert _env(script)["NVTE_FP8"][0] == "1"


def test_a_hundred_subshells_and_exports_stay_bounded() -> None:
    script = "".join(f"(\n  export V{i}=1\n)\n" for i in range(5000)) + "torchrun train.py\n"
    assert _env(script) == {}


# --- GPT-NeoX: a key written twice ---------------------------------------------------------------

NEOX = ("pipe-parallel-size: 1\nmodel-parallel-size: 1\nnum-layers: 2\nhidden-size: 64\n"
        "num-attention-heads: 4\nseq-length: 128\nmax-position-embeddings: 128\n")


@pytest.mark.parametrize("text, fp8", [
    (NEOX + "te-fp8-mha: false\nte_fp8_mha: true\n", None),   # from_ymls raises ValueError
    (NEOX + "te-fp8-mha: true\nte_fp8_mha: false\n", None),
    (NEOX + "te_fp8_mha: false\nte-fp8-mha: true\n", True),   # not checked that way: it wins
    (NEOX + "te_fp8_mha: true\n", True),
    (NEOX + "# te_fp8_mha: true\n", False),
])
def test_gpt_neox_key_written_twice(tmp_path: Path, text: str, fp8: bool | None) -> None:
    job = _job(tmp_path, {"c.yml": text, "deepy.py": "#\n", "train.py": "#\n",
                          "run.sh": "python deepy.py train.py c.yml\n"})
    got = _intent(job / "run.sh")["fp8"]
    assert got is fp8 if fp8 is not None else isinstance(got, Unknown), got


@pytest.mark.parametrize("line", ["python deepy.py train.py c.yml",
                                  "python deepy.py train.py -d {out} neox.yml",
                                  "python deepy.py train.py {out}/neox"])
def test_gpt_neox_config_outside_the_job_is_not_read(tmp_path: Path, line: str) -> None:
    target = _outside(tmp_path, "neox.yml", NEOX + "te_fp8_mha: true\nname: SENT\n")
    job = _job(tmp_path / "job", {"deepy.py": "#\n", "train.py": "#\n",
                                  "c.yml": target, "run.sh": line.format(
                                      out=target.parent) + "\n"})
    assert isinstance(_intent(job / "run.sh")["fp8"], Unknown)


# --- objects and loops in functions nothing calls -----------------------------------------------

CASTED = """
import torch
import torch.nn as nn
class CastedLinear(nn.Linear):
    def __init__(self, a, b, use_fp8=False):
        super().__init__(a, b)
        self.use_fp8 = use_fp8
    def forward(self, x):
        if self.use_fp8 and self.training:
            return torch._scaled_mm(x, self.weight.T)
        return super().forward(x)
{extra}
model = nn.Sequential(CastedLinear(8, 8))
opt = torch.optim.AdamW(model.parameters())
model(torch.randn(8, 8)).sum().backward()
opt.step()
"""


@pytest.mark.parametrize("extra, fp8", [
    ("def unused():\n    return CastedLinear(8, 8, use_fp8=True)", False),
    ("def used():\n    return CastedLinear(8, 8, use_fp8=True)\nhead = used()", True),
])
def test_a_construction_nothing_runs_builds_nothing(tmp_path: Path, extra: str,
                                                    fp8: bool) -> None:
    job = _job(tmp_path, {"train.py": CASTED.format(extra=extra),
                          "run.sh": "torchrun train.py\n"})
    assert (_intent(job / "run.sh")["fp8"] is True) is fp8


def test_a_training_loop_in_a_function_nothing_calls_is_no_job(tmp_path: Path) -> None:
    from preflight.frameworks.pytorch_loop import training_step
    from preflight.reading.pysource import Module, parse

    body = ("import torch\nmodel = torch.nn.Linear(8, 8)\nopt = torch.optim.AdamW("
            "model.parameters())\ndef train():\n    loss = model(torch.randn(8, 8)).sum()\n"
            "    loss.backward()\n    opt.step()\n")
    path = tmp_path / "train.py"
    for tail, line in (("", None), ("train()\n", 6), ("if __name__ == '__main__':\n    train()\n",
                                                      6)):
        path.write_text(body + tail)
        assert training_step(Module(str(path), parse(str(path), body + tail)), "pytorch") == line


# --- what held: files outside the job, hostile data ---------------------------------------------

PRETRAINED = """
import torch
from transformers import AutoConfig
import transformer_engine.pytorch as te
config = AutoConfig.from_pretrained({where!r})
layers = [te.Linear(8, 8) for _ in range(config.num_hidden_layers)]
"""


@pytest.mark.parametrize("how", ["dir-link", "file-link", "absolute"])
def test_from_pretrained_outside_the_job_never_reaches_the_report(tmp_path: Path,
                                                                  how: str) -> None:
    target = _outside(tmp_path, "config.json", '{"num_hidden_layers": 7, "name": "SENT"}')
    files: dict[str, Any] = {"run.sh": "torchrun train.py\n"}
    where = "cfg"
    if how == "dir-link":
        files["cfg"] = target.parent
    elif how == "file-link":
        files["cfg/config.json"] = target
    else:
        where = str(target.parent)
    files["train.py"] = PRETRAINED.format(where=where)
    job = _job(tmp_path / "job", files)
    proc = _cli(job, "run.sh")
    assert "Traceback" not in proc.stderr and SENTINEL not in proc.stdout + proc.stderr


FROM_YAML = """
import yaml
from dataclasses import dataclass
from accelerate import Accelerator
{cls}
config = TrainingConfig.from_yaml({path!r})
acc = Accelerator(mixed_precision="fp8" if config.use_fp8 else "bf16")
"""
CLS = """
@dataclass
class TrainingConfig:
    use_fp8: bool = False
    name: str = "x"
    @classmethod
    def from_yaml(cls, path):
        with open(path) as f:
            d = yaml.safe_load(f)
        return cls(**d)
"""


@pytest.mark.parametrize("data", ["use_fp8: &a [*a]\n", "use_fp8: &a {x: *a}\n",
                                  "? [a]\n: 1\nuse_fp8: true\n", "1: 2\nuse_fp8: true\n",
                                  "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
                                      f"{chr(98 + i)}: &{chr(98 + i)} ["
                                      f"{','.join(['*' + chr(97 + i)] * 9)}]\n"
                                      for i in range(8)) + "use_fp8: true\n"])
def test_from_yaml_hostile_data_is_unknown(tmp_path: Path, data: str) -> None:
    job = _job(tmp_path, {"train.py": FROM_YAML.format(cls=CLS, path="c.yaml"), "c.yaml": data,
                          "run.sh": "accelerate launch train.py\n"})
    assert isinstance(_intent(job / "run.sh")["fp8"], Unknown)


@pytest.mark.parametrize("how", ["yaml-link", "absolute", "module-link"])
def test_from_yaml_outside_the_job_is_unknown(tmp_path: Path, how: str) -> None:
    target = _outside(tmp_path, "cfg.yaml", "use_fp8: true\nname: SENT\n")
    module = _outside(tmp_path, "conf.py", CLS.replace('"x"', '"SENT"'))
    files: dict[str, Any] = {"run.sh": "accelerate launch train.py\n"}
    cls, path = CLS, "c.yaml"
    if how == "yaml-link":
        files["c.yaml"] = target
    elif how == "absolute":
        path = str(target)
    else:
        files["conf.py"], files["c.yaml"] = module, "name: y\n"
        cls = "from conf import TrainingConfig"
    files["train.py"] = FROM_YAML.format(cls=cls, path=path)
    job = _job(tmp_path / "job", files)
    assert isinstance(_intent(job / "run.sh")["fp8"], Unknown)
    proc = _cli(job, "run.sh")
    assert "Traceback" not in proc.stderr and SENTINEL not in proc.stdout + proc.stderr


BUILT = """
import torch
import transformer_engine.pytorch as te
layers = [te.Linear(8, 8) for _ in range(4)]
prec = {expr}
for i, l in enumerate(layers):
    if prec[i] == "fp8":
        with te.fp8_autocast(enabled=True):
            l(torch.randn(8, 8)).sum().backward()
"""


@pytest.mark.parametrize("expr", [
    "sorted(set(range(10**12)))", "[min([])]", '["fp8"][10**30]', "[a for a, b in [1, 2]]",
    "sorted({1} - [1])", "list(range(0, 4, 0))", '["fp8"] * len(range(10**20))',
    '["fp8" for _ in range(10**9)]', "list(range(-10**30, 10**30))", "sorted([1, 'a'])",
])
def test_builtins_over_hostile_values_are_bounded(tmp_path: Path, expr: str) -> None:
    job = _job(tmp_path, {"train.py": BUILT.format(expr=expr), "run.sh": "torchrun train.py\n"})
    assert isinstance(_intent(job / "run.sh")["fp8"], Unknown)


LOOP = """
import torch
import transformer_engine.pytorch as te
model = te.Linear(8, 8)
for it in {rng}:
    use_now = it >= {warm}
    if use_now:
        with te.fp8_autocast(enabled=True):
            model(torch.randn(8, 8)).sum().backward()
"""


@pytest.mark.parametrize("rng, warm", [("range(0, 200, 0)", 100), ("range(2**(10**9))", 100),
                                       ("range(10**10**10)", 100), ("range(200.0)", 100),
                                       ("range(1 << 10**9)", 100), ("range(200)", "'a' * 10**10")])
def test_loop_steps_over_hostile_ranges_are_bounded(tmp_path: Path, rng: str, warm: Any) -> None:
    job = _job(tmp_path, {"train.py": LOOP.format(rng=rng, warm=warm),
                          "run.sh": "torchrun train.py\n"})
    assert isinstance(_intent(job / "run.sh")["fp8"], Unknown)


STEPS = """
import sys
import torch
import transformer_engine.pytorch as te
model = te.Linear(8, 8)
for it in range(200):
{cut}
    use_now = it >= 100
    if use_now:
        with te.fp8_autocast(enabled=True):
            model(torch.randn(8, 8)).sum().backward()
"""


@pytest.mark.parametrize("cut, fp8", [
    ("    if it == 10:\n        break", None),        # the loop stops before step 100
    ("    if it > 50:\n        continue", None),     # steps past 50 skip the test
    ("    if it == 5:\n        raise SystemExit", None),
    ("    if it >= 10:\n        sys.exit(0)", None),
    ("    for k in range(3):\n        if k == 1:\n            break", True),   # an inner loop's
    ("    try:\n        pass\n    except ValueError:\n        raise", True),   # on an error only
    ("    pass", True),
])
def test_a_loop_step_cut_short_is_no_witness(tmp_path: Path, cut: str, fp8: bool | None) -> None:
    job = _job(tmp_path, {"train.py": STEPS.format(cut=cut), "run.sh": "torchrun train.py\n"})
    got = _intent(job / "run.sh")["fp8"]
    assert got is fp8 if fp8 is not None else isinstance(got, Unknown), got
