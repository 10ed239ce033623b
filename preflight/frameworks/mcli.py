"""MosaicML ``mcli run -f run.yaml``: a run YAML (``name``, ``image``, ``compute``,
``integrations``, ``command``) whose ``parameters:`` block is the llm-foundry training YAML,
mounted as ``/mnt/config/parameters.yaml`` (mosaicml/llm-foundry ``mcli/*.yaml``).

The run's own keys go to ``config.mcli.*`` (``compute.gpus`` -> ``intent.num_gpus``); the
``parameters:`` block is read by the llm-foundry reader into ``config.llmfoundry.*`` with the
lines of this file, so every llm-foundry rule applies to it (issue 14: it was not read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.frameworks import llmfoundry
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ReaderOutput

KIND = "mcli"
_RUN_KEYS = frozenset({"image", "compute", "integrations", "command", "scheduling", "env_variables",
                       "gpu_num", "gpu_type", "cluster", "run_name"})

_OWN = frozenset({"compute", "integrations", "scheduling", "env_variables", "gpu_num",
                  "gpu_type"})
"""mcli run-config keys (mcli RunConfig) no other launcher's YAML spells so."""


def score(data: Any) -> int:
    """A run YAML: ``parameters`` (a mapping) or ``command`` beside mcli's run keys."""
    top = {str(k) for k in data}
    run = len(top & _RUN_KEYS)
    if not owns(top, _OWN):
        return 0   # `command` and `cluster` or `image` are any launcher's (frameworks/_claim.py)
    if run < 2 or not ({"parameters", "command"} & top):
        return 0
    params = data.get("parameters") or {}
    if not isinstance(params, dict):
        return 0
    return 10 + 4 * run + llmfoundry.score(params)


def read(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    run = {k: v for k, v in data.items() if k != "parameters"}
    facts, prov = flatten(run, parsed, f"config.{KIND}", path)
    params = data.get("parameters")
    if isinstance(params, dict) and params:
        inner = Parsed(params, {k[1:]: v for k, v in parsed.lines.items()
                                if k[:1] == ("parameters",)}, parsed.text)
        out = llmfoundry.read(path, inner)
        facts.update(out.facts)
        prov.update(out.provenance)
        return ReaderOutput(facts, prov, out.problems, out.linked)
    return ReaderOutput(facts, prov)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    m = View(f, KIND, prov)
    out = IntentOut()
    gpus = m.int("compute.gpus") or m.int("gpu_num")
    if gpus:
        out["num_gpus"] = (gpus, m.src("compute.gpus", m.src("gpu_num")))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="MosaicML mcli run YAML", formats=("yaml",), score=score, read=read,
    derive=derive, precedence=11,
    # mcli submits the run; the training node runs llm-foundry with the parameters block
    runs_on=("llmfoundry",), rule_area="MCLI", area_title="MosaicML mcli",
    # mcli parses with PyYAML; the parameters block then goes through OmegaConf (llm-foundry)
    duplicate_keys="error",
)
