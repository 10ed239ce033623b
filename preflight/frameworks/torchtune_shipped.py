"""The settings of the configs torchtune ships, for ``tune run ... --config llama3_1/8B_full``.

A registry config name is read by ``tune run`` from the installed package
(``torchtune/_cli/run.py`` L190-L195 @ bd2a0fc7), so the job folder holds no YAML. The settings
FP8 verdicts need are in ``preflight/data/torchtune_shipped.json`` (``tools/torchtune_shipped.py``,
read at v0.6.1 and bd2a0fc7): a value alike at every ref holding the name, or Unknown naming the
refs where it changed. Loaded on first use only.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from preflight.facts import Unknown

KEYS = ("compile", "dtype", "enable_fp8_training", "fp8_recipe_name", "tensor_parallel_dim",
        "tensor_parallel_plan._component_", "context_parallel_dim", "batch_size",
        "tokenizer.max_seq_len", "dataset.packed", "enable_activation_checkpointing",
        "fsdp_cpu_offload", "model._component_")
"""Every key the torchtune reader's derive and rules read (a key outside these is not known)."""
ABSENT = "<absent>"
_DATA = Path(__file__).resolve().parents[1] / "data" / "torchtune_shipped.json"


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def shipped(name: str) -> tuple[dict[str, Any], str] | None:
    """The nested settings of the shipped config ``name`` (a changed one Unknown) and where
    they come from; None when the name is not in the table."""
    entry = _table().get("configs", {}).get(name)
    if not isinstance(entry, dict):
        return None
    where = (f"torchtune's shipped {name} ({entry['file']}, alike at "
             f"{' and '.join(entry['read_at'])})")
    out: dict[str, Any] = {}
    items = [(k, v) for k, v in entry["values"].items()] + [
        (k, Unknown(f"{k} of torchtune's shipped {name} changed between "
                    f"{' and '.join(entry['read_at'])}: which one runs depends on the "
                    "installed torchtune")) for k in entry["differs"]]
    for key, value in items:
        node = out
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out, where
