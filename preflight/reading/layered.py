"""A config built in layers, as OmegaConf builds it: base YAML files merged in order, then the
launch line's overrides, then ``${...}`` resolved; every value keeps the ``file:line`` of the
layer that set it.

- :meth:`Layered.merge` is ``OmegaConf.merge``: mappings merge key by key, anything else (lists
  too) replaces. NeMo-RL's ``_override_: true`` in a mapping replaces the base mapping whole
  (``nemo_rl/utils/config.py`` ``merge_with_override``, read at v0.7.0).
- :meth:`Layered.apply` is one Hydra override: set / add / force-add (a mapping value merges into
  a mapping there, as ``OmegaConf.update(merge=True)`` does), delete (the key and all below it).
- :func:`load_chain` follows a YAML's ``defaults:`` the way NeMo-RL's
  ``load_config_with_inheritance`` does (a path or a list of paths, relative to the file's
  folder, parents merged first, depth first, the file itself last), bounded to
  :data:`MAX_CHAIN` files.
- :meth:`Layered.facts` flattens to ``config.<kind>.<path>`` facts (the same limits as
  :func:`preflight.reading.parse.flatten`), an ``Unknown`` leaf staying ``Unknown``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.boundary import outside_reference
from preflight.reading.interpolate import resolve
from preflight.reading.overrides import Override
from preflight.reading.parse import (
    MAX_FACTS_PER_FILE,
    MAX_ITEMS_PER_FILE,
    Parsed,
    ParseError,
    fact_value,
    parse_yaml,
    read_text,
    usable_key,
)
from preflight.reading.types import ConfigProblem, cut_short

Key = tuple[str, ...]
MAX_CHAIN = 16
"""Files one ``defaults:`` chain may hold (NeMo-RL's deepest recipes use 3)."""


@dataclass
class Layered:
    """Nested data and where each key path was set."""

    data: dict[str, Any] = field(default_factory=dict)
    where: dict[Key, str] = field(default_factory=dict)

    def merge(self, data: Any, source: Callable[[Key], str], base: Key = ()) -> None:
        """Merge a parsed mapping over what is here (``source(path)``: its ``file:line``)."""
        if not isinstance(data, dict):
            return
        for key, value in data.items():
            if not usable_key(key) or key == "_override_":
                continue
            path = (*base, str(key))
            if isinstance(value, dict) and value.get("_override_") is True:
                self._drop(path)
            here = self._get(path)
            if isinstance(value, dict) and isinstance(here, dict):
                if value:                # an empty mapping merges nothing (OmegaConf.merge)
                    self.where.setdefault(path, source(path))
                    self.merge(value, source, path)
            else:
                self._set(path, _plain(value), source(path), source)

    def apply(self, ov: Override, source: str) -> None:
        """One override from the launch line (``source``: its ``file:line``)."""
        if ov.op == "delete":
            if isinstance(ov.value, Unknown):
                self._set(ov.path, ov.value, source)
            else:
                self._drop(ov.path)
            return
        here = self._get(ov.path)
        if isinstance(ov.value, dict) and isinstance(here, dict) and ov.value:
            self.merge(ov.value, lambda _p: source, ov.path)
        else:
            self._set(ov.path, ov.value, source)

    def get(self, path: Key) -> Any:
        return self._get(path)

    def has(self, path: Key) -> bool:
        """Whether ``path`` is set (to anything, ``None`` included)."""
        return self._find(path)[0]

    def _get(self, path: Key) -> Any:
        return self._find(path)[1]

    def _find(self, path: Key) -> tuple[bool, Any]:
        node: Any = self.data
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return False, None
            node = node[part]
        return True, node

    def _set(self, path: Key, value: Any, source: str,
             child_source: Callable[[Key], str] | None = None) -> None:
        self._drop(path)
        node = self.data
        for n, part in enumerate(path[:-1]):
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
                self.where.setdefault(path[:n + 1], source)
            node = nxt
        node[path[-1]] = value
        self.where[path] = source
        if isinstance(value, dict):
            self._mark(value, path, child_source or (lambda _p: source))

    def _mark(self, value: dict[str, Any], base: Key, source: Callable[[Key], str]) -> None:
        todo = [(value, base)]
        while todo:
            node, at = todo.pop()
            for k, v in node.items():
                key = (*at, str(k))
                self.where[key] = source(key)
                if isinstance(v, dict):
                    todo.append((v, key))

    def _drop(self, path: Key) -> None:
        parent = self._get(path[:-1]) if len(path) > 1 else self.data
        old = parent.pop(path[-1], None) if isinstance(parent, dict) else None
        self.where.pop(path, None)
        if isinstance(old, dict) and old:
            # a mapping: forget where its keys were set (only then is `where` walked, so
            # 10,000 overrides of plain keys stay linear)
            n = len(path)
            for key in [k for k in self.where if k[:n] == path]:
                del self.where[key]

    def resolve(self) -> None:
        """Resolve ``${...}`` over the merged config (raises ParseError when it explodes)."""
        self.data = resolve(self.data, lambda p: None)

    def facts(self, prefix: str) -> tuple[dict[str, Any], dict[str, str]]:
        facts: dict[str, Any] = {}
        prov: dict[str, str] = {}
        budget = [MAX_ITEMS_PER_FILE]
        todo: list[tuple[Any, Key]] = [(self.data, ())]
        while todo:
            node, path = todo.pop()
            if isinstance(node, dict) and (node or not path):
                for key, value in reversed(list(node.items())):
                    if usable_key(key):
                        todo.append((value, (*path, str(key))))
                continue
            if not path:
                continue
            name = prefix + "." + ".".join(path)
            if len(facts) >= MAX_FACTS_PER_FILE:
                cut_short(facts, prov, name, self._where(path))
                break
            facts[name] = node if isinstance(node, Unknown) else fact_value(node, budget)
            prov[name] = self._where(path)
        return facts, prov

    def _where(self, path: Key) -> str:
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return ""


def _plain(value: Any) -> Any:
    """A parsed value with the ``_override_`` markers dropped."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "_override_"}
    return value


@dataclass
class Chain:
    """A YAML and its ``defaults:`` parents, merged."""

    config: Layered
    files: list[str]                      # the parents, in the order they were read
    problems: list[ConfigProblem]
    packaged: list[str] = field(default_factory=list)   # Hydra defaults not in the job
    unread: list[str] = field(default_factory=list)     # why a parent was not read (missing...)
    unread_paths: list[str] = field(default_factory=list)
    """Where each parent not found here (or outside the job) would be: a framework may know the
    file it names as one it ships (NeMo-RL's ``examples/configs/grpo_math_1B.yaml``)."""

    def facts(self, prefix: str, where: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The merged config's facts under ``prefix``, ``${...}`` resolved. A parent not read
        makes ``<prefix>.base_config`` Unknown at ``where``: what it would set is not known, so
        derive leaves it undetermined (overridelaunch.base_unread), never answers it from the
        framework's defaults."""
        self.config.resolve()
        facts, prov = self.config.facts(prefix)
        if self.unread:
            facts[f"{prefix}.base_config"] = Unknown(
                f"{self.unread[0]}, so the settings it holds are not known")
            prov[f"{prefix}.base_config"] = where
        return facts, prov


def source_of(path: str, parsed: Parsed) -> Callable[[Key], str]:
    return lambda key: Source(path, parsed.line_of(key))


def load_chain(path: str, parsed: Parsed, style: str = "paths") -> Chain:
    """``path`` (already parsed) over its ``defaults:`` parents.

    ``paths``: each entry is a file path relative to the naming file's folder (NeMo-RL
    ``load_config_with_inheritance``). ``hydra``: each plain entry names ``<entry>.yaml`` in the
    same config folder (a Hydra defaults list; ``_self_``, ``override ...`` and group entries
    are framework-packaged configs, listed in :attr:`Chain.packaged`, not read); entries after
    ``_self_`` override the file's own values. ``hydra-dir``: Hydra searching only the config's
    folder (AReaL's ``hydra_init(config_path=<its folder>)``, areal/api/cli_args.py
    ``parse_cli_args`` @ 0073c330): an entry not found there, or a group entry, is not read,
    so what it would set is unknown (redteam5: a missing one made FP8 "no"). ``toml`` /
    ``flat``: no chain (``defaults`` is a key like any other in ``flat``: prime-rl's YAML)."""
    chain = Chain(Layered(), [], [])
    _load(path, parsed, chain, 0, {os.path.realpath(path)}, style)
    return chain


def _entries(defaults: Any, style: str, chain: Chain) -> list[tuple[str, bool]]:
    """``(file, after _self_)`` of each plain entry: with Hydra, entries listed after
    ``_self_`` override the file's own values (its default place is last)."""
    items = [defaults] if isinstance(defaults, str) else \
        defaults if isinstance(defaults, list) else []
    out = []
    after = False
    for item in items:
        if isinstance(item, str) and item.strip() and item != "_self_":
            out.append((item if style == "paths" or item.endswith((".yaml", ".yml"))
                        else item + ".yaml", after and style != "paths"))
        elif item == "_self_":
            after = True
        elif style == "hydra-dir" and not str(item).lstrip("{'\" ").startswith(
                ("hydra", "override hydra")):
            # a config group entry (`actor: x` = actor/x.yaml, placed under its package) of a
            # job whose Hydra searches only its config folder: not read here (redteam5)
            chain.unread.append(f"defaults: the config group entry {str(item)[:80]} was not "
                                "read")
        else:
            chain.packaged.append(str(item)[:80])
    return out


def _load(path: str, parsed: Parsed, chain: Chain, depth: int, seen: set[str],
          style: str) -> None:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    if parsed.data is not None and not isinstance(parsed.data, dict):
        # a list or a scalar at the top (`[1, 2]`, `hello`): no framework takes it as its
        # config (OmegaConf, pydantic, Hydra refuse it); read as empty it was every default,
        # FP8 "no" (redteam11: `uv run rl @ x.json` holding a JSON list)
        what = type(parsed.data).__name__
        chain.problems.append(ConfigProblem(path, 1, (
            f"the file's top level is a {what}, not a mapping of settings: the framework "
            "refuses it as a config")))
        chain.unread.append(f"{os.path.basename(path)} holds a {what}, not a mapping")
    # a TOML job file (torchtitan), or a YAML / JSON a loader without `defaults:` reads
    # ("flat": prime-rl's pydantic-config; redteam11: its `defaults: [f.yaml]` was followed)
    flat = style in ("toml", "flat")
    parents = _entries(data.get("defaults"), style, chain) if not flat else []
    line = parsed.line_of(("defaults",))
    rest = {k: v for k, v in data.items() if k != "defaults" or style == "flat"}
    ordered = [p for p in parents if not p[1]] + [("", False)] + [p for p in parents if p[1]]
    for parent, _ in ordered:
        if not parent:          # the file's own values, in _self_'s place
            chain.config.merge(rest, source_of(path, parsed))
            continue
        target = parent if os.path.isabs(parent) else \
            os.path.join(os.path.dirname(path), parent)
        target = os.path.normpath(target)
        if style == "hydra-dir" and os.path.isabs(parent):
            target = os.path.normpath(os.path.join(os.path.dirname(path), parent.lstrip("/")))
        if style == "hydra" and not os.path.isfile(target):
            chain.packaged.append(parent.removesuffix(".yaml"))
            continue
        real = os.path.realpath(target)
        if real in seen:
            chain.problems.append(ConfigProblem(path, line, (
                f"defaults: {parent!r} names a file already in this chain (a cycle); " + (
                    "NeMo-RL would recurse until Python stops it" if style == "paths" else
                    "composing it never ends"))))      # (a verl chain's said NeMo-RL: redteam2)
            continue
        if len(chain.files) + 1 >= MAX_CHAIN or depth >= MAX_CHAIN:
            chain.problems.append(ConfigProblem(path, line, (
                f"defaults: chain longer than {MAX_CHAIN} files; the rest was not read")))
            return
        # a FIFO, a device or a folder exists: read_text says what it is (red team: a FIFO was
        # "does not exist here")
        if not os.path.lexists(target):
            chain.problems.append(ConfigProblem(
                path, line, f"defaults: names {parent!r}, which does not exist here (looked "
                f"in {os.path.dirname(path) or '.'}); its settings were not read, so rules "
                "that need them stay undetermined", level="warning", code="reference",
                fix=("NeMo-RL opens a defaults file relative to the folder of the file that "
                     "names it" if style == "paths" else "Hydra looks for it in the config's "
                     "folder") + "; check the path, or run fp8-doctor where the job's configs "
                    "are."))
            chain.unread.append(f"defaults: {parent[:80]!r} (named in "
                                f"{os.path.basename(path)}) was not found here")
            chain.unread_paths.append(target)
            continue
        if outside_reference(target, path, line, "defaults: names"):
            # a parent outside the job (issue 21: never read) is the warning FP8D-CFG-OUTSIDE at
            # this line, recorded on the boundary for the job reader; what it would set stays
            # undetermined (Chain.unread), what this file states is read on
            chain.unread.append(f"defaults: {parent[:80]!r} (named in "
                                f"{os.path.basename(path)}) lies outside the job and was not "
                                "read")
            chain.unread_paths.append(target)
            continue
        try:
            parent_parsed = parse_yaml(read_text(target))
        except ParseError as exc:
            chain.problems.append(ConfigProblem(target, exc.line, exc.message))
            chain.unread.append(f"defaults: {parent[:80]!r} could not be read")
            continue
        chain.files.append(target)
        _load(target, parent_parsed, chain, depth + 1, seen | {real}, style)
