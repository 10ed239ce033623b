"""Hydra's config composition (issue 22: reading the job as it is written), for :mod:`.pyhydra`.

``@hydra.main(config_path="hydra_config", config_name="L0_sanity", version_base="1.2")`` on
``def main(args)`` (NVIDIA/bionemo-framework bionemo-recipes/recipes/esm2_native_te/train_fsdp2.py
l.46 @ 3a9d005b) makes ``args`` the config Hydra composes from the launch line
(``python train_fsdp2.py --config-name L0_sanity fp8_config.enabled=true``). It is composed here
as Hydra does it (facebookresearch/hydra v1.3.2, 7ef3acab), without running anything:

- ``hydra/main.py`` l.60-77: ``config_path`` not given is None with ``version_base`` >= 1.2 (or
  None: the running Hydra's), else ``"."``; ``hydra/_internal/utils.py``
  ``compute_search_path_dir`` l.118-137: a relative ``config_path`` is taken from the folder of
  the file that declares ``@hydra.main``; ``get_args_parser``: ``--config-path/-cp`` (relative to
  that file as well), ``--config-name/-cn``, the other flags, then the overrides. An absolute or
  ``pkg://`` path, ``--config-dir``, ``--multirun`` / sweeps, ``--experimental-rerun``, or a path
  that leaves the job: the config is Unresolved with why (never read outside the job);
- ``hydra/_internal/defaults_list.py``: the primary config's ``defaults:`` list, each config's
  own (a config without ``_self_`` gets it appended last, l.241-252), ``name`` (a config of the
  parent's group; ``/name`` from the top), ``group: option`` (``group/option.yaml`` placed under
  ``group``, its default ``_group_`` package), ``optional``, ``group: null``,
  ``override group: option``, a ``# @package _global_`` header; an override ``group=option``
  whose group is a folder of the config dir picks the option, ``+group=option`` appends it,
  ``~group`` drops it (``Overrides`` there: ``repo.group_exists``);
- then the value overrides (``a.b=c`` must exist, ``+a.b=c`` must not, ``++a.b=c``, ``~a.b``),
  as :meth:`.layered.Layered.apply`; ``${a.b}`` as :mod:`.interpolate` resolves it; ``???``
  (OmegaConf MISSING) is Unresolved: the script stops if it reads it.

A cycle, a group option not found, a config not found or not readable (non-UTF-8, too large),
more than :data:`MAX_CONFIGS` configs or :data:`MAX_OVERRIDES` overrides: Unresolved naming the
file. NeMo 1.x's ``@hydra_runner(config_path=..., config_name=...)``
(nemo/core/config/hydra_runner.py) composes the same way; without ``config_path`` it is
Unresolved (its default is ``"."`` in some releases, None in others).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from preflight.reading.boundary import outside_reference
from preflight.reading.interpolate import resolve
from preflight.reading.layered import Layered
from preflight.reading.overrides import OverrideError, parse_hydra
from preflight.reading.parse import ParseError, parse_yaml, read_text
from preflight.reading.pyvalues import Call

MAX_CONFIGS = 32
"""Configs one composition reads (primary, defaults, their defaults)."""
MAX_OVERRIDES = 256
"""Overrides on one launch line applied; past it the config is Unresolved."""
_FLAGS_WITH_VALUE = {"--config-path": "path", "-cp": "path", "--config-name": "name",
                     "-cn": "name", "--config-dir": "dir", "-cd": "dir", "--package": "",
                     "-p": "", "--cfg": "", "-c": "", "--experimental-rerun": "rerun",
                     "--shell-completion": "", "-sc": "", "--info": "", "-i": ""}
_STOPS = ("--help", "-h", "--hydra-help", "--version", "--cfg", "-c", "--info", "-i",
          "--shell-completion", "-sc")
_PACKAGE = re.compile(r"^\s*#\s*@package\s+(\S+)", re.M)


class Failed(Exception):
    """Why the config cannot be composed here."""


def compose(script: str, main: Call, argv: tuple[str, ...]) -> Any:
    """The config ``main``'s function receives, ``${a.b}`` resolved (raises :class:`Failed`)."""
    tree = compose_tree(script, main, argv)
    try:
        return resolve(tree.data)
    except (ParseError, RecursionError) as exc:
        raise Failed(str(exc)) from None


def compose_tree(script: str, main: Call, argv: tuple[str, ...]) -> Layered:
    """The composed config with each key's ``file:line``, ``${...}`` not yet resolved (NeMo 1.x
    apps: frameworks/nemo_hydra.py resolves ``${oc.env:...}`` from the launch environment)."""
    hydra = main.func == "hydra.main"
    path: Any = main.kwargs.get("config_path", main.args[0] if main.args else _UNSET)
    name: Any = main.kwargs.get("config_name", main.args[1] if len(main.args) > 1 else None)
    if path is _UNSET and not hydra:
        # NeMo's hydra_runner defaults it to "." in some releases and None in others
        raise Failed("@hydra_runner gives no config_path (its default differs between NeMo "
                     "releases)")
    if path is _UNSET:
        base = main.kwargs.get("version_base", _UNSET)
        path = None if base is None or (isinstance(base, str) and _at_least(base)) else "."
    cli_path, cli_name, overrides = _argv(argv)
    path = cli_path if cli_path is not None else path
    name = cli_name if cli_name is not None else name
    for what, value in (("config_path", path), ("config_name", name)):
        if value is not None and not isinstance(value, str):
            raise Failed(f"{what} is not given in the text ({getattr(value, 'reason', value)})")
    if path is None:
        raise Failed("config_path is None, so Hydra searches no folder of the job for "
                     f"{name!r}" if name else "no config_name and no config_path")
    if os.path.isabs(path) or path.startswith(("pkg://", "file://")):
        raise Failed(f"config_path {path!r} is not a folder of the job (absolute or a package)")
    folder = os.path.normpath(os.path.join(os.path.dirname(script), path))
    if outside_reference(folder, script, main.line, "@hydra.main config_path names"):
        raise Failed(f"config_path {path!r} lies outside the job and was not read")
    if not os.path.isdir(folder):
        raise Failed(f"config_path {path!r} is no folder here ({folder})")
    groups, values = _split(folder, overrides)
    tree = Layered()
    if name is not None:
        _Composer(folder, tree, groups).primary(name)
    elif groups.adds:
        raise Failed("no config_name: only the overrides build the config")
    unused = sorted(set(groups.choice) - groups.used)
    if unused:
        raise Failed(f"override of group {unused[0]!r}: no such group in the defaults list "
                     "(Hydra refuses it; `+` appends one)")
    for ov, raw in values:
        if ov.op == "set" and not tree.has(ov.path):
            raise Failed(f"override {raw!r}: key not in the config (Hydra refuses it; "
                         "`+` adds a key)")
        if ov.op == "delete" and not tree.has(ov.path):
            raise Failed(f"override {raw!r}: no such key to delete (Hydra refuses it)")
        if ov.op == "add" and tree.has(ov.path):
            raise Failed(f"override {raw!r}: the key is already set (Hydra refuses `+` "
                         "there; `++` forces it)")
        tree.apply(ov, raw)
    tree.data.pop("hydra", None)     # Hydra's own settings: not in the config the task gets
    return tree


_UNSET = object()


def _at_least(base: str) -> bool:
    """``version_base`` is 1.2 or later. Compared as digit strings (length, then text, leading
    zeros off): ``int()`` refuses more than 4,300 digits, and a ``version_base`` of 5,000 digits
    ended the whole launch script's reading with a ValueError (redteam15)."""
    parts = [p.lstrip("0") or "0" for p in re.findall(r"[0-9]+", base)[:2]]
    return len(parts) == 2 and tuple((len(p), p) for p in parts) >= ((1, "1"), (1, "2"))


def _argv(argv: tuple[str, ...]) -> tuple[str | None, str | None, list[str]]:
    """Hydra's own flags and the overrides of the launch line (argparse: the last one wins)."""
    path = name = None
    overrides: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        flag, eq, inline = word.partition("=")
        if word in _STOPS or flag in _STOPS:
            raise Failed(f"{word} makes Hydra print instead of running the training function")
        if word in ("--multirun", "-m"):
            raise Failed("--multirun runs the function once per combination of the sweep")
        if flag in _FLAGS_WITH_VALUE:
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            i += 1 if eq else 2
            kind = _FLAGS_WITH_VALUE[flag]
            if value is None or "$" in value:
                raise Failed(f"{flag} is given no value the text shows")
            if kind == "path":
                path = value
            elif kind == "name":
                name = value
            elif kind in ("dir", "rerun"):
                raise Failed(f"{flag} {value} adds configs this reader does not follow")
            continue
        if word.startswith("-") and not word.startswith("~"):
            raise Failed(f"{word!r} is no Hydra flag (Hydra's parser stops the run)")
        overrides.append(word)
        i += 1
    if len(overrides) > MAX_OVERRIDES:
        raise Failed(f"more than {MAX_OVERRIDES} overrides on the launch line (not read)")
    return path, name, overrides


class _Groups:
    def __init__(self) -> None:
        self.choice: dict[str, Any] = {}      # group -> option (None: dropped)
        self.adds: list[tuple[str, str]] = []
        self.used: set[str] = set()


def _split(folder: str, overrides: list[str]) -> tuple[_Groups, list[Any]]:
    """Group overrides (the key names a folder of the config dir) apart from value ones."""
    groups = _Groups()
    values: list[Any] = []
    for raw in overrides:
        if "$" in raw:
            raise Failed(f"override {raw!r} holds a value only the run knows")
        try:
            ov = parse_hydra(raw)
        except OverrideError as exc:
            raise Failed(f"override {raw[:80]!r}: {exc}") from None
        key = "/".join(ov.path)
        if "@" in key:
            raise Failed(f"override {raw[:80]!r} moves a package (not followed)")
        if ov.path and os.path.isdir(os.path.join(folder, *ov.path)):
            if isinstance(ov.value, (list, dict)):
                raise Failed(f"override {raw[:80]!r} picks several options (a sweep)")
            if ov.op == "delete":
                groups.choice[key] = None
            elif ov.op == "add":
                groups.adds.append((key, str(ov.value)))
            else:
                groups.choice[key] = None if ov.value is None else str(ov.value)
            continue
        if isinstance(ov.value, str) and "," in ov.value and ov.raw.count("=") == 1 and \
                not ov.raw.split("=", 1)[1].startswith(("'", '"', "[", "{")):
            raise Failed(f"override {raw[:80]!r} is a sweep (several runs)")
        values.append((ov, raw))
    return groups, values


class _Composer:
    """One defaults tree, merged depth first into ``tree``."""

    def __init__(self, folder: str, tree: Layered, groups: _Groups) -> None:
        self.folder, self.tree, self.groups = folder, tree, groups
        self.read = 0

    def primary(self, name: str) -> None:
        name = name.removesuffix(".yaml")      # a primary config's group is its folder
        self._config(name, (), name.rpartition("/")[0], (), primary=True)

    def _config(self, rel: str, package: tuple[str, ...], group: str, stack: tuple[str, ...],
                primary: bool = False, optional: bool = False) -> None:
        if rel in stack:
            raise Failed(f"the defaults lists form a cycle ({' -> '.join((*stack, rel))})")
        self.read += 1
        if self.read > MAX_CONFIGS:
            raise Failed(f"more than {MAX_CONFIGS} configs in the defaults lists")
        path = os.path.normpath(os.path.join(self.folder, rel + ".yaml"))
        if not path.startswith(self.folder.rstrip(os.sep) + os.sep):
            # a name with `..` or `/` at its top: Hydra's repository looks only in its folder
            raise Failed(f"{rel[:80]!r} names a config outside the config folder")
        if not os.path.lexists(path):
            if optional:
                return
            raise Failed(f"{rel}.yaml is not in the config folder {self.folder}")
        if outside_reference(path, self.folder, None, "a Hydra defaults list names"):
            raise Failed(f"{rel}.yaml lies outside the job and was not read")
        try:
            text = read_text(path)
            parsed = parse_yaml(text)
        except ParseError as exc:
            raise Failed(f"{rel}.yaml: {exc.message}") from None
        if parsed.data is not None and not isinstance(parsed.data, dict):
            raise Failed(f"{rel}.yaml is no mapping (Hydra refuses it)")
        data = parsed.data if isinstance(parsed.data, dict) else {}
        header = _PACKAGE.search(text[:4096])
        if header is not None:
            package = _header(header.group(1), package, group)
        own = {k: v for k, v in data.items() if k != "defaults"}
        entries = data.get("defaults", [])
        if not isinstance(entries, list):
            raise Failed(f"{rel}.yaml: defaults is not a list")
        if primary:
            entries = [*entries, *({f"+{g}": o} for g, o in self.groups.adds)]
        if "_self_" not in entries:
            entries = [*entries, "_self_"]
        if len(entries) > MAX_CONFIGS + 1:
            raise Failed(f"{rel}.yaml: a defaults list of more than {MAX_CONFIGS} entries")
        for entry in entries:
            if entry == "_self_":
                self.tree.merge(own, _source(path, parsed, len(package)), package)
                continue
            self._entry(entry, rel, package, group, (*stack, rel))

    def _entry(self, entry: Any, rel: str, package: tuple[str, ...], group: str,
               stack: tuple[str, ...]) -> None:
        if isinstance(entry, str):
            target = entry.lstrip("/") if entry.startswith("/") else \
                "/".join(p for p in (group, entry) if p)
            sub = target.rpartition("/")[0]
            self._config(target, (*package, *_dots(sub[len(group):].strip("/"))), sub, stack)
            return
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise Failed(f"{rel}.yaml: a defaults entry {str(entry)[:60]!r} Hydra does not take")
        key, option = next(iter(entry.items()))
        words = str(key).split()
        optional = "optional" in words[:-1]
        if "override" in words[:-1]:
            return       # an override of a default above it: the primary's choices decide
        name = words[-1] if words else ""
        added = name.startswith("+")        # appended by `+group=option`: no choice replaces it
        name = name.lstrip("+")
        if optional and not added and self._no_group(name.partition("@")[0], group):
            # hydra/_internal/defaults_list.py (v1.3.2) skips an optional entry whose config is
            # not found; with no folder of that group in the config dir none can be, whatever
            # its package or its (interpolated, e.g. ${oc.env:...}) option
            return
        if "@" in name or name.startswith(("hydra", "/hydra")):
            if name.startswith(("hydra", "/hydra")):
                return   # Hydra's own settings (hydra/job_logging ...): no job values
            raise Failed(f"{rel}.yaml: the package of {name!r} is moved (not followed)")
        full = name.lstrip("/") if name.startswith("/") else \
            "/".join(p for p in (group, name) if p)
        if full in self.groups.choice and not added:
            self.groups.used.add(full)
            option = self.groups.choice[full]
        if option is None:
            return
        if not isinstance(option, str) or "$" in option:
            raise Failed(f"{rel}.yaml: the option of group {full!r} is not one name")
        where = (*package, *_dots(name.lstrip("/")))
        if name.startswith("/"):
            where = _dots(full)
        self._config(f"{full}/{option}", where, full, stack, optional=optional)


    def _no_group(self, name: str, group: str) -> bool:
        """No folder of group ``name`` (as a defaults entry of ``group`` names it) in the config
        dir, and no command-line choice of it; a name leaving the dir is not asked here."""
        full = name.lstrip("/") if name.startswith("/") else "/".join(p for p in (group, name) if p)
        folder = os.path.normpath(os.path.join(self.folder, full))
        if not folder.startswith(self.folder.rstrip(os.sep) + os.sep) or "$" in full:
            return False
        return full not in self.groups.choice and not os.path.lexists(folder)


def _source(path: str, parsed: Any, skip: int) -> Callable[[tuple[str, ...]], str]:
    """``file:line`` of a key of ``path`` merged under a package ``skip`` keys deep."""
    return lambda key: f"{path}:{parsed.line_of(key[skip:]) or 1}"


def _dots(group: str) -> tuple[str, ...]:
    return tuple(p for p in group.split("/") if p)


def _header(value: str, package: tuple[str, ...], group: str) -> tuple[str, ...]:
    if value == "_global_":
        return ()
    if value == "_group_":
        return _dots(group)
    raise Failed(f"a `# @package {value[:40]}` header (not followed)")


def compose_file(path: str) -> Layered:
    """A primary config file composed over its ``defaults:`` list, its folder the config dir
    (a FlagScale experiment config run as ``run.py --config-path <its folder> --config-name
    <its name>``): the merged tree with each key's ``file:line``, ``${...}`` not yet resolved.
    Raises :class:`Failed` as :func:`compose` does."""
    folder = os.path.dirname(path) or "."
    tree = Layered()
    _Composer(folder, tree, _Groups()).primary(os.path.basename(path))
    tree.data.pop("hydra", None)
    return tree


__all__ = ["MAX_CONFIGS", "MAX_OVERRIDES", "Failed", "compose", "compose_file", "compose_tree"]
