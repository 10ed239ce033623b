"""Merge per-rank payloads into ``cluster.*`` facts: what differs between ranks, and where.

Pure functions over JSON-shaped payloads (no torch, no I/O), so the merge can be tested on its
own and replayed. A difference is ``{"name": ..., "values": {value: [ranks]}}``; only ranks that
answered and collected their facts take part (a rank that failed is listed in
``cluster.rank_errors`` instead of looking like a rank where nothing is installed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from preflight.base.cc import format_cc, parse_cc
from preflight.base.digits import ascii_digits

ABSENT = "<absent>"
UNSET = "<unset>"
UNKNOWN = "<unknown>"
NO_GPU = "<no gpu>"

DIFF_KINDS = ("packages", "gpu", "driver", "cuda", "env")
_DRIVER = ("gpu.driver", "gpu.cuda_driver")
_CUDA = ("cuda.torch_variant", "cuda.torch_build", "cuda.runtime", "cuda.cudnn", "cuda.cublas",
         "cuda.nvcc")


@dataclass(frozen=True)
class Node:
    """One host of the job: its label (node0 holds rank 0), host name and ranks."""

    label: str
    host: str
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class ClusterView:
    """The merged view: ``cluster.*`` facts plus the node layout for the per-node tables."""

    facts: dict[str, Any]
    nodes: tuple[Node, ...]
    payloads: Mapping[int, Mapping[str, Any]]


def _plain(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"$unknown"}:
        return UNKNOWN
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def own_gpu(facts: Mapping[str, Any], local_rank: int) -> tuple[str, str]:
    """(model, cc) of this rank's GPU: entry LOCAL_RANK of the visible list, else the first."""
    names, ccs = facts.get("gpu.names"), facts.get("gpu.ccs")
    if isinstance(names, list) and isinstance(ccs, list) and local_rank < min(len(names), len(ccs)):
        return str(names[local_rank]), str(ccs[local_rank])
    name, cc = facts.get("gpu.name"), facts.get("gpu.cc")
    if name is None and cc is None:
        count = facts.get("gpu.count")
        return (UNKNOWN, UNKNOWN) if isinstance(count, dict) else (NO_GPU, NO_GPU)
    return (_plain(name) if name is not None else ABSENT,
            _plain(cc) if cc is not None else ABSENT)


def _diff(name: str, per_rank: Mapping[int, str]) -> dict[str, Any] | None:
    groups: dict[str, list[int]] = {}
    for rank in sorted(per_rank):
        groups.setdefault(per_rank[rank], []).append(rank)
    if len(groups) < 2:
        return None
    return {"name": name, "values": groups}


def _diffs(names: Iterable[str], ranks: Mapping[int, Mapping[str, Any]],
           value_of: Callable[[Mapping[str, Any], str], str],
           label: Callable[[str], str] = lambda n: n) -> list[dict[str, Any]]:
    out = []
    for name in sorted(set(names)):
        d = _diff(label(name), {r: value_of(f, name) for r, f in ranks.items()})
        if d:
            out.append(d)
    return out


def fact_value(facts: Mapping[str, Any], name: str) -> str:
    return _plain(facts[name]) if name in facts else ABSENT


def summarize(diffs: list[dict[str, Any]]) -> str:
    """``transformer-engine: 1.11.0 on rank 1; <absent> on ranks 0, 2`` (one line per diff)."""
    parts = []
    for d in diffs:
        groups = sorted(d["values"].items(), key=lambda kv: kv[1][0])
        desc = "; ".join(
            f"{value} on rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}"
            for value, rs in groups)
        parts.append(f"{d['name']}: {desc}")
    return " | ".join(parts)


def _ranges(ranks: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``1-3, 7``."""
    out: list[str] = []
    start = prev = ranks[0]
    for r in [*ranks[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    return ", ".join(out)


def summarize_missing(missing: Mapping[int, str]) -> str:
    """``rank 2 (why); ranks 4-9, 12 (why else)``: ranks grouped by reason, as ranges, so a job
    of 100,000 ranks with most missing is one line per reason, not 100,000 (issue 21 item 7)."""
    by_reason: dict[str, list[int]] = {}
    for r in sorted(missing):
        by_reason.setdefault(missing[r], []).append(r)
    return "; ".join(f"rank{'s' if len(rs) > 1 else ''} {_ranges(rs)} ({why})"
                     for why, rs in sorted(by_reason.items(), key=lambda kv: kv[1][0]))


def nodes_of(payloads: Mapping[int, Mapping[str, Any]]) -> tuple[Node, ...]:
    """Nodes in order of their lowest rank, labelled node0, node1, ...

    A node is a host name *and* a kernel boot (``node_id``): cloned containers on different
    machines can share a host name, and must not look like one node with shared GPUs.
    """
    nodes: dict[str, list[int]] = {}
    hosts: dict[str, str] = {}
    for rank in sorted(payloads):
        p = payloads[rank]
        key = str(p.get("node_id") or p.get("host", "?"))
        nodes.setdefault(key, []).append(rank)
        hosts.setdefault(key, str(p.get("host", "?")))
    return tuple(Node(f"node{i}", hosts[k], tuple(rs)) for i, (k, rs) in enumerate(nodes.items()))


def _device_label(device: Mapping[str, Any]) -> str:
    if device.get("index") is not None:
        return f"GPU {device['index']}"
    entry = str(device.get("entry"))
    # Never put a GPU UUID in a fact: reports are redacted by default.
    return "GPU " + (entry if ascii_digits(entry) else entry.split("-")[0] + "-…")


def _shared(payloads: Mapping[int, Mapping[str, Any]], nodes: tuple[Node, ...]
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """GPUs that several ranks would use, and ranks whose LOCAL_RANK names no visible GPU.

    A GPU UUID (resolved through NVML) names one physical device wherever it is seen, so ranks
    are grouped by it across the whole job (two containers of one machine that see their GPUs
    under different indices still compare right); a bare index only means something within one
    node's process view.
    """
    shared, problems = [], []
    by_key: dict[tuple[str, str], list[int]] = {}
    node_of = {r: n.label for n in nodes for r in n.ranks}
    for r in sorted(payloads):
        device = payloads[r].get("device") or {}
        if device.get("problem"):
            problems.append({"rank": r, "node": node_of[r], "problem": device["problem"]})
        elif device.get("key"):
            key = str(device["key"])
            scope = "" if key.startswith(("GPU-", "MIG-")) else node_of[r]
            by_key.setdefault((scope, key), []).append(r)
    for rs in by_key.values():
        if len(rs) > 1:
            where = sorted({node_of[r] for r in rs}, key=lambda n: int(n[4:]))
            shared.append({"node": ", ".join(where),
                           "device": _device_label(payloads[rs[0]]["device"]), "ranks": rs})
    return shared, problems


def merge(payloads: Mapping[int, Mapping[str, Any]], missing: Mapping[int, str],
          world_size: int) -> ClusterView:
    """``cluster.*`` facts from what rank 0 gathered (``missing``: rank -> why it is absent)."""
    nodes = nodes_of(payloads)
    errors = {r: str(p["error"]) for r, p in payloads.items() if p.get("error")}
    good = {r: p.get("facts") or {} for r, p in payloads.items() if r not in errors}
    local = {r: int(payloads[r].get("local_rank", 0)) for r in good}

    pkg_names = {n for f in good.values() for n in f
                 if n.startswith("pkg.") and n.endswith(".version")}
    packages = _diffs(pkg_names | {"host.python"}, good, fact_value,
                      lambda n: "python" if n == "host.python" else n[4:-8])
    gpus = {r: own_gpu(f, local[r]) for r, f in good.items()}
    gpu = [d for d in (_diff("model", {r: g[0] for r, g in gpus.items()}),
                       _diff("compute capability", {r: g[1] for r, g in gpus.items()})) if d]
    driver = _diffs(_DRIVER, good, fact_value)
    cuda = _diffs(_CUDA, good, fact_value)
    envs = {r: payloads[r].get("env") or {} for r in good}
    env = _diffs({n for e in envs.values() for n in e}, envs,
                 lambda e, n: str(e[n]) if n in e else UNSET)
    shared, device_problems = _shared(payloads, nodes)

    diffs = {"packages": packages, "gpu": gpu, "driver": driver, "cuda": cuda, "env": env}
    facts: dict[str, Any] = {
        "cluster.world_size": world_size,
        "cluster.ranks_answered": len(payloads),
        "cluster.nodes": len(nodes),
        "cluster.node_ranks": {n.label: list(n.ranks) for n in nodes},
        "cluster.missing_ranks": sorted(missing),
        "cluster.missing": [{"rank": r, "reason": missing[r]} for r in sorted(missing)],
        "cluster.error_ranks": sorted(errors),
        "cluster.rank_errors": [{"rank": r, "error": errors[r]} for r in sorted(errors)],
        "cluster.differing": [k for k in DIFF_KINDS if diffs[k]],
        "cluster.shared_gpu": shared,
        "cluster.device_problems": device_problems,
    }
    for kind in DIFF_KINDS:
        facts[f"cluster.diff.{kind}"] = diffs[kind]
        facts[f"cluster.summary.{kind}"] = summarize(diffs[kind])
    facts["cluster.summary.shared_gpu"] = "; ".join(
        f"ranks {', '.join(map(str, s['ranks']))} on {s['device']} of {s['node']}" for s in shared)
    facts["cluster.summary.missing"] = summarize_missing(missing)
    facts["cluster.summary.device_problems"] = "; ".join(
        f"rank {p['rank']} on {p['node']}: {p['problem']}" for p in device_problems)
    facts["cluster.summary.errors"] = "; ".join(f"rank {r}: {errors[r]}" for r in sorted(errors))
    ccs = [k for k in (parse_cc(g[1]) for g in gpus.values()) if k]
    if ccs:
        facts["cluster.min_cc"] = format_cc(*min(ccs))
        facts["cluster.max_cc"] = format_cc(*max(ccs))
    smoke_status = {r: str(f["smoke.status"]) for r, f in good.items() if "smoke.status" in f}
    if smoke_status:
        facts["cluster.smoke.failed_ranks"] = sorted(
            r for r, s in smoke_status.items() if s != "ok")
    return ClusterView(facts, nodes, payloads)
