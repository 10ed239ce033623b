"""redfix12 (session 39): redteam12's open defects, each as a class. Every case in the first
part of each block failed before its fix; the rest pin the neighbours that must not change.

- GPT-NeoX: a key two config files set (from_ymls refuses it: ValueError), a top-level key that
  is not a string (from_ymls stops on ``conf_key.replace``): FP8 was a confident "no"/"yes";
- shell: ``unset -f setup`` before the call, a compound command (``{ ...; }``, ``while``,
  ``if``) that is a pipeline part or runs in the background, an unclosed function body: the
  export reached the launch command;
- an Unknown's reason quoted a 10,000-character launch value whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import MAX_QUOTED, Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.launchenv import launch_env
from preflight.reading.shellvars import RUNTIME, collect_variables, strip_comments


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _read(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}, read


# --- GPT-NeoX: what from_ymls refuses -----------------------------------------------------------

NEOX = "pipe-parallel-size: 1\nmodel-parallel-size: 1\nnum-layers: 2\nhidden-size: 64\n"


@pytest.mark.parametrize("a, b", [
    ("te_fp8_mha: true\n", "te_fp8_mha: false\n"),
    ("te_fp8_mha: false\n", "te_fp8_mha: true\n"),
    ("te-fp8-mha: false\n", "te_fp8_mha: false\n"),      # b's key as written is a's, read
    ("precision: bfloat16\n", "precision: fp16\n"),      # any key: the whole load stops
])
def test_gpt_neox_a_key_two_files_set_is_unknown(tmp_path: Path, a: str, b: str) -> None:
    job = _job(tmp_path, {"a.yml": NEOX + a, "sub/a.yml" if "precision" in a else "b.yml": b,
                          "deepy.py": "#\n", "train.py": "#\n",
                          "run.sh": "python deepy.py train.py a.yml "
                                    f"{'sub/a.yml' if 'precision' in a else 'b.yml'}\n"})
    assert isinstance(_read(job / "run.sh")[0]["fp8"], Unknown)


@pytest.mark.parametrize("text", [NEOX + "1: 2\nte_fp8_mha: false\n",
                                  NEOX + "te_fp8_mha: false\n? [a, b]\n: 3\n",
                                  NEOX + "te_fp8_mha: false\ntrue: 1\n"])
def test_gpt_neox_a_key_that_is_not_a_string_is_unknown_with_a_finding(
        tmp_path: Path, text: str) -> None:
    job = _job(tmp_path, {"c.yml": text, "deepy.py": "#\n", "train.py": "#\n",
                          "run.sh": "python deepy.py train.py c.yml\n"})
    intent, read = _read(job / "run.sh")
    assert isinstance(intent["fp8"], Unknown)
    assert any(p.path.endswith("c.yml") for p in read.problems)


@pytest.mark.parametrize("a, b, fp8", [
    ("te_fp8_mha: true\n", "te_layernorm_mlp: true\n", True),
    ("te_fp8_mha: false\n", "te_layernorm_mlp: true\n", False),
    ("", "te_fp8_mha: true\n", True),
])
def test_gpt_neox_files_with_distinct_keys_still_decide(tmp_path: Path, a: str, b: str,
                                                       fp8: bool) -> None:
    job = _job(tmp_path, {"a.yml": NEOX + a, "b.yml": b, "deepy.py": "#\n", "train.py": "#\n",
                          "run.sh": "python deepy.py train.py a.yml b.yml\n"})
    assert _read(job / "run.sh")[0]["fp8"] is fp8


# --- shell: exports that never reach the command ------------------------------------------------

F = "setup() {\n  export NVTE_FP8=1\n}\n"


def _env(script: str) -> dict[str, str | None]:
    text = strip_comments(script)
    got = launch_env(text, text.index("torchrun"), collect_variables(text), True)
    return {n: (None if v.startswith(RUNTIME) else v) for n, v, _ in got}


@pytest.mark.parametrize("script", [
    F + "unset -f setup\nsetup\ntorchrun train.py\n",
    F + "unset setup\nsetup\ntorchrun train.py\n",
    "setup() {\n  export NVTE_FP8=1\nsetup\ntorchrun train.py\n",            # never closed
    "if true; then\n  export NVTE_FP8=1\ntorchrun train.py\n",
])
def test_an_export_bash_may_never_run_is_unknown(script: str) -> None:
    assert _env(script).get("NVTE_FP8", None) is None


@pytest.mark.parametrize("script", [
    F + "{ setup; } | tee log\ntorchrun train.py\n",
    F + "{\n  setup\n} 2>&1 | tee log\ntorchrun train.py\n",
    F + "cat hosts | while read h; do setup; done\ntorchrun train.py\n",
    F + "if true; then setup; fi &\ntorchrun train.py\n",
    F + "{ { setup; }; } |& tee log\ntorchrun train.py\n",
])
def test_a_compound_in_a_pipeline_exports_nothing(script: str) -> None:
    assert "NVTE_FP8" not in _env(script)


@pytest.mark.parametrize("script", [
    F + "{ setup; } > log\ntorchrun train.py\n",
    F + "{ setup; } || true\ntorchrun train.py\n",
    F + "if true; then setup; fi\ntorchrun train.py\n",
    F + "setup\necho done | tee x\ntorchrun train.py\n",
    F + "unset X\nsetup\ntorchrun train.py\n",
    F + "main() {\n  setup\n  torchrun train.py\n}\nmain 2>&1 | tee log\n",
])
def test_a_call_in_the_shell_still_exports(script: str) -> None:
    assert _env(script)["NVTE_FP8"] == "1"


# --- reasons quote at most MAX_QUOTED characters of a value -------------------------------------

def test_an_unknown_reason_caps_a_long_value() -> None:
    got = Unknown("mixed_precision " + repr("Q" * 10000) + " is not one of no | fp16")
    assert len(got.reason) < 2 * MAX_QUOTED and got.reason.endswith("no | fp16")
    assert Unknown("short 'x' reason").reason == "short 'x' reason"


def test_a_long_launch_value_is_not_repeated_in_the_report(tmp_path: Path) -> None:
    value = "Q" * 10000
    job = _job(tmp_path, {
        "train.py": "from accelerate import Accelerator\nacc = Accelerator()\n",
        "run.sh": f"accelerate launch --mixed_precision {value} train.py\n"})
    out = subprocess.run([sys.executable, "-m", "preflight", "check", "--no-smoke", "--format",
                          "json", str(job / "run.sh")], capture_output=True, text=True,
                         timeout=300, check=False)
    report = json.loads(out.stdout)
    reasons = json.dumps(report.get("undetermined", [])) + json.dumps(
        {k: v for k, v in report.get("facts", {}).items() if k.startswith("intent.")})
    assert value not in reasons and "Q" * (MAX_QUOTED + 1) not in reasons


# --- Python: names bound again, code after a raise, tests on __name__ ---------------------------

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
model = nn.Sequential(CastedLinear(8, 8, use_fp8=True))
opt = torch.optim.AdamW(model.parameters())
model(torch.randn(8, 8)).sum().backward()
opt.step()
"""


@pytest.mark.parametrize("extra", ["from other import CastedLinear",
                                   "from other import Plain as CastedLinear",
                                   "import other as CastedLinear",
                                   "CastedLinear = None"])
def test_a_class_bound_again_after_its_definition_is_not_read(tmp_path: Path, extra: str) -> None:
    job = _job(tmp_path, {"train.py": CASTED.format(extra=extra), "run.sh": "torchrun train.py\n"})
    assert _read(job / "run.sh")[0]["fp8"] is not True


def test_the_class_itself_still_decides(tmp_path: Path) -> None:
    job = _job(tmp_path, {"train.py": CASTED.format(extra="x = 1"),
                          "run.sh": "torchrun train.py\n"})
    assert _read(job / "run.sh")[0]["fp8"] is True


def test_drop_shadowed_keeps_a_class_that_replaces_an_earlier_import() -> None:
    import ast

    from preflight.reading.pyrebound import drop_shadowed

    tree = ast.parse("try:\n    from te import X\nexcept ImportError:\n    class X:\n"
                     "        pass\nclass Y:\n    pass\nfrom o import Y\n")
    defs: dict[str, Any] = {"X": 1, "Y": 2}
    drop_shadowed(tree, defs)
    assert defs == {"X": 1}


TE = """
import torch
import transformer_engine.pytorch as te
def want_fp8():
{body}
    return True
model = te.Linear(64, 64)
opt = torch.optim.AdamW(model.parameters())
with te.fp8_autocast(enabled=want_fp8()):
    y = model(torch.randn(8, 64))
y.sum().backward()
opt.step()
"""


@pytest.mark.parametrize("body, fp8", [
    ("    raise RuntimeError('FP8 is off in this fork')", None),
    ("    return False", False),
    ("    pass", True),
])
def test_a_return_after_a_raise_or_return_never_runs(tmp_path: Path, body: str,
                                                     fp8: bool | None) -> None:
    job = _job(tmp_path, {"train.py": TE.format(body=body), "run.sh": "torchrun train.py\n"})
    got = _read(job / "run.sh")[0]["fp8"]
    assert got is fp8 if fp8 is not None else got is not True


MAIN = """
import torch
import transformer_engine.pytorch as te
if {test}:
    model = te.Linear(64, 64)
    opt = torch.optim.AdamW(model.parameters())
    with te.fp8_autocast(enabled=True):
        loss = model(torch.randn(8, 64)).sum()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize("test, runs", [
    ("__name__ == '__notmain__'", False), ("__name__ != '__main__'", False),
    ("'__main__' != __name__", False), ("__name__ == '__main__'", True),
    ("'__main__' == __name__", True),
])
def test_code_under_a_name_test_runs_only_in_the_main_path(tmp_path: Path, test: str,
                                                           runs: bool) -> None:
    import ast

    from preflight.frameworks.pytorch_loop import training_step
    from preflight.reading.pymain import main_test
    from preflight.reading.pysource import Module, parse
    assert main_test(ast.parse(test, mode="eval").body) is runs
    text = MAIN.format(test=test)
    (tmp_path / "train.py").write_text(text)
    got = training_step(Module(str(tmp_path / "train.py"), parse(str(tmp_path / "train.py"),
                                                                  text)), "pytorch")
    assert (got is not None) is runs
