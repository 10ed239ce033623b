"""A NeMo 1.x Hydra app in the job (``@hydra_runner(config_path="conf", config_name=...)`` on the
script's ``main(cfg)``): its config composed from the job's YAML, read as a NeMo 1.x model config.

NeMo 1.x training scripts (NVIDIA/NeMo v2.3.0 examples/nlp/language_modeling/tuning/
megatron_gpt_finetuning.py; MLPerf Training v5.1 llama2_70b_lora src/train.py) hand ``cfg`` to
NeMo's model classes, which read ``cfg.model.fp8`` / ``fp8_e4m3`` / ``fp8_hybrid`` /
``transformer_engine`` inside NeMo, so the script's own text says nothing of FP8: the composed
config does. It is composed as Hydra does (:func:`preflight.reading.hydracompose.compose_tree`,
the launch line's overrides applied), then ``${oc.env:...}`` / ``${oc.decode:...}`` are resolved
from the environment the launch lines give the script (:mod:`.nemo_omegaconf`), and the result
is stated as ``config.nemo.*`` facts at the YAML's lines, as a NeMo 1.x YAML named alone is.

Read only where the script imports NeMo (``from nemo...``/``import nemo``) and the composed config
looks like a NeMo 1.x model config (:func:`.nemo.score`): other Hydra apps are the Python
reader's (:mod:`preflight.reading.pyhydra`). A composition that fails states
``config.nemo.compose`` Unknown with why. ``oc.env`` gives text: a whole value that is an
environment variable's bare ``True``/``False``/``1``/``0`` (no ``oc.decode``) is Unknown, since
NeMo tests it for truth and a non-empty string is true.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from preflight.facts import Unknown
from preflight.frameworks.nemo_omegaconf import EnvText, resolve_env
from preflight.reading.hydracompose import Failed, compose_tree
from preflight.reading.parse import ParseError
from preflight.reading.pyhydra import decorator
from preflight.reading.types import ReaderOutput

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

PREFIX = "config.nemo"
PY_HINT = re.compile(r"\bhydra_runner\b|\bhydra\.main\b|@main\b")
_BOOLISH = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
MIN_SCORE = 8
"""How NeMo-like the composed config must be (:func:`.nemo.score`: two NeMo model keys)."""


def read_python(module: Module) -> ReaderOutput:
    """``config.nemo.*`` of the NeMo 1.x Hydra app ``module`` is (empty when it is none)."""
    from preflight.frameworks.nemo import score

    if not _imports_nemo(module):
        return ReaderOutput()
    for scope in module.scopes:
        main = decorator(module, scope)
        if main is None:
            continue
        where = f"{module.path}:{main.line}"
        try:
            tree = compose_tree(module.path, main, module.argv or ())
        except (Failed, ParseError, RecursionError) as exc:
            return _broken(where, getattr(exc, "message", None) or str(exc))
        if score(tree.data) < MIN_SCORE:
            return ReaderOutput()
        tree.data = resolve_env(tree.data, module.environ)
        _bare_env(tree.data)
        facts, prov = tree.facts(PREFIX)
        facts[f"{PREFIX}.app"], prov[f"{PREFIX}.app"] = module.path, where
        return ReaderOutput(facts, prov)
    return ReaderOutput()


def _imports_nemo(module: Module) -> bool:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "nemo":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "nemo"
                                                for a in node.names):
            return True
    return False


def _broken(where: str, reason: str) -> ReaderOutput:
    return ReaderOutput({f"{PREFIX}.compose": Unknown(
        f"the NeMo Hydra config of the app at {where} was not composed here: {reason[:200]}")},
        {f"{PREFIX}.compose": where})


def _bare_env(data: dict[str, Any]) -> None:
    """An ``oc.env`` text that reads as a switch, left undecoded: Unknown (see the docstring)."""
    todo: list[dict[str, Any]] = [data]
    while todo:
        node = todo.pop()
        for key, value in node.items():
            if isinstance(value, dict):
                todo.append(value)
            elif isinstance(value, EnvText) and value.strip().lower() in _BOOLISH:
                node[key] = Unknown(
                    f"{key} is the text {str(value)!r} of an environment variable (${{oc.env}} "
                    "without oc.decode): NeMo tests it for truth, where any non-empty text is "
                    "true")


__all__ = ["PY_HINT", "read_python"]
