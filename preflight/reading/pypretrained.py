"""A Hugging Face config loaded from a folder of the job, for :mod:`.pysource` (holdout12,
bionemo-recipes' ESM-2 recipe at 3a9d005b: train_fsdp2.py:74 ``config = NVEsmConfig.
from_pretrained(args.config_name_or_path, dtype=dtype, **args.config_kwargs)`` with
``config_name_or_path: ./model_configs/nvidia/esm2_t6_8M_UR50D``, the job's own folder, whose
``num_hidden_layers`` sizes the per-layer precision list).

``XConfig.from_pretrained(path, **kwargs)`` -- a class whose name ends in ``Config``
(``AutoConfig``, ``LlamaConfig``, a job's ``NVEsmConfig``) -- reads ``path/config.json``, or
``path`` itself when it names a ``.json`` file, then sets each keyword on the config
(transformers v4.57.1, src/transformers/configuration_utils.py ``PretrainedConfig.
from_pretrained`` -> ``get_config_dict`` -> ``from_dict``: ``config = cls(**config_dict)``, then
``setattr(config, key, value)`` for the keywords). In a value the result is that call with the
file's top-level keys then the keywords as its arguments, so ``config.num_hidden_layers`` is the
file's. Only a file inside the job is read (:func:`.refs.locate`: next to the script, else in
the current directory), bounded as every config (:func:`.parse.read_text`); a hub name, a path
not found here or outside the job, a file that is not a JSON object, or a path the text does not
give leave the call as it was (a call record: its attributes not given in this file).
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Any

from preflight.reading.parse import ParseError, parse_json
from preflight.reading.pyfromyaml import read_data
from preflight.reading.pyvalues import Call, Ref
from preflight.reading.refs import locate

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

NOTHING = object()
MAX_KEYS = 512
"""Top-level keys of a config.json taken (a model's has a few dozen)."""


def pretrained(module: Module, node: ast.Call, scope: Scope, depth: int, func: Any) -> Any:
    """The config ``node`` loads (module docstring), or :data:`NOTHING`."""
    if depth == 0 or not isinstance(func, Ref) or not func.name.endswith(".from_pretrained") or \
            not func.name.rsplit(".", 2)[-2].endswith("Config") or \
            any(isinstance(a, ast.Starred) for a in node.args):
        return NOTHING
    first = node.args[0] if node.args else next(
        (k.value for k in node.keywords if k.arg == "pretrained_model_name_or_path"), None)
    where = module.evaluate(first, scope, depth + 1) if first is not None else None
    if not isinstance(where, str) or not where.strip() or "\0" in where:
        return NOTHING
    target = where if where.endswith(".json") else os.path.join(where, "config.json")
    found = locate(target, module.path)
    if found is None:
        return NOTHING
    try:
        data = read_data(module, found, parse_json)
    except (ParseError, OSError):
        return NOTHING
    if not isinstance(data, dict) or len(data) > MAX_KEYS:
        return NOTHING
    kwargs: dict[str, Any] = {k: v for k, v in data.items() if isinstance(k, str)}
    lines = dict.fromkeys(kwargs, node.lineno)
    for kw in node.keywords:
        if kw.arg is None:          # `**mapping`: its keys when the text gives them
            more = module.evaluate(kw.value, scope, depth + 1)
            if not isinstance(more, dict):
                return NOTHING
            kwargs.update(more)
            lines.update(dict.fromkeys(more, kw.value.lineno))
        elif kw.arg != "pretrained_model_name_or_path":
            kwargs[kw.arg] = module.evaluate(kw.value, scope, depth + 1)
            lines[kw.arg] = kw.value.lineno
    return Call(func.name, node.lineno, (where,), kwargs, lines)
