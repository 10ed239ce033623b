"""FSDP2 float8 all-gather over shards of unequal size (pytorch/ao issue 3982, FP8D-TAO-0013):
the world size from the ``torchrun`` line, ``fully_shard`` in the script, the float8 config's
``enable_fsdp_float8_all_gather``, torchtitan's shard degree, and ``intent.fsdp_shards``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from preflight.reading.launch import torchrun_size

SCRIPT = """
    import torch.nn as nn
    from torch.distributed._composable.fsdp import fully_shard
    from torchao.float8 import convert_to_float8_training
    from torchao.float8.config import Float8LinearConfig
    model = nn.Sequential(nn.Linear(1024, 4096), nn.Linear(4096, 1024))
    convert_to_float8_training(model, config=Float8LinearConfig(enable_fsdp_float8_all_gather=True))
    fully_shard(model{mesh})
"""


def _job(folder: Path, launch: str, mesh: str = "") -> tuple[dict, dict]:
    (folder / "repro.py").write_text(textwrap.dedent(SCRIPT.format(mesh=mesh)))
    (folder / "run.sh").write_text(f"#!/bin/bash\n{launch}\n")
    read = read_paths([str(folder / "run.sh"), str(folder / "repro.py")])
    values, prov = intent.derive(Facts(read.facts, read.provenance))
    return read.facts, {**values, "_prov": prov}


def test_the_issue_s_repro_on_three_ranks(tmp_path: Path) -> None:
    facts, values = _job(tmp_path, "torchrun --nproc_per_node=3 repro.py")
    assert facts["config.pytorch.launch.nproc_per_node"] == 3
    assert facts["config.pytorch.torchao.enable_fsdp_float8_all_gather"] is True
    # a field that leaves the scaling alone keeps torchao's default recipe
    assert values["intent.recipe"] == "tensorwise"
    assert values["intent.distributed"] == "fsdp2" and values["intent.num_gpus"] == 3
    assert values["intent.fsdp_shard_size"] == 3
    assert values["intent.fsdp_shards"] == "likely_uneven"
    assert values["_prov"]["intent.fsdp_shard_size"].endswith("run.sh:2")


@pytest.mark.parametrize("launch, size, shards", [
    ("torchrun --nnodes 2 --nproc-per-node 4 repro.py", 8, "even"),
    ("python -m torch.distributed.run --nproc_per_node 6 repro.py", 6, "likely_uneven"),
    ("N=3\ntorchrun --nproc_per_node=$N repro.py", 3, "likely_uneven"),
])
def test_the_world_size_of_the_launch_line(tmp_path: Path, launch: str, size: int,
                                           shards: str) -> None:
    _, values = _job(tmp_path, launch)
    assert values["intent.fsdp_shard_size"] == size and values["intent.fsdp_shards"] == shards


@pytest.mark.parametrize("launch", ["torchrun --nproc_per_node=gpu repro.py",
                                    "torchrun --nnodes=1:4 --nproc_per_node=$UNSET repro.py",
                                    "python repro.py"])
def test_a_world_size_not_given_as_a_number_is_not_known(tmp_path: Path, launch: str) -> None:
    _, values = _job(tmp_path, launch)
    assert isinstance(values["intent.fsdp_shards"], Unknown)


@pytest.mark.parametrize("mesh", [", mesh=dp_mesh", ", **fsdp_kwargs"])
def test_a_mesh_of_its_own_is_not_the_world(tmp_path: Path, mesh: str) -> None:
    _, values = _job(tmp_path, "torchrun --nproc_per_node=3 repro.py", mesh=mesh)
    assert values["intent.distributed"] == "fsdp2"
    assert isinstance(values["intent.fsdp_shard_size"], Unknown)


@pytest.mark.parametrize("fields", ["cast_config_weight=CastConfig(), emulate=True",
                                    "emulate=True, **more"])
def test_scaling_fields_still_make_the_recipe_unknown(tmp_path: Path, fields: str) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent(f"""
        from torchao.float8 import convert_to_float8_training, Float8LinearConfig, CastConfig
        config = Float8LinearConfig({fields})
        convert_to_float8_training(model, config=config)
    """))
    read = read_paths([str(tmp_path / "train.py")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.recipe"], Unknown)


def test_torchrun_size_reads_only_torchrun_s_own_flags() -> None:
    text = "torchrun --nnodes=2 --nproc_per_node 8 train.py --nproc_per_node 3\n"
    assert torchrun_size(text, {}, text.index("train.py")) == {"nnodes": 2, "nproc_per_node": 8}
    text = "deepspeed --num_gpus 8 train.py\n"
    assert torchrun_size(text, {}, text.index("train.py")) == {}


@pytest.mark.parametrize("hidden, ffn, n, want", [
    (4096, 14336, 8, "even"), (4096, 14336, 24, "uneven"), (3072, 8194, 3, "uneven"),
    (3072, 9216, 3, "even"), (None, None, 16, "even"), (None, None, 256, "likely_uneven"),
    (None, None, 12, "likely_uneven"), (None, None, 1, "even")])
def test_shards_from_the_sizes(hidden: int | None, ffn: int | None, n: int, want: str) -> None:
    got: dict = {"fsdp_shard_size": (n, "x")}
    intent._shards(got, hidden, ffn)
    assert got["fsdp_shards"][0] == want


def test_a_torchtitan_shard_degree_is_the_shard_size(tmp_path: Path) -> None:
    (tmp_path / "job.toml").write_text(textwrap.dedent("""
        [model]
        name = "llama3"
        flavor = "8B"
        converters = ["quantize.linear.float8"]
        [quantize.linear.float8]
        enable_fsdp_float8_all_gather = true
        [parallelism]
        data_parallel_shard_degree = 12
        context_parallel_degree = 2
    """))
    read = read_paths([str(tmp_path / "job.toml")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fsdp_shard_size"] == 24
