"""A plain PyTorch loop that wraps its model itself: ``DistributedDataParallel`` (often imported
as ``DDP``), FSDP1's ``FullyShardedDataParallel``, FSDP2's ``fully_shard`` give
``intent.distributed`` (holdout7: pytorch/ao issue 2586's repro, float8 + DDP + compile, left
FP8D-TAO-0011 undetermined)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths


def _distributed(folder: Path, body: str) -> object:
    (folder / "train.py").write_text(textwrap.dedent("""
        import torch
        from torchao.float8 import convert_to_float8_training
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.distributed.fsdp import FullyShardedDataParallel
        from torch.distributed.fsdp import fully_shard
        convert_to_float8_training(model)
    """) + textwrap.dedent(body))
    read = read_paths([str(folder / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.distributed"]


@pytest.mark.parametrize("body, want", [
    ("model = DDP(model, device_ids=[rank])\n", "ddp"),
    ("model = torch.nn.parallel.DistributedDataParallel(model)\n", "ddp"),
    ("model = FullyShardedDataParallel(model)\n", "fsdp1"),
    ("fully_shard(model)\n", "fsdp2"),
])
def test_the_wrapper_the_script_calls_is_the_distribution(tmp_path: Path, body: str,
                                                          want: str) -> None:
    assert _distributed(tmp_path, body) == want


def test_two_different_wrappers_leave_it_unknown(tmp_path: Path) -> None:
    got = _distributed(tmp_path, "model = DDP(model)\nfully_shard(model)\n")
    assert isinstance(got, Unknown) and "ddp and fsdp2" in got.reason


def test_a_wrapper_under_an_undecided_condition_decides_nothing(tmp_path: Path) -> None:
    got = _distributed(tmp_path, "import os\nif os.environ['WORLD_SIZE'] != '1':\n"
                                 "    model = DDP(model)\n")
    assert isinstance(got, Unknown)

