"""The cluster section of the report: the differences first, then one table per node.

Shown before the normal report (``preflight.render``). Nodes are labelled node0, node1, ... (node0
holds rank 0); host names appear only with ``--no-redact`` and GPU UUIDs never. In each node's
table the columns of facts that differ between ranks come first. With redaction on, every cell is
redacted *before* the column widths are computed: redacting the laid-out text afterwards
(``/home/alice/x`` -> ``~/x``) shifted the rest of the row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from preflight.cluster.merge import DIFF_KINDS, NO_GPU, UNKNOWN, ClusterView, fact_value, own_gpu

_KIND_LABEL = {"packages": "package", "gpu": "gpu", "driver": "driver", "cuda": "cuda",
               "env": "env"}


def _status(payload: Mapping[str, Any]) -> str:
    if payload.get("error"):
        return "error: " + str(payload["error"])[:80]
    facts = payload.get("facts") or {}
    parts = []
    if "smoke.status" in facts:
        parts.append(f"smoke {facts['smoke.status']}")
    coll = payload.get("collectives")
    if coll:
        parts.append(f"collectives {coll.get('status')}")
    return ", ".join(parts) or "ok"


def _slot(payload: dict[str, Any], model: str) -> str:
    """The GPU ``cuda:LOCAL_RANK`` lands on, as far as this rank can tell.

    Without NVML (``<unknown>`` GPU) the host index from CUDA_VISIBLE_DEVICES says nothing about
    whether that GPU exists, so it is not shown as "GPU n"; a rank with no GPU says ``none``.
    """
    device = payload.get("device") or {}
    if device.get("problem"):
        return str(device["problem"])
    if payload.get("error"):
        return "-"  # its facts were never collected: nothing is known
    if model == NO_GPU:
        return "none"
    if model == UNKNOWN:
        return UNKNOWN
    return f"GPU {device['index']}" if device.get("index") is not None else "-"


def _diff_columns(view: ClusterView) -> list[tuple[str, str, str]]:
    """(kind, diff name, column title) for every difference, in report order."""
    return [(kind, d["name"], d["name"]) for kind in DIFF_KINDS
            for d in view.facts.get(f"cluster.diff.{kind}", [])]


def _cell(view: ClusterView, rank: int, kind: str, name: str) -> str:
    for d in view.facts.get(f"cluster.diff.{kind}", []):
        if d["name"] == name:
            for value, ranks in d["values"].items():
                if rank in ranks:
                    return str(value)        # merge._diff keys the groups by str
    return "-"


def rows(view: ClusterView) -> list[dict[str, Any]]:
    """One row per answered rank: node, differing values first, then the usual columns."""
    out = []
    node_of = {r: n.label for n in view.nodes for r in n.ranks}
    for rank in sorted(view.payloads):
        p = view.payloads[rank]
        facts = p.get("facts") or {}
        model, cc = own_gpu(facts, int(p.get("local_rank", 0)))
        row: dict[str, Any] = {"rank": rank, "node": node_of[rank],
                               "local_rank": p.get("local_rank")}
        for kind, name, title in _diff_columns(view):
            row[title] = _cell(view, rank, kind, name)
        row.update({
            "slot": _slot(dict(p), model),
            "gpu": model, "cc": cc, "driver": fact_value(facts, "gpu.driver"),
            "torch": fact_value(facts, "pkg.torch.version"),
            "transformer-engine": fact_value(facts, "pkg.transformer-engine.version"),
            "status": _status(p),
        })
        out.append(row)
    return out


def _differences(view: ClusterView) -> list[tuple[str, str]]:
    f = view.facts
    out = [("missing", f["cluster.summary.missing"])] if f.get("cluster.missing_ranks") else []
    if f.get("cluster.error_ranks"):
        out.append(("failed", f["cluster.summary.errors"]))
    if f.get("cluster.shared_gpu"):
        out.append(("shared gpu", f["cluster.summary.shared_gpu"]))
    for kind in DIFF_KINDS:
        for d in f.get(f"cluster.diff.{kind}", []):
            out.append((_KIND_LABEL[kind], f"{d['name']}: " + "; ".join(
                f"{v} on rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}"
                for v, rs in sorted(d["values"].items(), key=lambda kv: kv[1][0]))))
    if f.get("cluster.collectives.status") not in (None, "ok", "skipped"):
        out.append(("collectives", str(f.get("cluster.collectives.error", ""))))
    return out


def _headline(view: ClusterView) -> str:
    f = view.facts
    return (f"{f['cluster.ranks_answered']} of {f['cluster.world_size']} rank(s) answered, "
            f"on {f['cluster.nodes']} node(s)")


def _table_text(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return ["  " + fmt.format(*header).rstrip()] + ["  " + fmt.format(*r).rstrip() for r in body]


def _node_title(node: Any, redact: bool) -> str:
    host = "" if redact else f" ({node.host})"
    return f"{node.label}{host}: rank(s) {', '.join(map(str, node.ranks))}"


def _md(text: str) -> str:
    """What a rank sent, as text in a Markdown cell or line: ``<absent>`` would render as an
    (invisible) HTML tag, and a lying rank's ``[x](javascript:...)`` as a link (issue 21)."""
    from preflight.base.mdescape import md_cell

    return md_cell(text)


def _redactor(redact: bool) -> Callable[[str], str]:
    if not redact:
        return lambda text: text
    from preflight.redact import redact_text

    return redact_text


def render_section(view: ClusterView, fmt: str, *, redact: bool = True) -> str:
    """The cluster section as text or Markdown, redacted (content and host names) by default."""
    clean = _redactor(redact)
    table = rows(view)
    cols = [c for c in (table[0] if table else {}) if c != "node"]
    diffs = _differences(view)
    md = fmt == "markdown"
    lines = ["# fp8-doctor cluster report" if md else "Cluster", "", _headline(view), ""]
    lines.append("## Differences between ranks" if md else "Differences between ranks")
    if not diffs:
        lines.append("None: every rank reports the same packages, GPU, driver, CUDA and env." if md
                     else "  ✓ none: every rank reports the same packages, GPU, driver, CUDA, env")
    for what, text in diffs:
        text = clean(text)
        lines.append(f"- **{what}**: {_md(text)}" if md else f"  ✗ {what:<11} {text}")
    header = [clean(c) for c in cols]
    for node in view.nodes:
        # Redact each cell before _table_text measures it, so the columns stay aligned.
        body = [[clean(str(r[c])) for c in cols] for r in table if r["rank"] in node.ranks]
        title = clean(_node_title(node, redact))
        lines += ["", f"## {_md(title)}" if md else title]
        if md:
            lines.append("| " + " | ".join(_md(c) for c in header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in body]
        else:
            lines += _table_text(header, body)
    return "\n".join(lines) + "\n"


def section_json(view: ClusterView, *, redact: bool = True) -> dict[str, Any]:
    """The ``cluster`` key of the JSON report, every string cell redacted as in the text and
    Markdown tables ($HOME, host names, secret-looking values: env values such as
    NCCL_TOPO_FILE hold paths)."""
    clean = _redactor(redact)
    return {key: _strings(clean, value) for key, value in {
        "nodes": [{"node": n.label, "ranks": list(n.ranks), **({} if redact else {"host": n.host})}
                  for n in view.nodes],
        "differences": [{"kind": k, "text": t} for k, t in _differences(view)],
        "ranks": rows(view),
    }.items()}


def _strings(clean: Callable[[str], str], doc: Any) -> Any:
    if isinstance(doc, str):
        return clean(doc)
    if isinstance(doc, dict):
        return {k: _strings(clean, v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_strings(clean, v) for v in doc]
    return doc

