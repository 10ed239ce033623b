"""Launcher environments (torchrun / srun / none) and the GPU slot each rank lands on."""

from __future__ import annotations

import pytest

from preflight.cluster.launch import LaunchError, device_slot, first_slurm_host, rank_info


def test_torchrun_environment() -> None:
    info = rank_info({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "MASTER_ADDR": "n0",
                      "MASTER_PORT": "29400", "TORCHELASTIC_RUN_ID": "abc",
                      "TORCHELASTIC_RESTART_COUNT": "2"})
    assert (info.rank, info.world_size, info.local_rank, info.launcher) == (5, 8, 1, "torchrun")
    assert (info.master_addr, info.master_port, info.run_id) == ("n0", 29400, "abc-2")


def test_srun_environment_derives_the_master_from_the_node_list() -> None:
    info = rank_info({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1",
                      "SLURM_JOB_ID": "77", "SLURM_STEP_NODELIST": "gpu[07-08,11]"})
    assert (info.rank, info.world_size, info.local_rank, info.launcher) == (3, 4, 1, "slurm")
    assert (info.master_addr, info.master_port, info.run_id) == ("gpu07", 29500, "77")


@pytest.mark.parametrize("nodelist, first", [
    ("node1", "node1"), ("a[3-5]", "a3"), ("dgx-[012,020]", "dgx-012"), ("x[1],y[2-3]", "x1"),
    ("h100-a,h100-b", "h100-a"),
])
def test_first_slurm_host(nodelist: str, first: str) -> None:
    assert first_slurm_host(nodelist) == first


def test_no_launcher_is_one_process() -> None:
    info = rank_info({})
    assert (info.rank, info.world_size, info.launcher) == (0, 1, "none")


@pytest.mark.parametrize("env, words", [
    ({"RANK": "4", "WORLD_SIZE": "4", "MASTER_ADDR": "a", "MASTER_PORT": "1"}, "outside"),
    ({"RANK": "x", "WORLD_SIZE": "4"}, "RANK='x'"),
    ({"RANK": "1", "WORLD_SIZE": "2"}, "MASTER_ADDR"),
    # issue 21 item 7: each names the variable, none is a traceback
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "200000"}, "SLURM_NTASKS=200000"),
    ({"SLURM_PROCID": "x", "SLURM_NTASKS": "2"}, "SLURM_PROCID='x'"),
    ({"SLURM_PROCID": "2", "SLURM_NTASKS": "2"}, "SLURM_PROCID=2 is outside SLURM_NTASKS=2"),
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "1e9"}, "SLURM_LOCALID"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "70000"},
     "MASTER_PORT=70000"),
    ({"RANK": "0", "WORLD_SIZE": "9" * 40}, "WORLD_SIZE"),
])
def test_inconsistent_launcher_environment_is_a_usage_error(env: dict[str, str],
                                                            words: str) -> None:
    with pytest.raises(LaunchError, match=words):
        rank_info(env)


def test_device_slot_follows_cuda_visible_devices() -> None:
    uuids = {0: "GPU-aaaa-1111", 1: "GPU-bbbb-2222"}
    assert device_slot(1, {}, uuids).key == "GPU-bbbb-2222"
    assert device_slot(1, {"CUDA_VISIBLE_DEVICES": "1,0"}, uuids).index == 0
    # A UUID prefix, as CUDA accepts it, resolves to the same device as its index.
    by_uuid = device_slot(0, {"CUDA_VISIBLE_DEVICES": "GPU-bbbb"}, uuids)
    assert (by_uuid.key, by_uuid.index) == ("GPU-bbbb-2222", 1)
    assert device_slot(0, {"CUDA_VISIBLE_DEVICES": "1"}, uuids).key == by_uuid.key
    beyond = device_slot(2, {"CUDA_VISIBLE_DEVICES": "0,1"}, uuids)
    assert beyond.key is None and "LOCAL_RANK 2" in str(beyond.problem)
    assert device_slot(0, {"CUDA_VISIBLE_DEVICES": ""}).problem is not None
