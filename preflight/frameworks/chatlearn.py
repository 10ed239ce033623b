"""ChatLearn (alibaba/ChatLearn): ``python chatlearn/entrypoint.py grpo --config-file
template/grpo_megatron.yaml models.policy_trainer.bf16=True ...`` and its template YAML.

Read at b7af31a9 (2025-09-15, v1.2.0-35). ``chatlearn/entrypoint.py`` (l.86-104) composes the
algorithm's structured config (``GrpoConfig``), loads ``--config-file`` with ``OmegaConf.load``,
applies the dotted words after it with ``OmegaConf.from_dotlist`` + ``OmegaConf.update`` onto that
file, and merges the file over the structured config; without ``--config-file`` the dotted words
are not applied at all (they are only inside ``if algo_args.config_file is not None``), and
``runtime_args.train_backend`` has no default (runtime_config.py l.53-56).

Precision at b7af31a9: the Megatron backend (``runtime_args.train_backend: megatron``) hands
Megatron only the fields of ``MegatronConfig`` (megatron_module.py l.84-108 ``set_megatron_cfg``:
a key that is not a field is not passed), and ``bf16`` (megatron_config.py l.325, default True)
is its only precision field: no fp8 / fp16 option, so a Megatron trainer is BF16 (FP32 with
``bf16=False``). The FSDP backend builds the model in BF16 with ``MixedPrecisionPolicy(
param_dtype=torch.bfloat16)`` fixed in code (fsdp_module.py l.340, 357). The rollout
(``runtime_args.rollout_backend``, default vllm, runtime_config.py l.57-58) is vLLM's ``LLM(...,
dtype=...)`` (vllm_module.py l.180-210) or SGLang's ``Engine(model_path, dtype, ...)``
(sglang_module.py l.281-300), both with ``dtype`` ``bfloat16`` (``PolicyConfig`` has no dtype
field) and no quantization argument: the rollout runs the checkpoint's BF16. The only FP8 in
the repository is a DeepSeek-V3 fp8_cast_bf16 conversion step of a tutorial.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import ckptname
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View, keys_matching, with_default
from preflight.reading.layered import load_chain
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ReaderOutput

KIND = "chatlearn"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|/)chatlearn/entrypoint\.py$|(?:^|\.)chatlearn\.entrypoint$")
HINT = re.compile(r"\bchatlearn[./]entrypoint\b")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({"config-file"}))
_AT = "alibaba/ChatLearn@b7af31a9"
TRAINER = "models.policy_trainer"
DEFAULTS: dict[str, tuple[Any, str]] = {
    "runtime_args.rollout_backend": (
        "vllm", f"{_AT} chatlearn/configs/runtime_config.py:57-58 (rollout_backend: vllm)"),
    f"{TRAINER}.bf16": (True, f"{_AT} chatlearn/configs/megatron_config.py:325 (bf16: True)"),
}
_ROLLOUT_SRC = {
    "vllm": f"{_AT} chatlearn/models/vllm_module.py:180-210 (LLM(dtype='bfloat16'), no "
            "quantization argument)",
    "sglang": f"{_AT} chatlearn/models/sglang_module.py:281-300 (Engine(dtype='bfloat16'), no "
              "quantization argument)",
}
_FP8_WORD = re.compile(r"fp8|float8|quantiz|e4m3|e5m2", re.I)


def score(data: Any) -> int:
    """A ChatLearn config: ``runtime_args`` beside ``models`` holding its roles
    (template/grpo_*.yaml at b7af31a9)."""
    models = data.get("models")
    if not isinstance(data.get("runtime_args"), dict) or not isinstance(models, dict):
        return 0
    roles = {"policy", "policy_trainer", "ref_policy", "reward"} & set(map(str, models))
    return 20 + len(roles) if len(roles) >= 2 else 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """The YAML as ``OmegaConf.load`` reads it (no defaults list), ``${...}`` resolved."""
    chain = load_chain(path, parsed, style="flat")
    facts, prov = chain.facts(PREFIX, Source(path, 1))
    return ReaderOutput(facts, prov, tuple(chain.problems))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``chatlearn/entrypoint.py ALGO`` launch line: ``--config-file``, then the dotted
    words in order."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    at = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    given = read.flag("config-file")
    base: tuple[Any, Source] | None = None
    if given is not None:
        value, src = given
        if isinstance(value, str) and "$" not in value and read.folder is None:
            # OmegaConf.load opens it from the folder the command runs in: ChatLearn's scripts
            # run from the checkout's top (`export CHATLEARN=$(pwd)`), a job root here
            value = locate(value, path) or under_roots(value) or value
        base = (value, src)
    else:
        # the dotted words are applied only onto a --config-file (entrypoint.py l.94-99)
        read.overrides = []
        base = (Unknown("no --config-file: ChatLearn applies the dotted overrides only onto a "
                        f"config file ({_AT} chatlearn/entrypoint.py:94-99), and "
                        "runtime_args.train_backend has no default"), at)
    merged = merged_facts(read, KIND, base, style="flat", key="--config-file")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = read.launch.entry.text, at
    algo = next((v for v, _ in read.positional if isinstance(v, str)), None)
    if algo is not None:
        facts[f"{PREFIX}.algorithm"], prov[f"{PREFIX}.algorithm"] = algo, at
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _get(v: View, key: str) -> tuple[Any, str]:
    return with_default(v, key, DEFAULTS, f"{_AT} GrpoConfig default")


def derive(f: Any, prov: Any) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    backend, bsrc = _get(v, "runtime_args.train_backend")
    name = str(backend).lower() if not isinstance(backend, Unknown) else ""
    out["distributed"] = (backend if isinstance(backend, Unknown) else
                          {"megatron": "megatron", "fsdp": "fsdp2"}.get(
                              name, Unknown(f"train_backend {str(backend)[:40]!r}")), bsrc)
    if name == "megatron":
        bf16, psrc = _get(v, f"{TRAINER}.bf16")
        on = bf16 if isinstance(bf16, Unknown) else \
            str(bf16).strip().lower() not in ("false", "0", "no", "off", "none", "null")
        out["precision"] = (on if isinstance(on, Unknown) else "bf16" if on else "fp32", psrc)
        why = (f"{psrc}; ChatLearn's MegatronConfig has no FP8 field ({_AT} "
               "chatlearn/configs/megatron_config.py; megatron_module.py:84-108 passes only its "
               "fields to Megatron)")
    elif name == "fsdp":
        psrc = f"{_AT} chatlearn/models/fsdp_module.py:340, 357 (BF16 fixed in code)"
        out["precision"] = ("bf16", psrc)
        why = f"{psrc}; the FSDP backend has no FP8 option"
    else:
        out["precision"] = (out["distributed"][0] if isinstance(backend, Unknown) else
                            Unknown(f"train_backend {str(backend)[:40]!r}"), bsrc)
        why = ""
    odd = keys_matching(v, _FP8_WORD)
    if odd:
        out["fp8"] = (Unknown(f"{odd[0]} is not a field of ChatLearn's config ({_AT}): "
                              "a fork or a later release may read it"), v.src(odd[0]))
    else:
        out["fp8"] = (False, why) if why else (out["distributed"][0], bsrc)
    _rollout(v, out, odd)
    return out.build()


def _rollout(v: View, out: IntentOut, odd: list[str]) -> None:
    engine, esrc = _get(v, "runtime_args.rollout_backend")
    name = str(engine).lower() if not isinstance(engine, Unknown) else ""
    out["rollout.engine"] = (engine if isinstance(engine, Unknown) else name, esrc)
    model, msrc = _get(v, "models.policy.load")
    named = ckptname.says_fp8(model[:4096]) if isinstance(model, str) else None
    if isinstance(engine, Unknown):
        out["rollout.fp8"] = (engine, esrc)
    elif name not in _ROLLOUT_SRC:
        out["rollout.fp8"] = (Unknown(f"rollout_backend {name[:40]!r}"), esrc)
    elif named:
        out["rollout.fp8"] = (Unknown(f"models.policy.load {model[:80]!r} looks like an FP8 "
                                      "checkpoint, whose quantization_config the engine follows "
                                      "(not read)"), msrc)
    elif odd:
        out["rollout.fp8"] = (Unknown(f"{odd[0]} is not a ChatLearn field"), v.src(odd[0]))
    else:
        out["rollout.fp8"] = (False, f"{esrc}; {_ROLLOUT_SRC[name]}")
    out["rollout.kv_cache_fp8"] = (out["rollout.fp8"][0] if odd else False,
                                   _ROLLOUT_SRC.get(name, esrc))


FRAMEWORK = Framework(
    kind=KIND, title="ChatLearn", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=39,
    # OmegaConf.load refuses a key given twice
    duplicate_keys="error",
    defaults=tuple(Default(k, str(val), "ChatLearn b7af31a9", s)
                   for k, (val, s) in DEFAULTS.items()),
    distributions=(), rule_area="",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("models.policy.load",)),),
)
