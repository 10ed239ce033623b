"""Primus's presets (``modules.<m>.config`` / ``.model``) composed as Primus composes them, read
at AMD-AGI/Primus v26.5.1 (commit 9a86ba8c; 6703ab9f is the tag object).

How Primus builds a trainer module's settings (primus/core/launcher/parser.py
``PrimusParser.parse_trainer_module``): the module preset ``primus/configs/modules/<framework>/
<config>`` and the model preset ``primus/configs/models/<framework>/<model>`` are each loaded by
``yaml_loader.parse_yaml`` (``${VAR:default}`` replaced from the environment in each file, then its
``extends:`` list deep-merged in order, the file itself last and winning); the model preset's
keys are added only where the module preset has none (``merge_namespace(allow_override=False)``:
a model preset cannot change ``fp8``, which trainer_base.yaml holds); then the experiment's
``overrides`` win, then the command line's ``--key value`` (``parse_cli_overrides``).

A preset file the job holds (``<Primus checkout>/primus/configs/...``, the checkout found above the
experiment YAML inside the job) is read. One it does not hold is never opened outside the job:
the values below are Primus's own at the tag, only the settings this tool reads (precision, FP8 /
FP4, optimizer sharding, parallel sizes, recompute, CUDA graphs, Primus-Turbo switches), each
with its file and line. A module preset neither in the job nor here leaves each of those
settings Unknown (what it sets is not known); a model preset not in the job gives only what every
Megatron model preset at the tag inherits unchanged from language_model.yaml.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks.primus_pinned import PINNED
from preflight.reading.parse import ParseError, parse_yaml, read_text
from preflight.reading.parsefacts import MAX_ITEMS_PER_FILE, fact_value

TAG = "v26.5.1"
REPO = "https://github.com/AMD-AGI/Primus/blob/9a86ba8c99d6d41199442edef6d02a2bfad71c7c"
MAX_PRESETS = 32
"""Preset files one composition reads (a real chain has about ten)."""
MAX_DEPTH = 8
"""Sections a nested preset's setting sits under (TorchTitan's deepest: 4)."""
MAX_TEXT = 65536
"""Characters a setting's value may expand to (a path or a name: under 300)."""
Valued = tuple[Any, str]        # value, where it was set

_MODULE_FILES = ("../module_base.yaml", "primus_megatron_module.yaml", "primus_turbo.yaml",
                 "torch_compile.yaml", "zero_bubble.yaml", "primus_pipeline.yaml")
# file under primus/configs -> (its extends, {key: (value, line)}): the settings read here only
_PINNED: dict[str, tuple[tuple[str, ...], dict[str, tuple[Any, int]]]] = {
    "modules/megatron/trainer_base.yaml": (_MODULE_FILES, {
        "micro_batch_size": (2, 17), "fp16": (False, 39), "bf16": (True, 40),
        "fp8": (None, 52), "fp8_recipe": ("delayed", 54), "fp8_wgrad": (True, 58),
        "fp8_param_gather": (False, 59), "fp4": (None, 64), "fp4_recipe": ("nvfp4", 65),
        "fp4_param": (False, 66), "first_last_layers_bf16": (False, 68),
        "optimizer": ("adam", 73), "optimizer_cpu_offload": (False, 113),
        "overlap_grad_reduce": (False, 171), "overlap_param_gather": (False, 172),
        "use_distributed_optimizer": (False, 183), "use_custom_fsdp": (False, 186),
        "use_megatron_fsdp": (False, 187), "use_torch_fsdp2": (False, 195),
        "recompute_activations": (False, 250), "recompute_granularity": (None, 251),
        "recompute_method": (None, 252), "recompute_num_layers": (None, 253),
        "seq_length": (4096, 288), "use_precision_aware_optimizer": (False, 371),
        "enable_cuda_graph": (False, 430), "external_cuda_graph": (False, 432)}),
    "modules/megatron/pre_trainer.yaml": (("trainer_base.yaml",), {
        "seq_length": (1024, 8), "use_distributed_optimizer": (True, 32)}),
    "modules/megatron/sft_trainer.yaml": (("trainer_base.yaml",), {
        "micro_batch_size": (1, 13), "seq_length": (2048, 20),
        "use_distributed_optimizer": (True, 60)}),
    "modules/module_base.yaml": ((), {}),
    "modules/megatron/primus_megatron_module.yaml": ((), {
        "no_fp8_weight_transpose_cache": (False, 80)}),
    "modules/megatron/primus_turbo.yaml": ((), {
        "enable_primus_turbo": (False, 3), "use_turbo_attention": (False, 11),
        "enable_turbo_attention_float8": (False, 20), "use_turbo_gemm": (False, 25),
        "use_turbo_grouped_gemm": (False, 29)}),
    "modules/megatron/torch_compile.yaml": ((), {}),
    "modules/megatron/zero_bubble.yaml": ((), {}),
    "modules/megatron/primus_pipeline.yaml": ((), {}),
}
_ALL = {**_PINNED, **PINNED}
SWITCHES = frozenset(k for _, keys in _PINNED.values() for k in keys) | {
    "use_turbo_parallel_linear", "use_turbo_grouped_mlp",
    "transformer_impl", "tensor_model_parallel_size", "pipeline_model_parallel_size",
    "context_parallel_size", "expert_model_parallel_size", "sequence_parallel",
    "tp_comm_overlap", "cuda_graph_impl", "fp8_dot_product_attention", "fp8_multi_head_attention"}
"""The settings a preset gives that the Megatron rules see as the job's (``config.megatron.*``);
the rest of a preset restates Megatron's defaults (trainer_base.yaml's ``inference_max_requests:
8`` is no inference job) or differs only for the delayed recipe's tuning (``fp8_amax_history_len:
1024``), which the job did not choose."""
# language_model.yaml (l.48 transformer_impl, l.149-180 parallel sizes): every Megatron model
# preset at the tag extends it, and none sets these to other values
_MODEL_BASE: dict[str, tuple[Any, int]] = {
    "transformer_impl": ("transformer_engine", 48), "tensor_model_parallel_size": (1, 149),
    "context_parallel_size": (1, 151), "pipeline_model_parallel_size": (1, 155),
    "sequence_parallel": (True, 166), "tp_comm_overlap": (False, 180)}
MODEL_KEYS = frozenset({
    "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups",
    "group_query_attention", "kv_channels", "swiglu", "num_experts", "moe_router_topk",
    "moe_grouped_gemm", "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size",
    "moe_token_dispatcher_type", "moe_use_legacy_grouped_gemm", "moe_router_padding_for_fp8",
    "expert_tensor_parallel_size", "multi_latent_attention", "vocab_size"})
"""A model preset's own settings the job holds (its shape and MoE layout), carried as the job's."""

_ENV = re.compile(r"\$\{([^:{}]+)(?::([^}]*))?\}")           # yaml_loader.py ENV_PATTERN l.12
_FLOAT = re.compile(r"^-?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)$")


def pinned(rel: str, line: int) -> str:
    return f"{REPO}/primus/configs/{rel}#L{line} (Primus {TAG} default; the file is not in the job)"


def env_value(text: str, env: dict[str, str] | None = None) -> Any:
    """A YAML string as ``yaml_loader._resolve_env_in_string`` gives it: each ``${VAR:default}``
    from ``env`` (what a launch script sets), else at its default (the run's environment is not
    known here); ``${VAR}`` neither sets is Unknown (Primus stops when it is unset)."""
    env = env or {}
    bare = next((m.group(1) for m in _ENV.finditer(text)
                 if m.group(2) is None and m.group(1) not in env), None)
    if bare is not None:
        return Unknown(f"${{{bare}}} comes from the run's environment (Primus stops when it is "
                       "unset): its value is not known here")
    out = _ENV.sub(lambda m: env.get(m.group(1), m.group(2) or ""), text)
    if out == text:
        return text
    if out.lower() in {"true", "false"}:                      # _try_scalar l.109-125
        return out.lower() == "true"
    if re.fullmatch(r"-?[0-9]{1,30}", out):
        return int(out)
    return float(out) if _FLOAT.fullmatch(out) and len(out) < 40 else out


def env_names(text: str) -> list[str]:
    """The variables a YAML string reads (``${VAR}`` / ``${VAR:default}``)."""
    return [m.group(1) for m in _ENV.finditer(text)]


@dataclass
class Composed:
    """Settings by key, each with where it was set; problems met on the way."""

    values: dict[str, Valued] = field(default_factory=dict)
    problems: list[tuple[str, int | None, str]] = field(default_factory=list)
    read: int = 0
    pinned_files: list[str] = field(default_factory=list)


def file_values(path: str, data: dict[str, Any], lines: Any, prefix: tuple[Any, ...] = (),
                nested: bool = False) -> dict[str, Valued]:
    """The top-level settings of a mapping (``extends`` left out) with their lines, strings
    through :func:`env_value`; ``nested``: each setting by its dotted path (``training.seq_len``,
    TorchTitan's sections), as Primus deep-merges them."""
    out: dict[str, Valued] = {}
    budget = [MAX_ITEMS_PER_FILE]
    todo: list[tuple[tuple[str, ...], Any]] = [((k,), v) for k, v in data.items()
                                               if isinstance(k, str) and k != "extends"]
    while todo and budget[0] > 0:
        keys, value = todo.pop(0)
        budget[0] -= 1
        if nested and isinstance(value, dict) and value and len(keys) < MAX_DEPTH:
            todo.extend((keys + (k,), v) for k, v in value.items() if isinstance(k, str))
            continue
        if isinstance(value, str):
            value = env_value(value)
        elif isinstance(value, (dict, list)):
            value = fact_value(value, budget)
        out[".".join(keys)] = (value, Source(path, lines(prefix + keys)))
    if todo:         # the rest, which may hold the FP8 switch, is not read: never "no"
        keys = todo[0][0]
        out["unread_args"] = (Unknown(
            f"{path}: more than {MAX_ITEMS_PER_FILE:,} settings; from {'.'.join(keys)[:80]} on "
            "they were not read"), Source(path, lines(prefix + keys)))
    return out


class Chain:
    """One composition: a preset by its path under ``primus/configs``, from the job's checkout
    (``root``) where it is there, else the table above."""

    def __init__(self, root: str | None, nested: bool = False) -> None:
        self.root = root
        self.nested = nested
        self.out = Composed()

    def preset(self, rel: str, stack: tuple[str, ...] = ()) -> dict[str, Valued] | None:
        """``rel``'s settings over its extends; None when it is neither in the job nor pinned."""
        rel = os.path.normpath(rel).replace(os.sep, "/")
        if rel.startswith("../") or rel in stack or len(stack) > 8 or \
                self.out.read >= MAX_PRESETS:
            why = ("names a preset outside primus/configs" if rel.startswith("../") else
                   "extends itself" if rel in stack else "more presets than are read")
            self.out.problems.append((stack[-1] if stack else rel, None, f"{rel}: {why}"))
            return None
        self.out.read += 1
        path = os.path.join(self.root, "primus", "configs", rel) if self.root else None
        if path and os.path.isfile(path):
            try:
                parsed = parse_yaml(read_text(path))
            except ParseError as exc:
                self.out.problems.append((path, exc.line, exc.message))
                return None
            if not isinstance(parsed.data, dict):    # Primus cannot load it as settings
                self.out.problems.append((path, 1, "the preset is not a mapping of settings"))
                return None
            data = parsed.data
            ext = data.get("extends") or ()
            own = file_values(path, data, parsed.line_of, nested=self.nested)
            at: str = Source(path, parsed.line_of(("extends",)))
        elif rel in _ALL:
            ext, keys = _ALL[rel]
            own = {k: (v, pinned(rel, line)) for k, (v, line) in keys.items()}
            at = pinned(rel, 1)
            self.out.pinned_files.append(rel)
        else:
            return None
        merged: dict[str, Valued] = {}
        for parent in (ext if isinstance(ext, (list, tuple)) else [ext])[:16]:
            if not isinstance(parent, str):
                continue
            got = self.preset(os.path.join(os.path.dirname(rel), parent), stack + (rel,))
            deep_update(merged, got if got is not None else self.unknown(parent, rel, at))
        deep_update(merged, own)
        return merged

    def unknown(self, name: str, naming: str, at: str | None = None) -> dict[str, Valued]:
        """What a preset not found gives (``at``: where it is named): a model preset, what every
        model preset inherits (:data:`_MODEL_BASE`); a module preset, each switch Unknown."""
        at = at or naming
        if naming.startswith("models/"):
            gone = Unknown(f"the model preset {name!r} ({naming} extends it) is not in the job: "
                           "the model settings it gives are not known here")
            return {**{k: (gone, at) for k in MODEL_KEYS}, **model_base()}
        why = Unknown(f"the Primus preset {name!r} ({naming} extends it) is neither in the job "
                      f"nor one whose settings are known here (Primus {TAG})")
        return {k: (why, at) for k in SWITCHES}


def compose(root: str | None, framework: str, config: Any, model: Any, where: str) -> Composed:
    """The module preset ``config`` with the model preset ``model`` added beneath it."""
    chain = Chain(root)
    module = chain.preset(f"modules/{framework}/{yaml_name(config)}") if isinstance(config, str) \
        else None
    if module is None:
        module = chain.unknown(str(config), where)
    values = dict(module)
    got = chain.preset(f"models/{framework}/{yaml_name(model)}") if isinstance(model, str) else None
    if got is None:
        got = model_base()
    for key, valued in got.items():
        values.setdefault(key, valued)       # merge_namespace(allow_override=False)
    chain.out.values = values
    return chain.out


def deep_update(into: dict[str, Valued], values: dict[str, Valued]) -> None:
    """``values`` over ``into``, both by dotted path, as merge_utils.deep_merge: a setting
    replaces what was beneath it (``quantize: null`` drops ``quantize.*``) and a section
    replaces a setting of its name."""
    sections = {k[:i] for k in into for i, c in enumerate(k) if c == "."}
    for key, valued in values.items():
        parts = key.split(".")
        for i in range(1, len(parts)):
            into.pop(".".join(parts[:i]), None)
        if key in sections:
            for old in [k for k in into if k.startswith(key + ".")]:
                del into[old]
        into[key] = valued
        sections.update(".".join(parts[:i]) for i in range(1, len(parts)))


def trainer_module(modules: dict[str, Any]) -> str | None:
    """The trainer module ``train pretrain`` runs: ``pre_trainer``, else ``post_trainer`` (the
    alias primus_config.get_module_config falls back to), else the first ``*trainer*``."""
    for name in ("pre_trainer", "post_trainer"):
        if isinstance(modules.get(name), dict):
            return name
    return next((k for k, v in modules.items() if isinstance(k, str) and "trainer" in k
                 and isinstance(v, dict)), None)


def model_base() -> dict[str, Valued]:
    return {k: (v, pinned("models/megatron/language_model.yaml", line))
            for k, (v, line) in _MODEL_BASE.items()}


def yaml_name(name: str) -> str:
    return name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"   # preset_loader.py
