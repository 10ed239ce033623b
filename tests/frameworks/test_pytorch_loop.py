"""A plain PyTorch training loop with no FP8 API is a job read as "no FP8", not "no job"
(frameworks/pytorch_loop.py; holdout18 Scicom small-ablation bf16.py under `torchrun -m bf16`),
while a script that trains nothing (data preparation) stays unread and a loop another
framework's reader takes stays that framework's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.intent import derive_intent
from preflight.jobs.read import read_paths

LOOP = """
import torch
from torch.distributed.fsdp import fully_shard

def main():
    model = torch.nn.Linear(16, 16).to(torch.bfloat16)
    fully_shard(model)
    optim = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(100):
        loss = model(torch.randn(4, 16)).sum()
        {backward}
        {step}
        optim.zero_grad()

if __name__ == "__main__":
    main()
"""


def _job(tmp: Path, script: str, launch: str = "torchrun --nproc_per_node 8 -m train") -> Path:
    (tmp / "train.py").write_text(textwrap.dedent(script))
    (tmp / "run.sh").write_text(f"#!/bin/bash\n{launch}\n")
    return tmp / "run.sh"


def _fp8(path: Path) -> object:
    return derive_intent(read_paths([str(path)]).facts)[0]["intent.fp8"]


def _line(text: str, what: str) -> int:
    return next(n for n, line in enumerate(textwrap.dedent(text).splitlines(), 1) if what in line)


@pytest.mark.parametrize("launch", ["torchrun --nproc_per_node 8 -m train",
                                    "python train.py", "torchrun --nproc_per_node 2 train.py"])
def test_a_plain_training_loop_is_a_job_without_fp8(tmp_path: Path, launch: str) -> None:
    script = LOOP.format(backward="loss.backward()", step="optim.step()")
    run = _job(tmp_path, script, launch)
    read = read_paths([str(run)])
    assert read.facts["config.kinds"] == ["pytorch"]
    assert read.provenance["config.pytorch.training_loop"].endswith(
        f"train.py:{_line(script, 'loss.backward()')}")
    assert _fp8(run) is False


@pytest.mark.parametrize("backward,step", [
    ("pass", "optim.step()"),                  # no backward pass: no training
    ("loss.backward()", "pass"),               # a backward with no optimizer step (a probe)
    ("pass", "pass"),
])
def test_a_script_that_does_not_train_stays_no_job(tmp_path: Path, backward: str,
                                                   step: str) -> None:
    run = _job(tmp_path, LOOP.format(backward=backward, step=step))
    read = read_paths([str(run)])
    assert "config.pytorch.training_loop" not in read.facts
    assert "pytorch" not in (read.facts.get("config.kinds") or [])


def test_a_data_prep_script_stays_no_job(tmp_path: Path) -> None:
    run = _job(tmp_path, """
        import torch
        from datasets import load_dataset
        ds = load_dataset("json", data_files="x.jsonl")
        tokens = [torch.tensor(t) for t in ds["input_ids"]]
        torch.save(tokens, "tokens.pt")
        """, "python train.py")
    assert "pytorch" not in (read_paths([str(run)]).facts.get("config.kinds") or [])


def test_an_accelerate_loop_stays_accelerate(tmp_path: Path) -> None:
    run = _job(tmp_path, """
        import torch
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="bf16")
        model = torch.nn.Linear(16, 16)
        optim = torch.optim.AdamW(model.parameters())
        model, optim = accelerator.prepare(model, optim)
        for step in range(10):
            loss = model(torch.randn(4, 16)).sum()
            accelerator.backward(loss)
            optim.step()
        """, "accelerate launch train.py")
    read = read_paths([str(run)])
    assert "pytorch" not in read.facts["config.kinds"]
    assert "config.pytorch.training_loop" not in read.facts


def test_a_te_loop_is_still_read_for_its_fp8(tmp_path: Path) -> None:
    run = _job(tmp_path, LOOP.format(backward="loss.backward()", step="optim.step()").replace(
        "import torch\n", "import torch\nimport transformer_engine.pytorch as te\n").replace(
        "        loss = model(", "        with te.fp8_autocast(enabled=True):\n"
        "            pass\n        loss = model("))
    assert _fp8(run) is True
    assert "config.pytorch.training_loop" not in read_paths([str(run)]).facts


def test_hostile_scripts_give_no_traceback(tmp_path: Path) -> None:
    # a backward in a never-ending nest, a huge step chain: bounded, never an error
    body = "x" + ".step()" * 2000 + "\nloss.backward()\n"
    run = _job(tmp_path, "import torch\n" + body, "python train.py")
    read = read_paths([str(run)])
    fp8 = read.facts.get("config.pytorch.training_loop")
    assert fp8 in (None, True) or isinstance(fp8, Unknown)


# pyfix6: the backward of a call chain, a file another framework's word matches but whose
# reader reads nothing, and FP8 calls only in branches that do not run (holdout19
# fivezeroes/bdh @ 87eadd9d, trainer.py `class Trainer` ... `self.scaler.scale(loss).backward()`).

@pytest.mark.parametrize("backward,step", [
    ("scaler.scale(loss).backward()", "scaler.step(optim)"),     # torch.amp.GradScaler
    ("(loss / 4).backward()", "optim.step()"),                  # gradient accumulation
    ("model(torch.randn(4, 16)).sum().backward()", "optim.step()"),
    ("losses[0].backward()", "optim.step()"),
])
def test_a_backward_on_a_call_chain_is_a_loop(tmp_path: Path, backward: str, step: str) -> None:
    script = LOOP.format(backward=backward, step=step).replace(
        "    for step", "    scaler = torch.amp.GradScaler('cuda')\n    losses = []\n    for step")
    run = _job(tmp_path, script, "python train.py")
    read = read_paths([str(run)])
    assert read.facts["config.kinds"] == ["pytorch"]
    assert read.provenance["config.pytorch.training_loop"].endswith(
        f"train.py:{_line(script, backward)}")
    assert _fp8(run) is False


@pytest.mark.parametrize("backward", ["self.backward()", "super().backward(loss)", "cls.backward()"])
def test_a_method_named_backward_is_no_backward_pass(tmp_path: Path, backward: str) -> None:
    run = _job(tmp_path, f"""
        import torch

        class Runner:
            def backward(self, loss=None):
                return loss

            def go(self):
                for step in range(10):
                    {backward}
                    self.optim.step()

        Runner().go()
        """, "python train.py")
    assert "config.pytorch.training_loop" not in read_paths([str(run)]).facts


CLASS_LOOP = """
import torch
{imports}
USE_FP8 = {fp8}

class Trainer:
    def __init__(self, model, optim, scaler, use_fp8):
        self.model, self.optim, self.scaler, self.use_fp8 = model, optim, scaler, use_fp8

    def train_step(self, x):
        if USE_FP8:
            with te.fp8_autocast(enabled=True):
                loss = self.model(x).sum()
        else:
            loss = self.model(x).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optim)

model = torch.nn.Linear(16, 16)
trainer = Trainer(model, torch.optim.AdamW(model.parameters()), torch.amp.GradScaler(), USE_FP8)
for _ in range(10):
    trainer.train_step(torch.randn(4, 16))
"""


def test_a_class_named_trainer_is_a_loop_when_lightning_reads_nothing(tmp_path: Path) -> None:
    script = CLASS_LOOP.format(imports="te = None", fp8="False")
    run = _job(tmp_path, script, "python train.py")
    read = read_paths([str(run)])
    assert read.facts["config.kinds"] == ["pytorch"]
    assert read.provenance["config.pytorch.training_loop"].endswith(
        f"train.py:{_line(script, '.backward()')}")


@pytest.mark.parametrize("fp8,expected", [("False", False), ("True", True)])
def test_te_calls_only_in_a_branch_that_does_not_run_leave_a_loop(tmp_path: Path, fp8: str,
                                                                    expected: bool) -> None:
    script = CLASS_LOOP.format(imports="import transformer_engine.pytorch as te", fp8=fp8)
    run = _job(tmp_path, script, "python train.py")
    read = read_paths([str(run)])
    assert read.facts["config.kinds"] == ["pytorch"]
    assert _fp8(run) is expected
    assert ("config.pytorch.training_loop" in read.facts) is (not expected)


def test_a_lightning_trainer_stays_lightning(tmp_path: Path) -> None:
    run = _job(tmp_path, """
        import torch
        import lightning as L

        class Model(L.LightningModule):
            def training_step(self, batch, i):
                loss = self.layer(batch).sum()
                self.manual_backward(loss)
                self.optimizers().step()
                return loss

        L.Trainer(precision="bf16-mixed").fit(Model())
        """, "python train.py")
    read = read_paths([str(run)])
    assert "lightning" in read.facts["config.kinds"]
    assert "config.pytorch.training_loop" not in read.facts
