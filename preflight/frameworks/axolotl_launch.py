"""axolotl launch lines: ``axolotl train config.yml [--key value ...]`` (or ``python -m
axolotl.cli.train config.yml``), and the commands that do not train.

How axolotl reads them (src/axolotl/cli/main.py at v0.18.0): ``train`` takes the config YAML as
its argument and every config field as an option (``--learning-rate 1e-4``; a bool field as
``--flag`` / ``--no-flag``: cli/utils/args.py ``add_options_from_config``), which override the
YAML's values. ``preprocess``, ``evaluate``, ``inference``, ``merge-lora``,
``merge-sharded-fsdp-weights``, ``quantize``, ``vllm-serve`` and ``lm-eval`` take a config too but
do not train: the YAML each names belongs to the job (a folder scan must not take it for a second
job), never its config (``Linked.after``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.facts import Unknown
from preflight.reading import launch, launchpick
from preflight.reading.parse import usable_key
from preflight.reading.refs import named
from preflight.reading.shellvars import collect_variables, strip_comments
from preflight.reading.types import ReaderOutput

KIND = "axolotl"
COMMAND = re.compile(launch.BIN + r"axolotl[ \t]+train\b|(?<![\w.])axolotl\.cli\.train\b")
OTHER = re.compile(launch.BIN + r"axolotl[ \t]+(?:preprocess|evaluate|inference|merge-lora|"
                   r"merge-sharded-fsdp-weights|quantize|vllm-serve|lm-eval)\b|"
                   r"(?<![\w.])axolotl\.cli\.(?:preprocess|evaluate|inference|merge_lora|"
                   r"merge_sharded_fsdp_weights|quantize|vllm_serve)\b")
_CONFIG = (".yaml", ".yml")
TRAINS = (("axolotl", "train"), ("axolotl.cli.train",))
"""Its commands that train (:data:`OTHER` do not): :attr:`Launch.trains`."""


SERVE = re.compile(launch.BIN + r"axolotl[ \t]+vllm-serve\b|(?<![\w.])axolotl\.cli\.vllm_serve\b")
"""``axolotl vllm-serve CONFIG``: the vLLM server of ``trl.vllm_mode: server`` GRPO, started
from the same YAML as training (src/axolotl/cli/vllm_serve.py l.38-39 @ v0.18.0: ``model =
cfg.base_model``)."""
SERVED = f"config.{KIND}.cli.vllm_serve"
"""True where the job's launch script starts ``axolotl vllm-serve`` on the config it trains;
Unknown with why where it serves another file (:mod:`.axolotl_rl` reads it)."""


def read(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """The first training command's config (linked) and options (``config.axolotl.*``, winning
    over the YAML); the configs of the other axolotl commands linked as not the job's config;
    an ``axolotl vllm-serve`` of the trained config as :data:`SERVED`."""
    got = launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                  key="axolotl", train_args=_train_args, config_ends=_CONFIG,
                                  skip_flags=True)
    trained = next((ln.path for ln in got.linked if ln.kind == KIND and not ln.after), None)
    if trained is None:
        return got
    def serving(path: str, text: str, outer: dict[str, str] | None) -> ReaderOutput:
        said = _served(path, text, outer, trained)
        return ReaderOutput({SERVED: said[0]}, {SERVED: said[1]}) if said else ReaderOutput()

    # a server command in a branch that does not run starts none; several that may run and
    # differ leave it Unknown (reading/launchpick.py, as for training commands)
    served = launchpick.read(serving, path, text, outer or {}, SERVES)
    if SERVED not in served.facts:
        return got
    facts, prov = dict(got.facts), dict(got.provenance)
    facts[SERVED], prov[SERVED] = served.facts[SERVED], served.provenance[SERVED]
    return ReaderOutput(facts, prov, got.problems, got.linked)


SERVES = (("axolotl", "vllm-serve"),)


def _served(path: str, text: str, outer: dict[str, str] | None, trained: str,
            ) -> tuple[Any, str] | None:
    """``axolotl vllm-serve X`` in the script: True when X is the trained config, Unknown when
    it is another file or not a plain path; None when the script starts no server (a line that
    only prints, or a comment, starts none)."""
    text = strip_comments(text)
    variables = collect_variables(text, outer, script=path)
    out = launch.Out(path, text)
    match = launch.find(SERVE, text)
    if match is None:
        return None
    _, end = launch.command_at(text, match.start())
    words = launch.tokens(text, match.end(), end)[:launch.MAX_ARGS]
    first = next(((w, p) for w, p in words if not w.startswith("-")), None)
    where = str(out.where(match.start()))
    if first is None:
        return Unknown(f"`axolotl vllm-serve` at {where} names no config"), where
    config = launch.value(first[0], variables)
    if not isinstance(config, str) or "$" in config:
        return Unknown(f"`axolotl vllm-serve` at {where} serves a config named by a value not "
                       "known here"), where
    link = named(config, KIND, path, where, key="axolotl vllm-serve", line=out.line(first[1]))
    if link.missing or os.path.normpath(link.path) != os.path.normpath(trained):
        return Unknown(f"`axolotl vllm-serve {config[:80]}` at {where} serves another config "
                       "than the one trained (its base_model and vllm: section are the "
                       "server's)"), where
    return True, where


_MODULE = re.compile(r"^axolotl\.cli\.train$|(?:^|/)axolotl/cli/train\.py$")


def launched(script: str) -> bool:
    """Whether ``accelerate launch`` / ``torchrun`` runs axolotl's training entry point (``-m
    axolotl.cli.train``, the form of axolotl's README before its ``axolotl`` command)."""
    return bool(_MODULE.search(script))


def train_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """The words after ``axolotl train`` / ``-m axolotl.cli.train``: the config YAML (linked)
    and its options (``config.axolotl.*``)."""
    _train_args(out, words, variables)


def _train_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """``config.yml`` (linked) and ``--key value`` / ``--flag`` / ``--no-flag`` options; the
    words after ``--`` go to the launcher (accelerate / torchrun), not to axolotl."""
    if "--" in [w for w, _ in words]:
        words = words[:[w for w, _ in words].index("--")]
    config = next(((w, p) for w, p in words if not w.startswith("-")), None)
    if config is not None:
        target = str(launch.value(config[0], variables))
        if target.lower().endswith(_CONFIG):
            out.link(target, KIND, config[1], "axolotl train CONFIG")
    found, _ = launch.flags([(w, p) for w, p in words if config is None or p != config[1]],
                            set(), stop_at_positional=False)
    for flag, raw, pos in found:
        if flag in {"launcher", "cloud", "sweep"}:
            continue
        name = flag
        value: Any = launch.value(raw, variables)
        if raw is None and flag.startswith("no-"):
            name, value = flag[3:], False
        key = name.replace("-", "_")
        if usable_key(key):
            out.put(f"config.{KIND}.{key}", value, pos)
