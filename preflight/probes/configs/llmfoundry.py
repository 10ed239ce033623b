"""llm-foundry / Composer training YAML: ``${...}`` interpolation resolved, ``fc_type`` normalized.

llm-foundry loads the YAML with OmegaConf, so ``${variables.x}`` (v0.9+) and the older
``${max_seq_len}`` (a top-level key) are resolved before anything reads them; so are they here
(:mod:`.interpolate`, shared with the NeMo reader; bounded, so a reference bomb is a problem).

``model.fc_type`` is a string (``torch`` | ``te``) or, from v0.9, a mapping ``{name: te, <kwargs
for te.Linear>}``. Both give ``config.llmfoundry.model.fc_type = "te"``; the mapping's other keys
go to ``config.llmfoundry.model.fc_type_kwargs.<key>`` and ``config.llmfoundry.model.
fc_type_is_mapping = true`` records the form (rules about the mapping form need it). The
mapping's own ``fc_type.<key>`` facts are not emitted, so there is one name per meaning.
"""

from __future__ import annotations

from preflight.probes.configs._parse import Parsed, flatten
from preflight.probes.configs._types import ReaderOutput
from preflight.probes.configs.interpolate import resolve

PREFIX = "config.llmfoundry"


def read(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    data = resolve(data, parsed.line_of)
    model = data.get("model")
    fc_type = model.get("fc_type") if isinstance(model, dict) else None
    if isinstance(fc_type, dict):
        data = dict(data)
        data["model"] = dict(model)
        del data["model"]["fc_type"]
    facts, prov = flatten(data, parsed, PREFIX, path)
    if isinstance(fc_type, dict):
        line = parsed.line_of(("model", "fc_type"))
        where = f"{path}:{line}" if line else path
        facts[f"{PREFIX}.model.fc_type_is_mapping"] = True
        prov[f"{PREFIX}.model.fc_type_is_mapping"] = where
        if "name" in fc_type:
            facts[f"{PREFIX}.model.fc_type"] = fc_type["name"]
            line = parsed.line_of(("model", "fc_type", "name"))
            prov[f"{PREFIX}.model.fc_type"] = f"{path}:{line}" if line else where
        kwargs = {k: v for k, v in fc_type.items() if k != "name"}
        if kwargs:
            flatten(kwargs, parsed, f"{PREFIX}.model.fc_type_kwargs", path,
                    base=(), facts=facts, prov=prov)
            for k in kwargs:  # lines of the kwargs are under model.fc_type in the file
                line = parsed.line_of(("model", "fc_type", k))
                stem = f"{PREFIX}.model.fc_type_kwargs.{k}"
                for name in [n for n in facts if n == stem or n.startswith(stem + ".")]:
                    prov[name] = f"{path}:{line}" if line else where
    elif fc_type is not None:
        facts[f"{PREFIX}.model.fc_type_is_mapping"] = False
        line = parsed.line_of(("model", "fc_type"))
        prov[f"{PREFIX}.model.fc_type_is_mapping"] = f"{path}:{line}" if line else path
    return ReaderOutput(facts, prov)
