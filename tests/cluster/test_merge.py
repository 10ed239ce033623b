"""The merge of per-rank payloads into cluster.* facts, and the cluster section built from it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.cluster.collect import job_env
from preflight.cluster.collectives import merge_results
from preflight.cluster.merge import merge
from preflight.cluster.view import render_section, section_json


def payload(rank: int, host: str = "h0", local: int | None = None,
            facts: dict[str, Any] | None = None, env: dict[str, str] | None = None, device: dict[str, Any] | None = None,
            error: str | None = None) -> dict[str, Any]:
    return {"rank": rank, "local_rank": rank if local is None else local, "host": host,
            "facts": facts or {}, "env": env or {}, "error": error,
            "device": device or {"entry": str(rank), "key": f"index:{rank}", "index": rank}}


def test_differences_name_exactly_the_ranks_that_have_them() -> None:
    base = {"pkg.torch.version": "2.9.0", "host.python": "3.11.7", "gpu.names": ["H100", "H100"],
            "gpu.ccs": ["9.0", "9.0"], "gpu.driver": "580.1"}
    odd = dict(base, **{"pkg.torch.version": "2.8.0", "gpu.driver": "570.2",
                        "gpu.names": ["A100", "A100"], "gpu.ccs": ["8.0", "8.0"]})
    view = merge({0: payload(0, "a", 0, base), 1: payload(1, "a", 1, base),
                  2: payload(2, "b", 0, odd, env={"NCCL_ALGO": "Ring"},
                             device={"entry": "0", "key": "index:0", "index": 0}),
                  3: payload(3, "b", 1, error="collecting facts: boom",
                             device={"entry": "0", "key": "index:0", "index": 0})},
                 {4: "never reached the rendezvous"}, world_size=5)
    f = view.facts
    assert f["cluster.diff.packages"] == [
        {"name": "torch", "values": {"2.9.0": [0, 1], "2.8.0": [2]}}]
    assert f["cluster.diff.driver"] == [{"name": "gpu.driver",
                                         "values": {"580.1": [0, 1], "570.2": [2]}}]
    assert [d["name"] for d in f["cluster.diff.gpu"]] == ["model", "compute capability"]
    assert f["cluster.diff.env"] == [
        {"name": "NCCL_ALGO", "values": {"<unset>": [0, 1], "Ring": [2]}}]
    assert (f["cluster.min_cc"], f["cluster.max_cc"]) == ("8.0", "9.0")
    assert f["cluster.error_ranks"] == [3] and f["cluster.missing_ranks"] == [4]
    # Rank 3 failed but its GPU slot is still known: it shares GPU 0 of node1 with rank 2.
    assert f["cluster.shared_gpu"] == [{"node": "node1", "device": "GPU 0", "ranks": [2, 3]}]
    assert f["cluster.node_ranks"] == {"node0": [0, 1], "node1": [2, 3]}
    assert f["cluster.differing"] == ["packages", "gpu", "driver", "env"]


def test_cluster_cc_range_reads_every_cc_form() -> None:
    """The merge parses ccs with the probes' parser, so "sm_90" and "100" count too."""
    facts = [{"gpu.names": ["H100"], "gpu.ccs": ["sm_90"]},
             {"gpu.names": ["B200"], "gpu.ccs": ["100"]},
             {"gpu.names": ["L4"], "gpu.ccs": ["8.9"]}]
    view = merge({r: payload(r, f"h{r}", 0, f) for r, f in enumerate(facts)}, {}, world_size=3)
    assert (view.facts["cluster.min_cc"], view.facts["cluster.max_cc"]) == ("8.9", "10.0")


def test_cluster_section_puts_differences_first_and_redacts_host_names() -> None:
    facts = {"pkg.transformer-engine.version": "2.8.0"}
    view = merge({0: payload(0, "secret-host-a", facts=facts),
                  1: payload(1, "secret-host-b", 0, {"pkg.transformer-engine.version": "1.11.0"})},
                 {}, world_size=2)
    text = render_section(view, "text")
    assert "secret-host" not in text
    assert text.index("Differences") < text.index("node0") < text.index("node1")
    assert "transformer-engine: 2.8.0 on rank 0; 1.11.0 on rank 1" in text
    header = next(line for line in text.splitlines() if line.strip().startswith("rank"))
    assert header.split()[:3] == ["rank", "local_rank", "transformer-engine"]
    md = render_section(view, "markdown", redact=False)
    assert "secret-host-a" in md
    # Markdown would swallow "<absent>" as an HTML tag; it is escaped.
    view2 = merge({0: payload(0, facts=facts), 1: payload(1, facts={})}, {}, world_size=2)
    assert "\\<absent> on rank 1" in render_section(view2, "markdown")
    doc = section_json(view)
    assert "host" not in doc["nodes"][0] and doc["differences"][0]["kind"] == "package"


versions = st.sampled_from(["1.0", "1.1", "2.0"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["torch", "torchao", "transformer-engine"]),
                                versions), min_size=1, max_size=6))
def test_package_diffs_partition_the_ranks(per_rank: list[dict[str, str]]) -> None:
    payloads = {r: payload(r, facts={f"pkg.{n}.version": v for n, v in pkgs.items()})
                for r, pkgs in enumerate(per_rank)}
    diffs = merge(payloads, {}, len(per_rank)).facts["cluster.diff.packages"]
    names = {n for pkgs in per_rank for n in pkgs}
    differing = {n for n in names if len({pkgs.get(n) for pkgs in per_rank}) > 1}
    assert {d["name"] for d in diffs} == differing
    for d in diffs:
        ranks = sorted(r for rs in d["values"].values() for r in rs)
        assert ranks == list(range(len(per_rank)))
        for value, rs in d["values"].items():
            assert all(per_rank[r].get(d["name"], "<absent>") == value for r in rs)


def test_env_compares_launch_variables_and_masks_secrets() -> None:
    env = job_env({"NCCL_ALGO": "Ring", "PATH": "/bin", "NVTE_HUB_TOKEN": "abc",
                   "ACCELERATE_HUB": "https://u:pw@host/x", "NVTE_DEBUG": "1"})
    assert set(env) == {"NCCL_ALGO", "NVTE_HUB_TOKEN", "ACCELERATE_HUB", "NVTE_DEBUG"}
    assert env["NVTE_HUB_TOKEN"].startswith("<masked:") and "pw" not in env["ACCELERATE_HUB"]
    # Two different secrets stay distinguishable, so a difference is still reported.
    assert job_env({"NVTE_HUB_TOKEN": "x"}) != job_env({"NVTE_HUB_TOKEN": "y"})


def test_env_gathers_nothing_the_report_policy_excludes() -> None:
    from preflight.redact import env_allowed

    # NCCL_IB_HCA names the host's InfiniBand adapters: preflight.redact leaves it out of
    # reports on purpose, so a rank must not gather it either.
    env = {"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_IB_TOKEN": "abc", "NCCL_TOPO_FILE": "/etc/t.xml",
           "NCCL_DEBUG": "INFO", "TORCH_NCCL_BLOCKING_WAIT": "1", "NVTE_FP8_DPA": "1",
           "CUDA_DEVICE_MAX_CONNECTIONS": "1",
           "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
           "TORCH_HOME": "/x", "CUDA_HOME": "/usr/local/cuda"}
    got = job_env(env)
    assert set(got) == {"NCCL_DEBUG", "TORCH_NCCL_BLOCKING_WAIT", "NVTE_FP8_DPA",
                        "CUDA_DEVICE_MAX_CONNECTIONS", "PYTORCH_CUDA_ALLOC_CONF"}
    assert all(env_allowed(name) for name in got)


def test_collectives_merge() -> None:
    ok = {"status": "ok", "backend": "nccl", "bytes": 8,
          "all_reduce": {"ok": True, "busbw_gbps": 1.0},
          "all_gather_uint8": {"ok": True, "busbw_gbps": 2.0}}
    facts = merge_results({0: ok, 1: {"status": "timeout", "backend": "nccl", "error": "hung"}})
    assert facts["cluster.collectives.status"] == "timeout"
    assert facts["cluster.collectives.failed_ranks"] == [1]
    assert facts["cluster.collectives.error"] == "rank 1: hung"
    assert facts["cluster.collectives.all_gather_uint8.ok"] is False
    assert merge_results({0: ok, 1: ok})["cluster.collectives.status"] == "ok"
    assert merge_results({0: None}) == {}


def test_nodes_are_machines_not_host_names_and_uuids_compare_across_nodes() -> None:
    def dev(entry: str, key: str, index: int | None) -> dict[str, Any]:
        return {"entry": entry, "key": key, "index": index}

    p = {0: payload(0, "same", 0, device=dev("0", "index:0", 0)),
         1: payload(1, "same", 0, device=dev("0", "index:0", 0)),
         2: payload(2, "pod-a", 0, device=dev("0", "GPU-1234-aaaa", 0)),
         3: payload(3, "pod-b", 0, device=dev("GPU-1234", "GPU-1234-aaaa", None))}
    for r, nid in {0: "m1", 1: "m2", 2: "m3/pod-a", 3: "m3/pod-b"}.items():
        p[r]["node_id"] = nid
    f = merge(p, {}, world_size=4).facts
    # Two machines that clone one host name are two nodes: their index-0 GPUs are not shared.
    # Two pods of one machine (two nodes here) that reach the same GPU UUID are flagged.
    assert f["cluster.node_ranks"] == {"node0": [0], "node1": [1], "node2": [2], "node3": [3]}
    assert f["cluster.shared_gpu"] == [{"node": "node2, node3", "device": "GPU 0", "ranks": [2, 3]}]


def _columns_aligned(table: list[str]) -> bool:
    """Every row starts a cell where the header starts a column (cells are never blank)."""
    header = table[0]
    starts = [i for i in range(2, len(header)) if header[i] != " " and header[i - 1] == " "
              and header[i - 2] == " "]
    return all(row[i - 1] == " " and row[i] != " " for row in table[1:] for i in starts
               if i < len(row))


def test_cells_are_redacted_before_the_columns_are_laid_out() -> None:
    # /home/<user>/... becomes ~/... by content redaction; done after the layout (it was), the
    # shorter cells shifted every column after them.
    view = merge({0: payload(0, facts={"pkg.torch.version": "2.13.0+cpu"},
                             env={"NCCL_TOPO_FILE": "/home/alice/topo.xml"}),
                  1: payload(1, facts={"pkg.torch.version": "2.13.0+cpu"},
                             env={"NCCL_TOPO_FILE": "/home/bob-the-admin/other/topo.xml"})},
                 {}, world_size=2)
    text = render_section(view, "text")
    assert "alice" not in text and "bob-the-admin" not in text
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("rank "))
    table = lines[start:start + 3]
    assert table[1].split()[2] == "~/topo.xml" and table[2].split()[2] == "~/other/topo.xml"
    assert _columns_aligned(table), "\n".join(table)
    assert "/home/alice" in render_section(view, "text", redact=False)
    assert "alice" not in render_section(view, "markdown")


def test_slot_is_not_a_gpu_index_when_no_gpu_is_known() -> None:
    unknown = {"gpu.count": {"$unknown": "NVML library not found"}}
    none = {"gpu.count": 0}
    h100 = {"gpu.count": 1, "gpu.names": ["NVIDIA H100"], "gpu.ccs": ["9.0"]}
    view = merge({0: payload(0, "a", 0, unknown), 1: payload(1, "b", 0, none),
                  2: payload(2, "c", 0, h100), 3: payload(3, "d", 0, error="collecting: boom")},
                 {}, world_size=4)
    slots = {r["rank"]: r["slot"] for r in section_json(view)["ranks"]}
    # Without NVML, CUDA_VISIBLE_DEVICES' index says nothing about a GPU being there.
    assert slots == {0: "<unknown>", 1: "none", 2: "GPU 2", 3: "-"}
    text = render_section(view, "text")
    assert "GPU 0" not in text and "GPU 1" not in text and "GPU 2" in text


def test_missing_ranks_are_summarized_by_reason_as_ranges() -> None:
    # issue 21 item 7: 131,071 missing ranks are a line per reason, not 131,071 clauses
    from preflight.cluster.merge import summarize_missing

    missing = {r: "never reached the rendezvous" for r in range(1, 131072)}
    missing.update({5: "started but did not finish", 9: "started but did not finish"})
    assert summarize_missing(missing) == (
        "ranks 1-4, 6-8, 10-131071 (never reached the rendezvous); "
        "ranks 5, 9 (started but did not finish)")
    assert summarize_missing({2: "gone"}) == "rank 2 (gone)"
