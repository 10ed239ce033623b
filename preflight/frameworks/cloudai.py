"""NVIDIA cloudai (benchmarking harness) test TOMLs: a ``NeMoRun`` test's ``cmd_args`` become
NeMo-Run overrides of a NeMo 2 recipe, read into the ``config.nemo2.*`` facts :mod:`.nemo2` derives
(so NeMo 2's and Megatron's rules apply); a test-scenario TOML names its tests, and a
``[[Tests]]`` entry's own ``cmd_args`` win over its test's, leaf by leaf.

Read at NVIDIA/cloudai v1.3.0 (d80e439d, 2025-07-24):

- ``src/cloudai/workloads/nemo_run/nemo_run.py``: ``NeMoRunCmdArgs`` (``docker_image_url``,
  ``task``, ``recipe_name``, ``num_layers``, ``trainer``, ``log``, ``data``, ``optim``; extra keys
  allowed). ``TrainerStrategy``'s defaults (tensor 1, pipeline 1, **context 2**) are model fields,
  so ``model_dump()`` passes them on every run (l.49-56; also at 4c8b580f);
- ``slurm_command_gen_strategy.py`` l.109-150: ``python cloudai_nemorun.py --factory
  <recipe_name> -y`` and every flattened ``cmd_args`` leaf that is not None as ``a.b.c=value``
  (``trainer.plugins.fp8=hybrid``), after dropping ``docker_image_url``, ``num_layers``, ``task``,
  ``recipe_name``; ``trainer.num_nodes`` is replaced by the nodes the run gets;
- ``recipe_name`` is a NeMo 2 library recipe (``llama3_70b``: NeMo-Run's factory of that name,
  whose plugin NeMo 2's tables know) or a ``cloudai_*_recipe`` of the job's cloudai_nemorun.py
  (read by :mod:`.cloudai_recipe`);
- a list value is a design-space (DSE) sweep: cloudai runs one job per point. One point is that
  value; more than one is Unknown naming the points (each is a run of its own).

Other test templates (NcclTest, NeMoLauncher, MegatronRun, ...) are named, not read: FP8 Unknown.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import cloudai_recipe, nemo_images
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed
from preflight.reading.refs import named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "cloudai"
PREFIX = f"config.{KIND}"
NEMO = cloudai_recipe.NEMO
TEMPLATE = "NeMoRun"
_NOT_ARGS = ("docker_image_url", "num_layers", "task", "recipe_name")
# nemo_run.py TrainerStrategy defaults at v1.3.0 (l.49-56): passed as overrides on every run
_STRATEGY_DEFAULTS = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                      "context_parallel_size": 2}
_SOURCE = "cloudai v1.3.0 src/cloudai/workloads/nemo_run/nemo_run.py l.49-56"
_MAX_LEAVES = 2000
_MAX_TESTS = 64


def score(data: Any) -> int:
    """A test TOML (``test_template_name`` with ``cmd_args``) or a scenario (``[[Tests]]`` with
    ``test_name``)."""
    if not isinstance(data, dict):
        return 0
    if isinstance(data.get("test_template_name"), str) and isinstance(data.get("cmd_args"), dict):
        return 40
    tests = data.get("Tests")
    if isinstance(tests, list) and tests and all(
            isinstance(t, dict) and isinstance(t.get("test_name"), str) for t in tests[:8]):
        return 30
    return 0


def _at(parsed: Parsed, path: str, keys: tuple[str, ...]) -> str:
    line = parsed.line_of(keys)
    return f"{path}:{line}" if line else path


def read(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    if "test_template_name" not in data:
        return _scenario(path, parsed, data)
    template = data.get("test_template_name")
    facts[f"{PREFIX}.test_template_name"] = template
    prov[f"{PREFIX}.test_template_name"] = _at(parsed, path, ("test_template_name",))
    cmd = data.get("cmd_args")
    if template != TEMPLATE or not isinstance(cmd, dict):
        return ReaderOutput(facts, prov)
    recipe = cmd.get("recipe_name")
    where = _at(parsed, path, ("cmd_args", "recipe_name"))
    facts[f"{NEMO}.recipe"] = recipe if isinstance(recipe, str) else Unknown(
        f"cmd_args.recipe_name is {str(recipe)[:40]!r}, no recipe name")
    prov[f"{NEMO}.recipe"] = where
    if isinstance(recipe, str) and recipe.startswith("cloudai_"):
        got = cloudai_recipe.read_factory(path, recipe)
        if isinstance(got, Unknown):
            facts[f"{NEMO}.plugins"], prov[f"{NEMO}.plugins"] = got, where
        else:
            facts.update(got[0])
            prov.update(got[1])
    # the NeMo container it runs in pins the versions of the stack (frameworks/nemo_images.py)
    pins = nemo_images.image_facts(cmd.get("docker_image_url"), Source(
        path, parsed.line_of(("cmd_args", "docker_image_url"))))
    facts.update(pins[0])
    prov.update(pins[1])
    strategy = _at(parsed, path, ("cmd_args", "trainer", "strategy"))
    for key, value in _STRATEGY_DEFAULTS.items():
        facts[f"{NEMO}.strategy.{key}"] = value
        prov[f"{NEMO}.strategy.{key}"] = f"{strategy} (cloudai's default: {_SOURCE})"
    _overrides(path, parsed, cmd, facts, prov)
    return ReaderOutput(facts, prov)


def _name(keys: tuple[str, ...]) -> str:
    """The ``config.nemo2.*`` fact an override sets (nemo2_py's names)."""
    dotted = ".".join(keys)
    for old, new in (("trainer.plugins.", "plugins."), ("trainer.strategy.", "strategy.")):
        if dotted.startswith(old):
            return f"{NEMO}.{new}{dotted[len(old):]}"
    return f"{NEMO}.{dotted}"


def _overrides(path: str, parsed: Parsed, cmd: dict[str, Any], facts: dict[str, Any],
               prov: dict[str, str], at: Callable[[tuple[str, ...]], str] | None = None) -> None:
    """Every leaf of ``cmd_args`` that cloudai passes as ``-y a.b=value`` (None is not passed);
    ``at`` gives a leaf's ``file:line`` (a scenario entry's own lines)."""
    todo: list[tuple[Any, tuple[str, ...]]] = [
        (v, (str(k),)) for k, v in cmd.items() if k not in _NOT_ARGS]
    seen = 0
    while todo:
        node, keys = todo.pop()
        seen += 1
        if seen > _MAX_LEAVES:
            facts[f"{PREFIX}.unread_args"] = Unknown(
                f"{path}: cmd_args has more than {_MAX_LEAVES} settings: the rest not read")
            prov[f"{PREFIX}.unread_args"] = path
            return
        if isinstance(node, dict):
            todo.extend((v, (*keys, str(k))) for k, v in node.items())
            continue
        where = at(keys) if at is not None else _at(parsed, path, ("cmd_args", *keys))
        name = _name(keys)
        if isinstance(node, list):
            node = _point(keys, node, where)
        facts[name], prov[name] = node, where


def _point(keys: tuple[str, ...], values: list[Any], where: str) -> Any:
    """A design-space list: its one point, else Unknown naming the points."""
    if len(values) == 1 and not isinstance(values[0], (list, dict)):
        return values[0]
    shown = ", ".join(repr(v)[:20] for v in values[:6]) + (", ..." if len(values) > 6 else "")
    return Unknown(f"cmd_args.{'.'.join(keys)} at {where} is a design-space sweep over "
                   f"{len(values)} points ({shown}): each is a run of its own")


def _scenario(path: str, parsed: Parsed, data: dict[str, Any]) -> ReaderOutput:
    """A test scenario: each ``[[Tests]]``'s ``test_name`` is a test TOML's ``name``; cloudai
    loads every TOML of its tests folder (conf/common/test/ by convention, named after the
    test), so ``../test/<test_name>.toml`` next to the scenario's folder is read."""
    facts: dict[str, Any] = {f"{PREFIX}.scenario": str(data.get("name", ""))[:80]}
    prov = {f"{PREFIX}.scenario": _at(parsed, path, ("name",))}
    linked: list[Linked] = []
    problems: list[ConfigProblem] = []
    tests = data.get("Tests")
    names = list(dict.fromkeys(
        t["test_name"] for t in (tests if isinstance(tests, list) else [])[:_MAX_TESTS]
        if isinstance(t, dict) and isinstance(t.get("test_name"), str)))
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "test")
    for name in names:
        if os.sep in name or "/" in name or name.startswith("."):
            continue
        target = os.path.join(folder, f"{name}.toml")
        link = named(target, KIND, path, prov[f"{PREFIX}.scenario"], key="test_name", line=None)
        if link.missing:
            problems.append(ConfigProblem(path, parsed.line_of(("Tests",)), (
                f"the test {name!r} is defined in a test TOML of cloudai's tests folder, not "
                f"found at ../test/{name}.toml: not read"), level="warning", code="reference"))
        else:
            linked.append(link)
    _entry_overrides(path, parsed, tests if isinstance(tests, list) else [], facts, prov)
    if not linked:
        facts[f"{PREFIX}.tests"] = Unknown("none of the scenario's tests ("
                                           f"{', '.join(names)[:120] or 'none'}) was found")
        prov[f"{PREFIX}.tests"] = prov[f"{PREFIX}.scenario"]
    return ReaderOutput(facts, prov, tuple(problems), tuple(linked))


_ENTRY = re.compile(r"^\s*\[\[\s*Tests\s*\]\]")


def _entry_at(path: str, parsed: Parsed, index: int) -> Callable[[tuple[str, ...]], str]:
    """``file:line`` of a leaf of the ``index``-th ``[[Tests]]`` entry: the key's line inside the
    entry's block (the parser keeps one line per key path, the first entry's), else the entry's
    header line."""
    lines = parsed.text.splitlines()
    starts = [n for n, line in enumerate(lines) if _ENTRY.match(line)]
    if index >= len(starts):
        return lambda keys: _at(parsed, path, ("Tests", "cmd_args", *keys))
    block = range(starts[index], starts[index + 1] if index + 1 < len(starts) else len(lines))

    def at(keys: tuple[str, ...]) -> str:
        key = re.compile(r"^\s*(?:[\w\"'-]+\s*\.\s*)*[\"']?" + re.escape(keys[-1]) + r"[\"']?\s*=")
        return f"{path}:{next((n + 1 for n in block if key.match(lines[n])), block.start + 1)}"
    return at


def _entry_overrides(path: str, parsed: Parsed, tests: list[Any], facts: dict[str, Any],
                     prov: dict[str, str]) -> None:
    """A ``[[Tests]]`` entry's own ``cmd_args`` over its test's: cloudai deep-merges the entry's
    fields into the test's (``deep_merge(test_defined, tc_defined)``, the entry's leaves win,
    tables merge key by key: src/cloudai/test_scenario_parser.py l.228-240, l.252-262 at v1.3.0).
    The scenario names the test file, so its facts win over the test's (Linked, not overrides).
    A leaf the scenario's runs set differently (or one run of a test sets and another of the
    same test does not) is each run's own: Unknown naming the values."""
    got: dict[str, list[tuple[Any, str, str]]] = {}
    runs = Counter(t["test_name"] for t in tests[:_MAX_TESTS]
                   if isinstance(t, dict) and isinstance(t.get("test_name"), str))
    for index, entry in enumerate(tests[:_MAX_TESTS]):
        if not isinstance(entry, dict) or not isinstance(entry.get("test_name"), str) or \
                not isinstance(cmd := entry.get("cmd_args"), dict):
            continue
        leaves: dict[str, Any] = {}
        where: dict[str, str] = {}
        at = _entry_at(path, parsed, index)
        _overrides(path, parsed, cmd, leaves, where, at)
        if isinstance(cmd.get("recipe_name"), str):
            leaves[f"{NEMO}.recipe"], where[f"{NEMO}.recipe"] = cmd["recipe_name"], \
                at(("recipe_name",))
        for name, value in leaves.items():
            got.setdefault(name, []).append((value, where[name], entry["test_name"]))
    for name, values in got.items():
        if not name.startswith(f"{NEMO}."):       # cloudai's own notes (unread_args)
            facts[name], prov[name] = values[0][0], values[0][1]
            continue
        seen = {repr(v)[:40] for v, _, _ in values}
        every = all(n == runs[t] for t, n in Counter(t for _, _, t in values).items())
        facts[name], prov[name] = (values[0][0], values[0][1]) if len(seen) == 1 and every \
            else (Unknown(f"the scenario's runs set {name[len(NEMO) + 1:]} differently "
                          f"({', '.join(sorted(seen))[:120]}{'' if every else ', or not'}): "
                          "each run is its own"), values[0][1])


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    template = f.get(f"{PREFIX}.test_template_name")
    if template == TEMPLATE:
        out.runs_on = ("nemo2",)      # nemo2 derives the job (derive_also)
    elif template is not None:
        out["fp8"] = (Unknown(f"cloudai test template {str(template)[:40]!r}: its cmd_args are "
                              "not read (only NeMoRun tests are)"), v.src("test_template_name"))
    elif isinstance(unread := f.get(f"{PREFIX}.tests"), Unknown):
        out["fp8"] = (unread, v.src("tests"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="NVIDIA cloudai (test TOMLs)", formats=("toml",),
    score=score, read=read, derive=derive, precedence=40,
    derive_also=(("nemo2", f"{NEMO}.recipe"),),
    defaults=(Default("cmd_args.trainer.strategy.context_parallel_size", "2",
                      "cloudai 1.2-1.3", _SOURCE),
              Default("cmd_args.trainer.strategy.tensor_model_parallel_size", "1",
                      "cloudai 1.2-1.3", _SOURCE)),
    distributions=(), rule_area="",
)
