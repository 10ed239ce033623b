"""The config a Hydra entry script's function receives (issue 22: reading the job as it is written).

``@hydra.main(config_path="hydra_config", config_name="L0_sanity", version_base="1.2")`` on
``def main(args)`` (NVIDIA/bionemo-framework bionemo-recipes/recipes/esm2_native_te/train_fsdp2.py
l.46 @ 3a9d005b) makes ``args`` the config Hydra composes from the launch line
(``python train_fsdp2.py --config-name L0_sanity fp8_config.enabled=true``), composed by
:mod:`.hydracompose` as Hydra 1.3.2 does it, and bound here as the value of that parameter
(:func:`.pycallers.parameter`): ``args.fp8_config.enabled`` is the composed value (a key the
config lacks is Unresolved: a struct DictConfig raises), ``hydra.utils.get_class("x.Y")`` is
``x.Y`` and ``hydra.utils.instantiate`` of a ``_target_`` mapping that call (:func:`util`), so
``get_class(args.fp8_config.fp8_recipe)(...)`` is the TE recipe the YAML names. Without a launch
line that runs the script, or where the composition fails, the parameter is Unresolved with why.
NeMo 1.x's ``@hydra_runner`` (nemo/core/config/hydra_runner.py) binds the same way.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preflight.facts import Unknown
from preflight.reading.hydracompose import Failed, compose
from preflight.reading.pyvalues import Call, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAINS = ("hydra.main", "nemo.core.config.hydra_runner", "nemo.core.config.hydra_runner.hydra_runner",
         "nemo.core.hydra_runner")
"""Decorators whose function receives a composed Hydra config as its first parameter."""


def decorator(module: Module, scope: Scope) -> Call | None:
    """The ``@hydra.main(...)`` / ``@hydra_runner(...)`` call on ``scope``'s function."""
    node = scope.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for dec in node.decorator_list[:8]:
        if isinstance(dec, ast.Call):
            value = module.evaluate(dec, module.module, 1)
            if isinstance(value, Call) and value.func in MAINS:
                return value
    return None


NOT_HYDRA = object()
"""What :func:`received` gives for a function that is no Hydra entry point."""


def received(module: Module, scope: Scope) -> Any:
    """The first parameter of ``scope``'s function when a Hydra decorator gives it (worked out
    once per function), else :data:`NOT_HYDRA`."""
    cache: dict[int, Any] = module.__dict__.setdefault("_hydra", {})
    key = id(scope.node)
    if key not in cache:
        cache[key] = Unresolved("the Hydra config depends on itself")
        main = decorator(module, scope)
        cache[key] = NOT_HYDRA if main is None else config(module, scope, main)
    return cache[key]


def config(module: Module, scope: Scope, main: Call) -> Any:
    """The config ``main``'s function receives (its first parameter), nested dicts of plain
    values, Unresolved where the text does not give it."""
    line = main.line
    if module.argv is None:
        return Unresolved("the config Hydra composes from the command line (@hydra.main at line "
                          f"{line}); no launch line that runs this script was read", line)
    try:
        return _values(compose(module.path, main, module.argv))
    except Failed as exc:
        return Unresolved(f"the Hydra config (@hydra.main at line {line}) is not known: {exc}",
                          line)


def _values(data: Any) -> Any:
    """Layered data as :mod:`.pysource` values: ``???`` and Unknown leaves Unresolved."""
    if isinstance(data, dict):
        return DictConfig({str(k): _values(v) for k, v in data.items()})
    if isinstance(data, list):
        return [_values(v) for v in data]
    if isinstance(data, Unknown):
        return Unresolved(data.reason)
    if data == "???":
        return Unresolved("`???` in the Hydra config: a mandatory value nothing gives (the "
                          "script stops with MissingMandatoryValue when it reads it)")
    if isinstance(data, str) and "${" in data:
        # interpolate.resolve leaves what it cannot resolve as written (a cycle, a chain past its
        # depth, ${oc.env:...}, a custom resolver); the raw text is truthy and would decide an `if`
        return Unresolved(f"{data[:60]!r} in the Hydra config: an interpolation the text does not "
                          "resolve (a cycle, an environment variable or a resolver run at start)")
    return data


UTILS = frozenset({"hydra.utils.get_class", "hydra.utils.get_method", "hydra.utils.get_object",
                   "hydra.utils.instantiate", "hydra.utils.call",
                   "omegaconf.OmegaConf.to_container", "omegaconf.OmegaConf.to_object"})
"""hydra/utils.py (v1.3.2): a dotted name to the object it names; ``instantiate`` / ``call`` of a
config with ``_target_`` to that call (its keys the keywords, nested targets built too);
``OmegaConf.to_container(cfg)``: the same keys and values as a plain dict."""
_SPECIAL = ("_target_", "_recursive_", "_convert_", "_args_")


def util(module: Module, node: ast.Call, scope: Scope, depth: int, func: str) -> Any:
    """The value of a call of one of :data:`UTILS` (``node``), Unresolved where not known."""
    from preflight.reading.pyvalues import Ref

    if not node.args:
        return Unresolved(f"{func}() with no config", node.lineno)
    first = module.evaluate(node.args[0], scope, depth + 1)
    if func.startswith("omegaconf."):
        return _plain(first) if isinstance(first, DictConfig) else first if isinstance(
            first, Unresolved) else Unresolved(f"{func}() of a value the text does not give",
                                               node.lineno)
    if func.endswith(("get_class", "get_method", "get_object")):
        if isinstance(first, str) and re.fullmatch(r"[A-Za-z_][\w.]*", first):
            return Ref(first)
        return first if isinstance(first, Unresolved) else \
            Unresolved(f"{func}() of a name the text does not give", node.lineno)
    extra = {kw.arg: module.evaluate(kw.value, scope, depth + 1)
             for kw in node.keywords[:64] if kw.arg is not None}
    if any(kw.arg is None for kw in node.keywords) or len(node.args) > 1:
        return Unresolved(f"{func}() with arguments the text does not give", node.lineno)
    return _target({**first, **extra} if isinstance(first, dict) else first, node.lineno, 0)


def _target(value: Any, line: int, depth: int) -> Any:
    if not isinstance(value, dict):
        return value if isinstance(value, Unresolved) or depth else \
            Unresolved("instantiate() of a config that is no mapping with _target_", line)
    target = value.get("_target_")
    if target is None and depth:
        return {k: _target(v, line, depth + 1) for k, v in value.items()}
    if not isinstance(target, str):
        return target if isinstance(target, Unresolved) else \
            Unresolved("instantiate() of a config whose _target_ the text does not give", line)
    if value.get("_partial_") is True or depth > 8:
        return Unresolved(f"a partial or deeply nested {target} built when the script runs",
                          line)
    kwargs = {k: _target(v, line, depth + 1) for k, v in value.items()
              if k not in _SPECIAL and k != "_partial_"}
    return Call(target, line, (), kwargs, {k: line for k in kwargs})


class DictConfig(dict[str, Any]):
    """A mapping of a composed config: its keys are also its attributes (OmegaConf)."""


@dataclass(frozen=True)
class Get(Unresolved):
    """``cfg.get`` of a composed config: unknown as a value, ``cfg.get(key, default)`` when
    called (OmegaConf ``DictConfig.get``: the key's value, else the default, else None)."""

    config: DictConfig | None = field(default=None, compare=False, repr=False)


def get(module: Module, node: ast.Call, scope: Scope, depth: int, method: Get) -> Any:
    """The value of ``cfg.get(key[, default])`` (``node``)."""
    args = [module.evaluate(a, scope, depth + 1) for a in node.args[:3]]
    if not args or len(args) > 2 or node.keywords or not isinstance(args[0], str):
        return args[0] if args and isinstance(args[0], Unresolved) else \
            Unresolved("cfg.get() of a key the text does not give", node.lineno)
    assert method.config is not None
    return method.config[args[0]] if args[0] in method.config else \
        args[1] if len(args) == 2 else None


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


def member(base: dict[str, Any], attr: str, line: int) -> Any:
    """``cfg.attr`` of a composed config (a DictConfig in struct mode: a missing key raises);
    a plain dict has no attributes that are its keys."""
    if attr == "get" and not isinstance(base, DictConfig):    # a dict's get: the same call
        return Get(".get of a mapping", line, base)         # type: ignore[arg-type]
    if not isinstance(base, DictConfig):
        return Unresolved(f".{attr} of a value computed when the script runs", line)
    if attr == "get" and attr not in base:
        return Get(".get of a Hydra config", line, base)
    if attr in base:
        return base[attr]
    return Unresolved(f"{attr} is not a key of the Hydra config (the script stops with "
                      "ConfigAttributeError there), or a DictConfig method", line)


__all__ = ["MAINS", "NOT_HYDRA", "DictConfig", "Get", "get", "config", "decorator", "member", "received",
           "util"]
