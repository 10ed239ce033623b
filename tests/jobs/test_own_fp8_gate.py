"""The job's own FP8 followed through its gate (issue 22, holdout12 modded-nanogpt): FP8 is used
where the op is called under a condition that holds for this launch (the launch line's
environment, constants, ``self.x`` as constructions pass it), not where it is registered or
defined; an undecided gate is Unknown with its reason. Faithful reduction of
KellerJordan/modded-nanogpt @ f411b3d3 in tests/jobs/modded_nanogpt_job.py, then hostile
variants: gates always false, a shadowed ``os``, a gate set after the call, recursion, decoys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from tests.jobs.modded_nanogpt_job import LOSS_FUSED, LOSS_HEAD, TRAIN_GPT, write

CONVERT = "config.pytorch.own_fp8.convert"


def _read(path: Path) -> tuple[Any, dict[str, Any]]:
    read = read_paths([str(path)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return read, values


def test_fp8_launch_reaches_the_custom_op_through_the_model(tmp_path: Path) -> None:
    read, values = _read(write(tmp_path))
    assert values["intent.fp8"] is True
    how = read.facts["config.pytorch.own_fp8.how"]
    assert "GPT -> CastedLinearT -> mm_t_op calls torch._scaled_mm" in how
    assert "only in training" in how        # `self.training`: the mode a training step runs in
    line = TRAIN_GPT.splitlines().index("model = GPT(vocab_size=50304, model_dim=768).cuda()")
    assert read.provenance[CONVERT].endswith(f"train_gpt.py:{line + 1}")     # the model built


def test_disable_fp8_on_the_launch_line_turns_it_off(tmp_path: Path) -> None:
    # before: FP8 "yes" from `mm_t_op.register_autograd(...)` (registration, not use)
    read, values = _read(write(tmp_path, env="DISABLE_FP8=1 "))
    assert CONVERT not in read.facts
    assert values["intent.fp8"] is False


def test_the_fused_loss_runs_fp8_whatever_disable_fp8_says(tmp_path: Path) -> None:
    # f411b3d3's loss: FusedSoftcappedCrossEntropy.apply (triton_kernels.py) in training
    read, values = _read(write(tmp_path, LOSS_FUSED, env="DISABLE_FP8=1 "))
    assert values["intent.fp8"] is True
    how = read.facts["config.pytorch.own_fp8.how"]
    assert "FusedSoftcappedCrossEntropy calls torch._scaled_mm" in how
    assert "triton_kernels.py" in how and "only in training" in how


def test_exported_switch_is_read_too(tmp_path: Path) -> None:
    _, values = _read(write(tmp_path, env="export DISABLE_FP8=1\n"))
    assert values["intent.fp8"] is False


def test_a_switch_only_the_run_knows_is_unknown_with_its_reason(tmp_path: Path) -> None:
    read, values = _read(write(tmp_path, env='DISABLE_FP8="$1" '))
    assert isinstance(values["intent.fp8"], Unknown)
    assert "self.use_fp8" in str(read.facts[CONVERT]) or "DISABLE_FP8" in str(read.facts[CONVERT])


@pytest.mark.parametrize("gate", [
    "False",                                   # always false
    "0 and self.training",
    "self.use_fp8 and not self.use_fp8",
    "USE_FP8",                                 # a module constant set False
])
def test_gates_that_are_always_false(tmp_path: Path, gate: str) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD).replace(
        "if self.use_fp8 and self.training:", f"if {gate}:").replace(
        "class CastedLinearT", "USE_FP8 = False\n\n\nclass CastedLinearT")
    read, values = _read(write(tmp_path, train=train))
    assert CONVERT not in read.facts
    assert values["intent.fp8"] is False


def test_a_shadowed_os_leaves_the_gate_unknown(tmp_path: Path) -> None:
    # a class named os beside the import: os.environ.get is not the environment
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD).replace(
        "from torch import Tensor", "from torch import Tensor\n\n\nclass os:\n    environ = {}\n")
    read, values = _read(write(tmp_path, env="DISABLE_FP8=1 ", train=train))
    assert isinstance(values["intent.fp8"], Unknown)
    assert isinstance(read.facts[CONVERT], Unknown)


def test_a_gate_set_after_the_call_does_not_count(tmp_path: Path) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD).replace(
        "        use_fp8 = not os.environ.get(\"DISABLE_FP8\", False)\n",
        "        use_fp8 = False\n").replace(
        "w_s=1.6/448, grad_s=0.75/448)\n",
        "w_s=1.6/448, grad_s=0.75/448)\n        use_fp8 = True\n")
    read, values = _read(write(tmp_path, train=train))
    assert CONVERT not in read.facts
    assert values["intent.fp8"] is False


def test_recursion_through_a_gated_call_ends(tmp_path: Path) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD) + '''
def a(n):
    if os.environ.get("NEVER_SET") and n:
        return b(n)
    return a(n - 1)

def b(n):
    torch._scaled_mm(n, n)
    return a(n)

a(3)
'''
    read, values = _read(write(tmp_path, env="DISABLE_FP8=1 ", train=train))
    assert CONVERT not in read.facts        # NEVER_SET unset on the launch line: the default
    assert values["intent.fp8"] is False


@pytest.mark.parametrize("decoy", [
    "mm_t_op.register_kernel('cuda')(lambda *a: None)",         # registration
    "torch.library.register_fake('nanogpt::mm_t')(lambda *a: None)",
    "isinstance(model, CastedLinearT)",
    "ops = 'torch.ops.nanogpt.mm_t(x)'",                         # a string
    "print(mm_t_op)",                                           # named, not called
])
def test_decoys_are_no_use(tmp_path: Path, decoy: str) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD) + decoy + "\n"
    read, values = _read(write(tmp_path, env="DISABLE_FP8=1 ", train=train))
    assert CONVERT not in read.facts
    assert values["intent.fp8"] is False


@pytest.mark.parametrize("wrapper", [
    "fast = torch.compile(mm_t_op)\nfast(x, w, 1.0, 1.0, 1.0)",
    "fast = functools.partial(mm_t_op, x_s=1.0)\nfast(x, w)",
    "torch.ops.nanogpt.mm_t.default(x, w, 1.0, 1.0, 1.0)",
    "mm_t_op = torch.compile(mm_t_op)\nmm_t_op(x, w, 1.0, 1.0, 1.0)",
])
def test_wrapped_and_registered_names_are_followed(tmp_path: Path, wrapper: str) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD) + "import functools\n" + wrapper + "\n"
    read, values = _read(write(tmp_path, env="DISABLE_FP8=1 ", train=train))
    assert read.facts[CONVERT] is True
    assert values["intent.fp8"] is True


def test_an_op_rebound_to_something_else_is_not_followed(tmp_path: Path) -> None:
    train = TRAIN_GPT.replace("LOSS", LOSS_HEAD) + "mm_t_op = print\nmm_t_op(1)\n"
    read, _ = _read(write(tmp_path, env="DISABLE_FP8=1 ", train=train))
    assert CONVERT not in read.facts


HEAD = ("import argparse\nimport torch\np = argparse.ArgumentParser()\n"
        "p.add_argument('--fp8', action='store_true')\nargs = p.parse_args()\n"
        "model = torch.compile(None)\n")


def _one_file(tmp_path: Path, body: str, flag: str = "--fp8") -> tuple[Any, dict[str, Any]]:
    (tmp_path / "train.py").write_text(HEAD + body)
    (tmp_path / "go.sh").write_text(f"python train.py {flag}\n")
    return _read(tmp_path / "go.sh")


@pytest.mark.parametrize("body", [
    "fp8_mm = torch._scaled_mm\ndef conv(m):\n    return fp8_mm(m, m)\n",
    "from torch import _scaled_mm as mm\ndef conv(m):\n    return mm(m, m)\n",
    "def conv(m):\n    return getattr(torch, '_scaled_mm')(m, m)\n",
    "".join(f"def f{i}(m):\n    return f{i + 1}(m)\n" for i in range(12)) +
    "def f12(m):\n    return torch._scaled_mm(m, m)\nconv = f0\n",
])
def test_the_op_through_an_alias_getattr_or_a_long_chain(tmp_path: Path, body: str) -> None:
    # redteam8 (a3.py): each was FP8 "no"
    _, values = _one_file(tmp_path, body + "if args.fp8:\n    conv(model)\n")
    assert values["intent.fp8"] is True


@pytest.mark.parametrize("body", [
    "def _scaled_mm(a, b):\n    return a @ b\ndef conv(m):\n    return _scaled_mm(m, m)\n",
    "class torch:\n    @staticmethod\n    def _scaled_mm(a, b):\n        return a @ b\n"
    "def conv(m):\n    return torch._scaled_mm(m, m)\n",
])
def test_a_scaled_mm_that_is_not_torchs_is_no_fp8(tmp_path: Path, body: str) -> None:
    read, values = _one_file(tmp_path, body + "if args.fp8:\n    conv(model)\n")
    assert CONVERT not in read.facts
    assert values["intent.fp8"] is False


def test_nothing_after_a_top_level_exit_runs(tmp_path: Path) -> None:
    body = "import sys\ndef conv(m):\n    return torch._scaled_mm(m, m)\nsys.exit(0)\nconv(model)\n"
    read, values = _one_file(tmp_path, body, flag="")
    assert CONVERT not in read.facts and values["intent.fp8"] is False


def test_past_the_node_bound_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.reading import pyownfp8
    monkeypatch.setattr(pyownfp8, "MAX_NODES", 60)
    body = ("def big(m):\n" + "    x = m + 1\n" * 30 + "    return m\n"
            "def conv(m):\n    return torch._scaled_mm(m, m)\n")
    read, values = _one_file(tmp_path, body + "if args.fp8:\n    conv(model)\n")
    assert isinstance(read.facts[CONVERT], Unknown)
    assert isinstance(values["intent.fp8"], Unknown)
