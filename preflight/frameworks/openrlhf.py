"""OpenRLHF: ``python3 -m openrlhf.cli.train_<x> --section.flag value`` (also under ``deepspeed
--module``, ``ray job submit ... -- python3 -m``), read at commit 3c3be6234e0c (after v0.11.0).

Its CLI modules (openrlhf/cli/train_sft.py, train_dpo.py, train_rm.py, train_ppo_ray.py) are
argparse parsers of dotted flags; ``store_true`` flags are bare. The facts are
``config.openrlhf.<section>.<flag>``; releases up to v0.8.x spelled them flat (``--bf16``,
``--zero_stage 3``, ``--packing_samples``: openrlhf/cli/train_ppo_ray.py l.272-338 at v0.8.11),
read as ``config.openrlhf.<flag>``.

What they mean (train_ppo_ray.py at 3c3be62): ``--ds.param_dtype`` bf16 (default) | fp16
(l.310-316; the DeepSpeed config's bf16/fp16 block, openrlhf/utils/deepspeed/deepspeed_utils.py
l.49-54), ``--ds.zero_stage`` (default 2, l.308), ``--actor.gradient_checkpointing_enable``
(l.309; ``--model.`` in train_sft.py l.168), ``--ds.packing_samples`` (l.356), which
``--train.dynamic_batch_enable`` turns on (l.647-650), ``--data.max_len`` (l.379),
``--train.micro_batch_size`` (l.393). Rollout: vLLM engines when ``--vllm.num_engines`` > 0
(l.55), built with ``dtype: bfloat16`` and no quantization argument
(openrlhf/trainer/ray/vllm_engine.py l.266-282), so vLLM serves the actor model in BF16 unless
its checkpoint carries an FP8 quantization_config (not read here: a name marked FP8 leaves the
rollout precision Unknown). ``--algo.advantage.is_correction_enable`` is importance-sampling
correction of the rollout/trainer mismatch (l.257).

OpenRLHF has no FP8 training switch there nor at v0.11.0 (no ``fp8`` anywhere in openrlhf/):
FP8 is "not asked", unless the line carries a flag naming fp8 this reader does not know (then
Unknown).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._derived import IntentOut
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, View
from preflight.frameworks.ckptconfig import weights
from preflight.frameworks.ckptname import FP8_NAME
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = "openrlhf"
PREFIX = f"config.{KIND}"
AT = "3c3be6234e0c"
ENTRY = re.compile(r"^openrlhf\.cli\.(?:train|serve)_\w+$|(?:^|/)openrlhf/cli/(?:train|serve)_\w+"
                   r"\.py$")
HINT = re.compile(r"\bopenrlhf[./]cli[./](?:train|serve)_\w+")
# flat flags of releases up to v0.8.x that take a value (openrlhf/cli/train_ppo_ray.py at v0.8.11)
_FLAT_VALUES = frozenset({
    "zero_stage", "micro_train_batch_size", "micro_rollout_batch_size", "train_batch_size",
    "rollout_batch_size", "max_len", "prompt_max_len", "generate_max_len", "vllm_num_engines",
    "vllm_tensor_parallel_size", "pretrain", "reward_pretrain", "critic_pretrain", "param_dtype",
    "save_path", "ckpt_path", "dataset", "prompt_data", "max_samples", "max_epochs",
    "learning_rate", "actor_learning_rate", "critic_learning_rate", "init_kl_coef",
    "input_key", "output_key", "label_key", "n_samples_per_prompt", "max_tokens_per_gpu",
    "vllm_gpu_memory_utilization", "vllm_sync_backend", "attn_implementation",
    "actor_num_nodes", "actor_num_gpus_per_node", "ring_attn_size", "ds_tensor_parallel_size"})
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), dotted_flags=True,
                value_flags=_FLAT_VALUES)


def score(data: Any) -> int:
    """OpenRLHF is read from its launch lines only."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("OpenRLHF is configured on its command line; pass the script that runs "
                     "python3 -m openrlhf.cli.train_...")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The flags of the first ``openrlhf.cli`` command that trains."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    merged = merged_facts(read, KIND, None)
    facts, prov = dict(merged.facts), dict(merged.provenance)
    for name, (value, src) in read.flags.items():       # flat flags (v0.8.x)
        facts[f"{PREFIX}.{name}"], prov[f"{PREFIX}.{name}"] = value, src
    entry = read.launch.entry.text.rsplit("/", 1)[-1].removesuffix(".py").rsplit(".", 1)[-1]
    facts[f"{PREFIX}.entry"] = entry
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.entry.offset) + 1)
    model = next((f"{PREFIX}.{k}" for k in ("actor.model_name_or_path", "pretrain")
                  if f"{PREFIX}.{k}" in facts), None)
    held = weights(facts[model], path) if model else None
    if held is not None and held.source is not None:
        # vLLM serves the checkpoint in the format its quantization_config names (OpenRLHF
        # passes no quantization): its config.json, where the folder is inside the job
        facts[f"{PREFIX}.checkpoint_weights"] = held.fp8
        prov[f"{PREFIX}.checkpoint_weights"] = held.source
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _first(s: View, *keys: str) -> str | None:
    return next((k for k in keys if s.has(k)), None)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    s = View(f, KIND, prov)
    out = IntentOut()
    # a flag naming fp8, or an fp8 value of --ds.param_dtype (refused by the parser at AT:
    # choices bf16 | fp16), is a version this reader does not know
    fp8_flags = sorted(n[len(PREFIX) + 1:] for n in f if n.startswith(PREFIX + ".") and
                       ("fp8" in n[len(PREFIX) + 1:].lower() or
                        (isinstance(f[n], str) and n.endswith("param_dtype") and
                         "fp8" in f[n].lower())))
    if fp8_flags:
        out["fp8"] = (Unknown(f"--{fp8_flags[0]}: OpenRLHF had no FP8 flag up to {AT} "
                              "(v0.11.0); what this one does is not known here"),
                      s.src(fp8_flags[0]))
    else:
        out["fp8"] = (False, f"OpenRLHF has no FP8 training switch (--ds.param_dtype is bf16 or "
                             f"fp16: openrlhf/cli/train_ppo_ray.py l.310-316 @ {AT})")
    out["distributed"] = ("deepspeed", s.src("entry", "OpenRLHF trains with DeepSpeed"))
    dtype = _first(s, "ds.param_dtype", "param_dtype")
    if dtype is not None:
        value = f.get(f"{PREFIX}.{dtype}")
        out["precision"] = ((value if value in ("bf16", "fp16") else
                             Unknown(f"--{dtype} {str(value)[:40]!r} is not bf16 or fp16")
                             if not isinstance(value, Unknown) else value), s.src(dtype))
    elif s.truthy("bf16"):
        out["precision"] = ("bf16", s.src("bf16"))
    elif not any(s.has(k) for k in ("bf16", "fp16")) and _dotted(f):
        out.default("precision", ("bf16", f"OpenRLHF default --ds.param_dtype bf16 "
                                          f"(train_ppo_ray.py l.310-316 @ {AT})"))
    zero = _first(s, "ds.zero_stage", "zero_stage")
    if zero is not None:
        raw = f.get(f"{PREFIX}.{zero}")
        out["zero_stage"] = (s.int(zero) if s.int(zero) is not None else raw
                             if isinstance(raw, Unknown) else
                             Unknown(f"--{zero} {str(raw)[:40]!r} is not an integer"), s.src(zero))
    else:
        out.default("zero_stage", (2, f"OpenRLHF default --ds.zero_stage 2 (l.308 @ {AT})"))
    ckpt = _first(s, "actor.gradient_checkpointing_enable", "model.gradient_checkpointing_enable",
                  "gradient_checkpointing")
    out["activation_checkpointing"] = (s.truthy(ckpt) if ckpt else False,
                                       s.src(ckpt, "OpenRLHF default (store_true, off)"))
    pack = _first(s, "ds.packing_samples", "packing_samples")
    dyn = _first(s, "train.dynamic_batch_enable", "use_dynamic_batch")
    if dyn is not None and s.truthy(dyn):
        out["packing"] = (True, s.src(dyn))     # train_ppo_ray.py l.647-650: forces packing
    elif pack is not None:
        out["packing"] = (s.truthy(pack), s.src(pack))
    else:
        out.default("packing", (False, "OpenRLHF default (--ds.packing_samples store_true, off)"))
    seq = _first(s, "data.max_len", "max_len")
    if seq is not None and s.int(seq) is not None:
        out["seq_len"] = (s.int(seq), s.src(seq))
    micro = _first(s, "train.micro_batch_size", "micro_train_batch_size")
    if micro is not None and s.int(micro) is not None:
        out["micro_batch"] = (s.int(micro), s.src(micro))
    nodes = s.int(_first(s, "actor.num_nodes", "actor_num_nodes") or "actor.num_nodes")
    gpus_key = _first(s, "actor.num_gpus_per_node", "actor_num_gpus_per_node")
    gpus = s.int(gpus_key) if gpus_key else None
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), s.src(gpus_key))
    _rollout(s, f, out)
    return out.build()


def _dotted(f: Mapping[str, Any]) -> bool:
    """Whether the line uses the dotted flags of releases after v0.8 (param_dtype defaults)."""
    return any("." in n[len(PREFIX) + 1:] for n in f if n.startswith(PREFIX + ".") and
               n != f"{PREFIX}.entry")


def _rollout(s: View, f: Mapping[str, Any], out: IntentOut) -> None:
    """vLLM rollout of train_ppo_ray: engines, FP8 (from the model's name), IS correction."""
    engines = _first(s, "vllm.num_engines", "vllm_num_engines")
    if engines is None:
        return
    n = s.int(engines)
    if n is None or n <= 0:
        return
    out["rollout.engine"] = ("vllm", s.src(engines))
    model = _first(s, "actor.model_name_or_path", "pretrain")
    name = f.get(f"{PREFIX}.{model}") if model else None
    read = f"{PREFIX}.checkpoint_weights"
    fp8: Any = False
    if model and read in f:
        fp8 = f[read]                       # its config.json (inside the job)
    elif isinstance(name, Unknown):
        fp8 = Unknown(f"--{model}: {name.reason}; vLLM serves it in the precision of its "
                      "quantization_config")
    elif isinstance(name, str) and FP8_NAME.search(name[:4096]):
        fp8 = Unknown(f"--{model} {name[:80]!r} looks like an FP8 checkpoint: OpenRLHF builds "
                      "its vLLM engines with dtype bfloat16 and no quantization argument "
                      f"(vllm_engine.py l.266-282 @ {AT}), but vLLM follows the checkpoint's "
                      "quantization_config, not read here")
    out["rollout.fp8"] = (fp8, s.src("checkpoint_weights") if model and read in f else
                          s.src(model) if model and not isinstance(fp8, bool) else
                          f"OpenRLHF's vLLM engines: dtype bfloat16, no quantization "
                          f"(openrlhf/trainer/ray/vllm_engine.py l.266-282 @ {AT})")
    out["rollout.kv_cache_fp8"] = (False, f"OpenRLHF passes no kv_cache_dtype to vLLM "
                                          f"(vllm_engine.py l.266-282 @ {AT})")
    corr = _first(s, "algo.advantage.is_correction_enable", "enable_vllm_is_correction")
    out["rollout.is_correction"] = (s.truthy(corr) if corr else False,
                                    s.src(corr, "OpenRLHF default (store_true, off: "
                                                f"train_ppo_ray.py l.257 @ {AT})"))


FRAMEWORK = Framework(
    kind=KIND, title="OpenRLHF", formats=("text",), score=score, read=read_yaml, derive=derive,
    # its own --ds.zero_stage builds the DeepSpeed config (deepspeed_utils.py): no JSON to rank
    precedence=21, zero_stage_rank=7,
    defaults=(
        Default("--ds.param_dtype", "bf16", f"OpenRLHF {AT}", "openrlhf/cli/train_ppo_ray.py"),
        Default("--ds.zero_stage", "2", f"OpenRLHF {AT}", "openrlhf/cli/train_ppo_ray.py"),
    ),
    runs_on=("deepspeed",),
    distributions=("openrlhf",), rule_area="ORLHF",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    bool_keys=("ds.packing_samples", "packing_samples", "actor.gradient_checkpointing_enable",
               "model.gradient_checkpointing_enable", "gradient_checkpointing",
               "train.dynamic_batch_enable", "use_dynamic_batch", "bf16",
               "algo.advantage.is_correction_enable", "enable_vllm_is_correction",
               "train.colocate_all", "colocate_all_models"),
    shape_keys=(("seq", ("data.max_len", "max_len")),
                ("micro_batch", ("train.micro_batch_size", "micro_train_batch_size")),
                ("model", ("actor.model_name_or_path", "model.model_name_or_path", "pretrain"))),
)
