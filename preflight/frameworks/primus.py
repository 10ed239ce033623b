"""Primus (AMD-AGI/Primus): experiment YAMLs whose trainer module runs Megatron-LM, read at
v26.5.1 (commit 9a86ba8c; 6703ab9f is the tag object).

An experiment YAML (``examples/megatron/configs/MI355X/llama3.1_8B-pretrain.yaml``) names, per
trainer module (``modules.pre_trainer``), the backend (``framework: megatron``), a module preset
(``config: pre_trainer.yaml``), a model preset (``model: llama3.1_8B.yaml``) and ``overrides``
whose keys are Megatron-LM's argument names (``fp8: hybrid`` is ``--fp8-format hybrid``: the
argparse dest of that flag is ``fp8``). Primus composes them (:mod:`.primus_presets`) and hands
the result to Megatron-LM's arguments (primus/backends/megatron). So the settings are read here
as ``config.primus.args.<Megatron flag name>`` (``fp8`` / ``fp4`` as ``fp8_format`` /
``fp4_format``, the names the Megatron reader gives those flags) and the intent is Megatron's
(:func:`.megatron.megatron_intent`). The experiment's and the launch line's own settings, and the
presets' precision, parallel and optimizer switches (:data:`.primus_presets.SWITCHES`), are
also ``config.megatron.*`` with ``config.megatron.args_of: primus``, so the Megatron, TE and
hardware rules see them; the rest of a preset restates Megatron's defaults and is not the job's
choice.

Launch lines (``primus-cli ... -- train pretrain --config X --key value``, ``EXP=X bash
examples/run_pretrain.sh --key value``) are read by :mod:`.primus_launch`. Unknown, with why: a
backend other than Megatron (TorchTitan, MaxText, Megatron-Bridge), no trainer module, a preset
the job does not hold and whose settings are not known here, ``${VAR}`` without a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import primus_backends as backends
from preflight.frameworks import primus_launch as launch
from preflight.frameworks import primus_presets as presets
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.megatron import megatron_intent
from preflight.reading.boundary import above
from preflight.reading.parse import Parsed
from preflight.reading.types import ConfigProblem, ReaderOutput

KIND = "primus"
PREFIX = f"config.{KIND}"
ARGS = launch.ARGS
MEGATRON = "config.megatron"
_META = ("work_group", "user_name", "exp_name", "workspace")   # parser.py parse_meta_info
_MODULE_KEYS = ("framework", "config", "model", "overrides")


def score(data: Any) -> int:
    """A ``modules`` mapping with a ``*trainer*`` module naming its ``framework`` and a preset
    (PrimusParser.parse_modules), more with the experiment's meta keys."""
    modules = data.get("modules")
    if not isinstance(modules, dict):
        return 0
    trainers = [m for k, m in modules.items() if isinstance(k, str) and "trainer" in k
                and isinstance(m, dict) and "framework" in m]
    if not trainers or not any({"config", "model", "overrides"} & set(m) for m in trainers):
        return 0
    return 20 + 3 * len(set(_META) & set(data))


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """The trainer module's settings composed over its presets."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    modules = data.get("modules")
    name = presets.trainer_module(modules) if isinstance(modules, dict) else None
    if name is None or not isinstance(modules, dict):
        facts[f"{PREFIX}.base_config"] = Unknown(f"{path} has no trainer module under modules:")
        prov[f"{PREFIX}.base_config"] = Source(path, parsed.line_of(("modules",)))
        return ReaderOutput(facts, prov)
    module = modules[name]
    at: tuple[str, ...] = ("modules", name)
    own = presets.file_values(path, {k: module.get(k) for k in _MODULE_KEYS[:3] if k in module},
                              parsed.line_of, at)
    for key, (value, where) in own.items():
        facts[f"{PREFIX}.{key}"], prov[f"{PREFIX}.{key}"] = value, where
    facts[f"{PREFIX}.module"], prov[f"{PREFIX}.module"] = name, Source(path, parsed.line_of(at))
    framework = facts.get(f"{PREFIX}.framework")
    root = above(path, "primus/configs", True, 12)
    if framework in ("torchtitan", "megatron_bridge"):
        more, more_prov, met = backends.read_backend(path, parsed, module, at, root, {
            k: facts.get(f"{PREFIX}.{k}") for k in _MODULE_KEYS[:3]})
        facts.update(more)
        prov.update(more_prov)
        return ReaderOutput(facts, prov, _problems(met))
    if framework != "megatron":
        line = parsed.line_of(at + ("framework",))
        scope = ("JAX MaxText is out of this tool's scope (PyTorch FP8): the experiment's FP8 "
                 "settings are not read" if framework == "maxtext" else
                 f"backend {str(framework)[:40]!r} is not one read here (Megatron, TorchTitan, "
                 "Megatron-Bridge)")
        return ReaderOutput(facts, prov, (ConfigProblem(
            path, line, f"Primus trainer module {name!r}: {scope}", level="warning",
            code="unknown_framework"),))
    got = presets.compose(root, "megatron", facts.get(f"{PREFIX}.config"),
                          facts.get(f"{PREFIX}.model"), Source(path, parsed.line_of(at)))
    values = dict(got.values)
    explicit = module.get("overrides")
    mine = presets.file_values(path, explicit, parsed.line_of, at + ("overrides",)) \
        if isinstance(explicit, dict) else {}
    values.update(mine)
    for key, (value, where) in values.items():
        dest = launch.dest(key)
        facts[f"config.{ARGS}.{dest}"], prov[f"config.{ARGS}.{dest}"] = value, where
        # a null is no setting (Megatron's argparse default None); FP8D-MEG-0010 asks `exists`
        if value is not None and (key in mine or key in presets.SWITCHES or (
                key in presets.MODEL_KEYS and str(where).startswith(root or "\0"))):
            facts[f"{MEGATRON}.{dest}"], prov[f"{MEGATRON}.{dest}"] = value, where
    facts[f"{MEGATRON}.args_of"] = KIND
    prov[f"{MEGATRON}.args_of"] = Source(path, parsed.line_of(at))
    if got.pinned_files:
        facts[f"{PREFIX}.pinned_presets"] = sorted(set(got.pinned_files))
        prov[f"{PREFIX}.pinned_presets"] = presets.REPO
    return ReaderOutput(facts, prov, _problems(got.problems))


def _problems(met: list[tuple[str, int | None, str]]) -> tuple[ConfigProblem, ...]:
    return tuple(ConfigProblem(p, line, f"Primus preset: {msg}", level="warning")
                 for p, line, msg in met)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    top = View(f, KIND, prov)
    out = IntentOut()
    broken = next((k for k in ("base_config", "framework", "config") if top.unknown(k)), None)
    framework = top.get("framework")
    if broken is not None:
        out["fp8"] = (top.unknown(broken), top.src(broken))
        return out.build()
    if not top.has("framework"):
        out["fp8"] = (Unknown("no Primus experiment YAML was read: its trainer module's settings "
                              "are not known"), top.src("launch", "intent"))
        return out.build()
    if framework == "torchtitan":
        return backends.derive_torchtitan(f, prov)
    if framework == "megatron_bridge":
        return backends.derive_bridge(f, prov)
    if framework != "megatron":
        out["fp8"] = backends.not_read(framework, top.src("framework"))
        return out.build()
    args = View(f, ARGS, prov)
    out = megatron_intent(args, f, prov)
    if out.get("fp8", (None,))[0] is False:     # no format: say where that was decided
        out["fp8"] = (False, args.src("fp8_format", top.src("config")))
    unknowns: tuple[tuple[Stated, str], ...] = (
        ("moe.experts", "num_experts"), ("moe.top_k", "moe_router_topk"),
        ("shapes.hidden", "hidden_size"))
    for name, key in unknowns:
        if args.unknown(key) is not None:     # from a preset the job does not hold
            out[name] = (args.unknown(key), args.src(key))
    out.runs_on = ("megatron",)      # Primus trains through Megatron-LM (primus/backends/megatron)
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="Primus (AMD)", formats=("yaml",), score=score, read=read, derive=derive,
    precedence=41, from_source=True, rule_area="PRIMUS", area_title="Primus (AMD)",
    # pyproject.toml [project] name = "primus" at v26.5.1; run from its checkout (examples/,
    # runner/primus-cli, Megatron-LM as third_party/Megatron-LM)
    distributions=("primus",),
    launch=Launch(launch.read_text, command=launch.COMMAND),
    shape_keys=(("heads", ("args.num_attention_heads",)),
                ("kv_heads", ("args.num_query_groups",)), ("layers", ("args.num_layers",)),
                ("seq", ("args.seq_length",)), ("micro_batch", ("args.micro_batch_size",)),
                ("tp", ("args.tensor_model_parallel_size",)), ("gated", ("args.swiglu",))),
    defaults=(
        Default("fp8 (module preset)", "null: no FP8", "v26.5.1",
                f"{presets.REPO}/primus/configs/modules/megatron/trainer_base.yaml#L52"),
        Default("fp8_recipe", "delayed", "v26.5.1",
                f"{presets.REPO}/primus/configs/modules/megatron/trainer_base.yaml#L54"),
        Default("use_distributed_optimizer (pre_trainer.yaml)", "true", "v26.5.1",
                f"{presets.REPO}/primus/configs/modules/megatron/pre_trainer.yaml#L32"),
        Default("transformer_impl (model presets)", "transformer_engine", "v26.5.1",
                f"{presets.REPO}/primus/configs/models/megatron/language_model.yaml#L48"),
    ),
)
