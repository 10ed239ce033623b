"""``accelerate launch ...`` lines and HF TrainingArguments flags in launch scripts.

Many FP8 jobs are started as ``accelerate launch --config_file fsdp.yaml --mixed_precision fp8
--fp8_backend te train.py --bf16 True --output_dir out``. Two things are read from such a line:

- **accelerate flags** (before the training script) -> ``config.accelerate.*``. They override the
  config file (accelerate >= 1.5.0, PR #3409: "CLI args take precedence over the config file"),
  so they come first when facts are combined, and ``--config_file`` is followed. Flags are
  normalized to the config-file key they override, so one rule sees both spellings:
  ``--fp8_format`` -> ``fp8_config.fp8_format``, other ``--fp8_<key>`` -> ``fp8_config.<key>``
  (``commands/launch.py`` defines ``--fp8_backend``, ``--fp8_amax_history_len`` ... for the
  YAML's ``backend``, ``amax_history_len``), DeepSpeed flags -> ``deepspeed_config.<key>``,
  ``--fsdp_*`` -> ``fsdp_config.fsdp_*``, ``--dynamo_*`` -> ``dynamo_config.dynamo_*``,
  ``--use_deepspeed`` / ``--use_fsdp`` / ``--multi_gpu`` / ``--use_megatron_lm`` ->
  ``distributed_type``; other flags keep their name (``--mixed_precision``). Each flag is also
  ``config.accelerate.cli.<same name>``, so rules can tell a flag from the YAML key it overrides.
- **HF TrainingArguments** given as flags to the training script (after ``accelerate launch
  ... train.py``, or on any ``torchrun`` / ``deepspeed`` / ``python`` line that carries
  ``--output_dir`` or ``--per_device_train_batch_size``) -> ``config.hf_trainer.<flag>``
  (:func:`.hf_trainer.script_args`); LLaMA-Factory's ``src/train.py`` with its flags or YAML ->
  ``config.llamafactory.*`` (:mod:`.llamafactory_launch`).
"""

from __future__ import annotations

import re

from preflight.facts import Unknown
from preflight.frameworks import hf_trainer
from preflight.frameworks.accelerate_prepare import FACT as PREPARE_FACT
from preflight.frameworks.accelerate_prepare import known_trainer
from preflight.reading import launch, launchroot
from preflight.reading.parse import usable_key
from preflight.reading.refs import locate
from preflight.reading.shellvars import (
    collect_variables,
    expand_flag_names,
    runtime_reason,
    strip_comments,
)
from preflight.reading.types import ReaderOutput

KIND = "accelerate"
COMMAND = re.compile(r"(?<![\w-])accelerate(?:[ \t]+launch|-launch)\b")
TRAINS = (("accelerate", "launch"), ("accelerate-launch",))
"""Its commands that train (``accelerate config`` / ``env`` / ``test`` do not; nor a launch of
``eval.py``): :attr:`Launch.trains`."""

_DS_KEYS = {"zero_stage", "offload_optimizer_device", "offload_param_device",
            "offload_optimizer_nvme_path", "offload_param_nvme_path",
            "gradient_accumulation_steps", "gradient_clipping", "zero3_init_flag",
            "zero3_save_16bit_model", "deepspeed_config_file", "deepspeed_hostfile",
            "deepspeed_exclusion_filter", "deepspeed_inclusion_filter",
            "deepspeed_multinode_launcher", "deepspeed_moe_layer_cls_names"}
_DIST = {"use_deepspeed": "DEEPSPEED", "use_fsdp": "FSDP", "multi_gpu": "MULTI_GPU",
         "use_megatron_lm": "MEGATRON_LM"}
# store_true flags of `accelerate launch` (commands/launch.py): they never take a value.
_BARE = frozenset({
    "cpu", "multi_gpu", "tpu", "ipex", "use_xpu", "use_deepspeed", "use_fsdp",
    "use_megatron_lm", "debug", "quiet", "m", "module", "no_python", "same_network",
    "enable_cpu_affinity", "dynamo_use_fullgraph", "dynamo_use_dynamic", "tpu_use_cluster",
    "tpu_use_sudo", "downcast_bf16", "dynamo_use_regional_compilation"})


def _acc_name(flag: str) -> str:
    if flag == "fp8_format":     # the YAML key is already fp8_format (no double prefix)
        return "fp8_config.fp8_format"
    if flag.startswith("fp8_"):
        return f"fp8_config.{flag[4:]}"
    if flag in _DS_KEYS:
        return f"deepspeed_config.{flag}"
    if flag.startswith("fsdp_"):
        return f"fsdp_config.{flag}"
    if flag.startswith("dynamo_"):
        return f"dynamo_config.{flag}"
    return flag


_VARIABLE = re.compile(r"\$(?:\{[^}]*\}?|\w+)")


def _expanded(flag: str, value: object) -> object:
    """``--mixed_precision``'s value, Unknown where it still holds a variable the launch script
    does not set (``--mixed_precision="${MIXED_PRECISION}"``: the environment the script is
    started with, an env file the job does not source) or one set at run time
    (:func:`.shellvars.runtime`); holdout21 crusoe-finetune: the literal ``${MIXED_PRECISION}``
    was read as a precision accelerate refuses. Other flags keep the text: their derivations
    read a value that is no size or name as not known, and an Unknown fact as absent."""
    if not isinstance(value, str) or flag != "mixed_precision":
        return value
    why = runtime_reason(value)
    if why is not None:
        return Unknown(f"--{flag} is set when the launch script runs: {why}")
    found = _VARIABLE.search(value)
    if found is None:
        return value
    return Unknown(f"--{flag} {value[:60]!r} takes {found.group(0)[:40]}, which the launch "
                   "script does not set: its value comes from the environment it is started with")


def _prepare(out: launch.Out, script: str, pos: int, args: list[str]) -> None:
    """``accelerator.prepare_apart`` for a script the job does not hold: a public trainer's
    known calls (:data:`.accelerate_prepare.KNOWN_TRAINERS`), else not known (FP8D-ACC-0095)."""
    flags = {a[2:].split("=", 1)[0] for a in args if a.startswith("--")}
    known = known_trainer(script, flags)
    if known is None:
        value: object = Unknown(f"{script[:80]} (run by this accelerate launch line) was not "
                                "found here: which objects its accelerator.prepare() calls take "
                                "is not known")
    else:
        value = known[0] if isinstance(known[0], str) else Unknown(known[0].reason)
    out.put(PREPARE_FACT, value, pos)


def read(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """Facts from the first ``accelerate launch`` / HF Trainer command line in a script
    (``outer``: variables set by the scripts it sources)."""
    text = strip_comments(text)
    variables = collect_variables(text, outer, script=path)
    text = expand_flag_names(text, variables)
    out = launch.Out(path, text)
    match = launch.find(COMMAND, text)
    if match is None:
        hf_trainer.script_line(out, text, variables)
        return ReaderOutput(out.facts, out.prov, tuple(out.problems), tuple(out.linked))
    _, end = launch.command_at(text, match.start())
    words = launch.tokens(text, match.end(), end)
    out.too_long(words)
    # the line itself is the job's accelerate launch, flags or not: its settings may all come
    # from the environment (`ACCELERATE_MIXED_PRECISION=fp8 accelerate launch train.py`, the
    # prefix read by jobs/scripts.py) or accelerate's default config
    out.put(f"config.{KIND}.cli.launch", True, match.start())
    found, stop = launch.flags(words, _BARE, stop_at_positional=True)
    for flag, raw, pos in found:
        value = _expanded(flag, launch.value(raw, variables))
        if flag == "config_file":
            out.link(value, KIND, pos, "--config_file", own=True)
        elif flag in _DIST:
            out.put(f"config.{KIND}.distributed_type", _DIST[flag], pos)
        elif usable_key(flag) and flag not in {"m", "module"}:
            out.put(f"config.{KIND}.{_acc_name(flag)}", value, pos)
            # The same setting as given on the command line, apart: a rule can tell the
            # YAML's key from the flag that overrides it (FP8D-ACC-0003, issue 12).
            out.put(f"config.{KIND}.cli.{_acc_name(flag)}", value, pos)
    script = launch.value(words[stop][0], variables) if stop < len(words) else None
    above = launchroot.find(script, path) if isinstance(script, str) and \
        script.endswith(".py") and locate(script, path) is None else None
    if isinstance(script, str) and above is not None and above.path is None:
        # the script it runs is not here (nor in one folder above, the repository's top:
        # reading/launchroot.py): what it sets in code (Accelerator(mixed_precision="fp8")) is
        # not known, so "no FP8 setting" would be a guess
        out.put(f"config.{KIND}.cli.script", Unknown(above.why(script) or (
            f"{script[:80]} (run by this accelerate launch line) was not found here: what it "
            "sets in code is not known")), words[stop][1])
        _prepare(out, script, words[stop][1], [w for w, _ in words[stop + 1:]])
    hf_trainer.script_args(out, words[stop + 1:], variables,
                           script if isinstance(script, str) else None)
    return ReaderOutput(out.facts, out.prov, tuple(out.problems), tuple(out.linked))
