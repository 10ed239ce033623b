"""Which objects each ``accelerator.prepare()`` call takes (``config.accelerate.accelerator.
prepare_apart``) and FP8D-ACC-0095: accelerate's Transformer Engine path needs the model and
its optimizer in one call (``_prepare_te``, accelerate v0.34.0 - v1.14.0; holdout7: kohya
sd-scripts issue 2176, whose FLUX LoRA trainer prepares the model alone)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight.api import CheckOptions, run_check
from preflight.facts import Unknown
from preflight.jobs.read import read_paths

FACT = "config.accelerate.accelerator.prepare_apart"
HEAD = """
import torch
from torch.utils.data import DataLoader
from accelerate import Accelerator
from transformers import AutoModelForCausalLM
accelerator = Accelerator(mixed_precision="fp8")
model = AutoModelForCausalLM.from_pretrained("m")
optimizer = torch.optim.AdamW(model.parameters())
train_dl = DataLoader([])
"""
SNAPSHOT = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" / "_env" / \
    "bare-linux.json"


def _read(folder: Path, body: str) -> tuple[object, str | None]:
    (folder / "train.py").write_text(HEAD + textwrap.dedent(body))
    read = read_paths([str(folder / "train.py")])
    where = read.provenance.get(FACT)
    return read.facts.get(FACT, "absent"), str(where) if where is not None else None


def test_model_and_optimizer_together_is_false(tmp_path: Path) -> None:
    value, where = _read(tmp_path, """
        model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
        train_dl = accelerator.prepare(train_dl)
    """)
    assert value is False
    assert where is not None and where.endswith("train.py:11")


@pytest.mark.parametrize("body, want, line", [
    ("model = accelerator.prepare(model)\noptimizer = accelerator.prepare(optimizer)\n",
     "model", 10),
    ("model, dl = accelerator.prepare(model, train_dl)\n", "model", 10),
    ("dl = accelerator.prepare(train_dl)\nopt, dl = accelerator.prepare(optimizer, train_dl)\n",
     "optimizer", 11),
    ("sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, 10)\n"
     "model, sched = accelerator.prepare(model, sched)\n", "model", 11),
    ("ema = AutoModelForCausalLM.from_pretrained('m')\n"
     "model, ema, optimizer = accelerator.prepare(model, ema, optimizer)\n", "several", 11),
])
def test_a_call_with_half_of_the_pair_is_named_at_its_line(tmp_path: Path, body: str, want: str,
                                                           line: int) -> None:
    value, where = _read(tmp_path, body)
    assert value == want
    assert where is not None and where.endswith(f"train.py:{line}")


def test_a_parameter_named_accelerator_counts(tmp_path: Path) -> None:
    # sd-scripts' NetworkTrainer.prepare_unet_with_accelerator(self, args, accelerator, unet)
    value, _ = _read(tmp_path, """
        def prepare_unet(args, accelerator, unet):
            return accelerator.prepare(unet)
        unet = prepare_unet(None, accelerator, model)
    """)
    assert value == "model"


@pytest.mark.parametrize("body", [
    "thing = accelerator.prepare(make_thing())\n",                  # an object it cannot tell
    "objs = accelerator.prepare(*objects)\n",
    "import os\nif os.environ.get('X'):\n    model = accelerator.prepare(model)\n",
])
def test_what_the_text_does_not_show_is_unknown(tmp_path: Path, body: str) -> None:
    value, _ = _read(tmp_path, body)
    assert isinstance(value, Unknown)


def test_other_prepare_methods_and_no_call_state_nothing(tmp_path: Path) -> None:
    value, _ = _read(tmp_path, "tokenizer = object()\nx = tokenizer.prepare(model)\n")
    assert value == "absent"


def _launch(folder: Path, line: str) -> object:
    (folder / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    return read_paths([str(folder / "run.sh")]).facts.get(FACT, "absent")


@pytest.mark.parametrize("line, want", [
    ("accelerate launch --mixed_precision fp8 flux_train_network.py --network_module "
     "networks.lora_flux --network_dim 16", "model"),
    ("accelerate launch --mixed_precision fp8 sd-scripts/sdxl_train_network.py "
     "--network_module=networks.lora", "model"),
    ("accelerate launch --mixed_precision fp8 flux_train_network.py --network_module x "
     "--deepspeed", Unknown),
    # a job's own script of the same name, without the trainer's options: not known
    ("accelerate launch --mixed_precision fp8 train_network.py --lr 1e-4", Unknown),
    ("accelerate launch --mixed_precision fp8 other.py", Unknown),
])
def test_a_script_not_in_the_job(tmp_path: Path, line: str, want: object) -> None:
    value = _launch(tmp_path, line)
    if want is Unknown:
        assert isinstance(value, Unknown)
    else:
        assert value == want


def _fired(folder: Path, paths: list[str], **assume: str) -> tuple[set[str], set[str]]:
    report = run_check(CheckOptions(
        paths=tuple(str(folder / p) for p in paths), snapshot=str(SNAPSHOT), smoke=False,
        assume={"gpu": "H100", "gpu.count": "1", "pkg.torch": "2.7.1", **assume}))
    return ({f.rule_id for f in report.findings},
            {u.rule_id for u in report.undetermined})


def test_the_rule_fires_on_a_split_prepare_and_not_on_a_joint_one(tmp_path: Path) -> None:
    versions = {"pkg.accelerate": "1.10.0", "pkg.transformer-engine": "2.5.0"}
    split, joint = tmp_path / "split", tmp_path / "joint"
    split.mkdir()
    joint.mkdir()
    _read(split, "model = accelerator.prepare(model)\noptimizer = accelerator.prepare(optimizer)\n")
    _read(joint, "model, optimizer = accelerator.prepare(model, optimizer)\n")
    fired, _ = _fired(split, ["train.py"], **versions)
    assert "FP8D-ACC-0095" in fired
    fired, undetermined = _fired(joint, ["train.py"], **versions)
    assert "FP8D-ACC-0095" not in fired | undetermined
    # torchao installed: accelerate 1.10 picks it before TE, no TE prepare at all
    fired, _ = _fired(split, ["train.py"], **versions, **{"pkg.torchao": "0.12.0"})
    assert "FP8D-ACC-0095" not in fired


def test_the_rule_is_undetermined_for_a_script_the_job_lacks(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("accelerate launch --mixed_precision fp8 train.py\n")
    fired, undetermined = _fired(tmp_path, ["run.sh"], **{"pkg.accelerate": "1.10.0",
                                                          "pkg.transformer-engine": "2.5.0"})
    assert "FP8D-ACC-0095" in undetermined and "FP8D-ACC-0095" not in fired


def test_under_fsdp2_the_fsdp2_rule_speaks_not_the_te_one(tmp_path: Path) -> None:
    # accelerate checks FSDP2's pairing before _prepare_te (v1.10.0 l.1506-1521 vs l.1543):
    # FP8D-ACC-0096 fires, FP8D-ACC-0095 stays quiet so the job gets one finding for one mistake
    _read(tmp_path, "model = accelerator.prepare(model)\noptimizer = accelerator.prepare(optimizer)\n")
    (tmp_path / "fsdp2.yaml").write_text(
        "distributed_type: FSDP\nmixed_precision: fp8\nnum_processes: 8\n"
        "fp8_config:\n  backend: TE\nfsdp_config:\n  fsdp_version: 2\n")
    fired, undetermined = _fired(tmp_path, ["fsdp2.yaml", "train.py"], **{
        "pkg.accelerate": "1.10.0", "pkg.transformer-engine": "2.5.0", "gpu.count": "8"})
    assert "FP8D-ACC-0096" in fired
    assert "FP8D-ACC-0095" not in fired | undetermined
