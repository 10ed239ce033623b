"""Command lines in shell scripts: ``accelerate launch ...`` and HF Trainer arguments.

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
  ``--output_dir`` or ``--per_device_train_batch_size``) -> ``config.hf_trainer.<flag>``, as
  HfArgumentParser reads them (bare ``--bf16`` is true); ``--deepspeed ds.json`` is followed.

Values: numbers as int/float, ``true``/``false`` (any case) as bools, bare flags as ``true``;
``$VAR`` / ``${VAR:-default}`` from simple assignments in the same script.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from preflight.findings import Source
from preflight.jobs.parse import MAX_FACTS_PER_FILE, usable_key
from preflight.jobs.refs import named
from preflight.jobs.shellvars import collect_variables, expand_flag_names, strip_comments, typed
from preflight.jobs.types import ConfigProblem, Linked, ReaderOutput

LAUNCH = re.compile(r"(?<![\w-])accelerate(?:[ \t]+launch|-launch)\b")
HF_HINT = re.compile(r"--(?:output_dir|per_device_train_batch_size)\b")

_DS_KEYS = {"zero_stage", "offload_optimizer_device", "offload_param_device",
            "offload_optimizer_nvme_path", "offload_param_nvme_path",
            "gradient_accumulation_steps", "gradient_clipping", "zero3_init_flag",
            "zero3_save_16bit_model", "deepspeed_config_file", "deepspeed_hostfile",
            "deepspeed_exclusion_filter", "deepspeed_inclusion_filter",
            "deepspeed_multinode_launcher", "deepspeed_moe_layer_cls_names"}
_DIST = {"use_deepspeed": "DEEPSPEED", "use_fsdp": "FSDP", "multi_gpu": "MULTI_GPU",
         "use_megatron_lm": "MEGATRON_LM"}
# store_true flags of `accelerate launch` (commands/launch.py): they never take a value.
_BARE = {"cpu", "multi_gpu", "tpu", "ipex", "use_xpu", "use_deepspeed", "use_fsdp",
         "use_megatron_lm", "debug", "quiet", "m", "module", "no_python", "same_network",
         "enable_cpu_affinity", "dynamo_use_fullgraph", "dynamo_use_dynamic", "tpu_use_cluster",
         "tpu_use_sudo", "downcast_bf16", "dynamo_use_regional_compilation"}
_END = {";", "&&", "||", "|", "&"}
_TOKEN = re.compile(r""""[^"\n]*"|'[^'\n]*'|[^\s]+""")

Token = tuple[str, int]          # text, offset in the script


def _command_at(text: str, pos: int) -> tuple[int, int]:
    """Start and end offsets of the ``\\``-continued command line that contains ``pos``."""
    start = text.rfind("\n", 0, pos) + 1
    while start > 1 and text[start - 2] == "\\":
        start = text.rfind("\n", 0, start - 1) + 1
    end = pos
    while True:
        nl = text.find("\n", end)
        if nl == -1:
            return start, len(text)
        if text[nl - 1] != "\\":
            return start, nl
        end = nl + 1


MAX_ARGS = 10_000
"""Words of one command line read; a real launch line has fewer than a hundred, and each word
costs time (900 KB of `--x 1 \\` lines took 1.5 s)."""


def _tokens(text: str, start: int, end: int) -> list[Token]:
    out: list[Token] = []
    for m in _TOKEN.finditer(text, start, end):
        if m.group(0) == "\\":
            continue
        if m.group(0) in _END or len(out) > MAX_ARGS:
            break
        out.append((m.group(0), m.start()))
    return out


def _too_long(out: _Out, tokens: list[Token]) -> None:
    if len(tokens) > MAX_ARGS:
        out.problems.append(ConfigProblem(
            out.path, bisect.bisect_right(out.lines, tokens[MAX_ARGS][1]),
            f"the command line has more than {MAX_ARGS:,} words; only those before this line "
            "were read (no real launch line is that long)"))
        del tokens[MAX_ARGS:]


def _flags(tokens: list[Token], bare: set[str], stop_at_positional: bool,
           ) -> tuple[list[tuple[str, str | None, int]], int]:
    """``(flag, raw value or None, offset)`` for each ``--flag``; and where parsing stopped."""
    found: list[tuple[str, str | None, int]] = []
    i = 0
    while i < len(tokens):
        tok, pos = tokens[i]
        if not tok.startswith("--"):
            if stop_at_positional and not tok.startswith("-"):
                return found, i
            i += 1
            continue
        flag, eq, inline = tok[2:].partition("=")
        raw: str | None = inline if eq else None
        if not eq and flag not in bare and i + 1 < len(tokens) and \
                not tokens[i + 1][0].startswith("-"):
            nxt = tokens[i + 1][0]
            if not (stop_at_positional and nxt.endswith(".py")):
                raw = nxt
                i += 1
        found.append((flag, raw, pos))
        i += 1
        if flag in {"m", "module"} and stop_at_positional:
            return found, i + 1
    return found, len(tokens)


def _value(raw: str | None, variables: dict[str, str]) -> Any:
    if raw is None:
        return True
    value = typed(raw, variables)
    if isinstance(value, str) and value.lower() in {"true", "false"}:
        return value.lower() == "true"
    return value


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


class _Out:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.facts: dict[str, Any] = {}
        self.prov: dict[str, str] = {}
        self.problems: list[ConfigProblem] = []
        self.linked: list[Linked] = []

    def where(self, pos: int) -> str:
        return Source(self.path, bisect.bisect_right(self.lines, pos))

    def put(self, name: str, value: Any, pos: int) -> None:
        if len(self.facts) >= MAX_FACTS_PER_FILE and name not in self.facts:
            return          # 100,000 flags are no launch line; each fact costs time to report
        self.facts[name] = value
        self.prov[name] = self.where(pos)

    def link(self, target: Any, kind: str, pos: int, flag: str) -> None:
        if not isinstance(target, str) or "$" in target:
            return
        self.linked.append(named(target, kind, self.path, self.where(pos), key=flag,
                                 line=bisect.bisect_right(self.lines, pos)))


def _hf_args(out: _Out, tokens: list[Token], variables: dict[str, str]) -> None:
    flags, _ = _flags(tokens, set(), stop_at_positional=False)
    if not any(HF_HINT.match("--" + f) for f, _, _ in flags):
        return
    for flag, raw, pos in flags:
        if not usable_key(flag):
            continue
        value = _value(raw, variables)
        out.put(f"config.hf_trainer.{flag}", value, pos)
        if flag == "deepspeed" and isinstance(value, str) and value.endswith(".json"):
            out.link(value, "deepspeed", pos, "--deepspeed")


def read(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """Facts from the first ``accelerate launch`` / HF Trainer command line in a script
    (``outer``: variables set by the scripts it sources)."""
    text = strip_comments(text)
    variables = collect_variables(text, outer)
    text = expand_flag_names(text, variables)
    out = _Out(path, text)
    match = LAUNCH.search(text)
    if match is not None:
        start, end = _command_at(text, match.start())
        tokens = _tokens(text, match.end(), end)
        _too_long(out, tokens)
        flags, stop = _flags(tokens, _BARE, stop_at_positional=True)
        for flag, raw, pos in flags:
            value = _value(raw, variables)
            if flag == "config_file":
                out.link(value, "accelerate", pos, "--config_file")
            elif flag in _DIST:
                out.put("config.accelerate.distributed_type", _DIST[flag], pos)
            elif usable_key(flag) and flag not in {"m", "module"}:
                out.put(f"config.accelerate.{_acc_name(flag)}", value, pos)
                # The same setting as given on the command line, apart: a rule can tell the
                # YAML's key from the flag that overrides it (FP8D-ACC-0003, issue 12).
                out.put(f"config.accelerate.cli.{_acc_name(flag)}", value, pos)
        _hf_args(out, tokens[stop + 1:], variables)
    else:
        hint = HF_HINT.search(text)
        if hint is not None:
            start, end = _command_at(text, hint.start())
            tokens = _tokens(text, start, end)
            _too_long(out, tokens)
            # launcher flags (torchrun --nproc_per_node ...) come before the training script
            script = next((i for i, (t, _) in enumerate(tokens) if t.endswith(".py")), -1)
            _hf_args(out, tokens[script + 1:], variables)
    return ReaderOutput(out.facts, out.prov, tuple(out.problems), tuple(out.linked))


def kind_of(facts: dict[str, Any]) -> str | None:
    """The main kind of what :func:`read` found (accelerate wins over HF arguments)."""
    if any(n.startswith("config.accelerate.") for n in facts):
        return "accelerate"
    if any(n.startswith("config.hf_trainer.") for n in facts):
        return "hf_trainer"
    return None
