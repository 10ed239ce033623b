"""Real torchrun jobs (3 processes, gloo on CPU) with planted per-rank differences.

Each job costs a few seconds on a 2-core machine, so each test plants several differences at
once and asserts that the merged report names exactly those, with exactly the ranks that have them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

Job = Any  # tests/cluster/conftest.py: Job


def _ids(job: Job) -> set[str]:
    assert job.report is not None
    return {f["id"] for f in job.report["findings"]}


def test_planted_differences_are_named_with_their_ranks(
        torchrun: Callable[..., Job], fake_dist_info: Callable[..., Path], tmp_path: Path) -> None:
    site = fake_dist_info(tmp_path / "rank1-site", "transformer-engine", "1.11.0")
    job = torchrun(3, ["--timeout", "60"], per_rank={
        1: f'export PYTHONPATH="{site}:$PYTHONPATH"',
        2: "export NVTE_FP8_DPA_BWD=0",
    })
    facts = job.facts()
    assert facts["cluster.world_size"] == 3
    assert facts["cluster.missing_ranks"] == []
    assert facts["cluster.diff.packages"] == [
        {"name": "transformer-engine", "values": {"<absent>": [0, 2], "1.11.0": [1]}}]
    assert facts["cluster.diff.env"] == [
        {"name": "NVTE_FP8_DPA_BWD", "values": {"<unset>": [0, 1], "0": [2]}}]
    assert facts["cluster.differing"] == ["packages", "env"]
    assert facts["cluster.diff.gpu"] == facts["cluster.diff.driver"] == []
    assert facts["cluster.shared_gpu"] == []
    assert {"FP8D-CLU-0001", "FP8D-CLU-0005"} <= _ids(job)
    assert not {i for i in _ids(job) if i.startswith("FP8D-CLU")} - {"FP8D-CLU-0001",
                                                                      "FP8D-CLU-0005"}
    # rank 0 exits with the report's exit code; torchrun passes the failure on.
    assert job.report["exit_code"] == 1 and job.rc != 0
    diffs = job.report["cluster"]["differences"]
    assert [d["kind"] for d in diffs] == ["package", "env"]
    assert [r["rank"] for r in job.report["cluster"]["ranks"]] == [0, 1, 2]


def test_two_ranks_on_one_gpu_and_a_clean_gloo_collective(torchrun: Callable[..., Job]) -> None:
    # The same CUDA_VISIBLE_DEVICES on every rank maps cuda:LOCAL_RANK of both ranks to host
    # GPU 0; nothing else differs, and the gloo collectives must give exact results. (Two ranks:
    # each rank starts a collectives child that imports torch again, and CI has 2 cores.)
    job = torchrun(2, ["--timeout", "60", "--collectives", "--collectives-backend", "gloo",
                       "--collectives-mib", "1"],
                   per_rank={r: "export CUDA_VISIBLE_DEVICES=0,0" for r in range(2)})
    facts = job.facts()
    assert facts["cluster.differing"] == []
    assert facts["cluster.shared_gpu"] == [{"node": "node0", "device": "GPU 0", "ranks": [0, 1]}]
    assert facts["cluster.collectives.status"] == "ok"
    assert facts["cluster.collectives.all_reduce.ok"] is True
    assert facts["cluster.collectives.all_gather_uint8.ok"] is True
    assert facts["cluster.collectives.failed_ranks"] == []
    clu = {i for i in _ids(job) if i.startswith("FP8D-CLU")}
    assert clu == {"FP8D-CLU-0006"}


def test_ranks_that_exit_early_or_hang_are_named_without_hanging_the_job(
        torchrun: Callable[..., Job]) -> None:
    # Of 4 ranks, rank 1 hangs before it starts (300 s) and rank 2 exits at once with success:
    # rank 0 must name both after --timeout, still gather rank 3 (renumbered into a group of
    # two), and its exit code 1 must make torchrun end the hung rank.
    # Rank 3 must collect its facts before rank 0's deadline: --timeout 10 first (rank 0 waits
    # that long for rank 1); where a loaded machine did not start rank 3 in that time (four
    # interpreters on two cores), once more with 60 s, so the load does not decide the outcome.
    for timeout in (10, 60):
        job = torchrun(4, ["--timeout", str(timeout)], per_rank={
            1: "sleep 300", 2: "exit 0", 3: "export NVTE_DEBUG=1"})
        if 3 not in job.facts().get("cluster.missing_ranks", []):
            break
    facts = job.facts()
    assert facts["cluster.missing_ranks"] == [1, 2]
    assert all("never reached the rendezvous" in m["reason"] for m in facts["cluster.missing"])
    assert facts["cluster.ranks_answered"] == 2
    assert facts["cluster.node_ranks"] == {"node0": [0, 3]}
    assert facts["cluster.diff.env"] == [
        {"name": "NVTE_DEBUG", "values": {"<unset>": [0], "1": [3]}}]
    assert {"FP8D-CLU-0005", "FP8D-CLU-0007"} <= _ids(job)
    assert job.report["exit_code"] == 1 and job.rc != 0
    assert job.seconds < timeout + 25, "the job must end soon after --timeout"


def test_planned_gpu_and_driver_differences_are_named_with_their_ranks(
        torchrun: Callable[..., Job]) -> None:
    # CPU machines have no GPU to differ, so each rank plans one with --assume, appended to its
    # own command line by the wrapper: ranks 0 and 1 an H100 on driver 580 (CUDA 13.0), rank 2
    # an A100 on driver 550 (CUDA 12.4). The merge must name exactly those, with those ranks.
    def plan(gpu: str, driver: str, cuda: str) -> str:
        return (f'set -- "$@" --assume gpu={gpu} --assume gpu.driver={driver} '
                f'--assume gpu.cuda_driver={cuda}')

    h100 = plan("H100", "580.95.05", "13.0")
    job = torchrun(3, ["--timeout", "60"], per_rank={
        0: h100, 1: h100, 2: plan("A100", "550.54.15", "12.4")})
    facts = job.facts()
    assert facts["cluster.missing_ranks"] == [] and facts["cluster.error_ranks"] == []
    assert facts["cluster.diff.gpu"] == [
        {"name": "model", "values": {"NVIDIA H100": [0, 1], "NVIDIA A100": [2]}},
        {"name": "compute capability", "values": {"9.0": [0, 1], "8.0": [2]}}]
    assert facts["cluster.diff.driver"] == [
        {"name": "gpu.cuda_driver", "values": {"13.0": [0, 1], "12.4": [2]}},
        {"name": "gpu.driver", "values": {"580.95.05": [0, 1], "550.54.15": [2]}}]
    assert facts["cluster.differing"] == ["gpu", "driver"]
    assert (facts["cluster.min_cc"], facts["cluster.max_cc"]) == ("8.0", "9.0")
    clu = {i for i in _ids(job) if i.startswith("FP8D-CLU")}
    assert clu == {"FP8D-CLU-0002", "FP8D-CLU-0003", "FP8D-CLU-0004"}
    diffs = job.report["cluster"]["differences"]
    assert [d["kind"] for d in diffs] == ["gpu", "gpu", "driver", "driver"]
    assert "model: NVIDIA H100 on ranks 0, 1; NVIDIA A100 on rank 2" in diffs[0]["text"]
    rows = {r["rank"]: r for r in job.report["cluster"]["ranks"]}
    assert [(rows[r]["gpu"], rows[r]["cc"]) for r in range(3)] == [
        ("NVIDIA H100", "9.0"), ("NVIDIA H100", "9.0"), ("NVIDIA A100", "8.0")]
