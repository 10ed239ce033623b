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

import re
from typing import Any

from preflight.reading import launch
from preflight.reading.parse import usable_key
from preflight.reading.types import ReaderOutput

KIND = "axolotl"
COMMAND = re.compile(r"(?<![\w/.-])axolotl[ \t]+train\b|(?<![\w.])axolotl\.cli\.train\b")
OTHER = re.compile(r"(?<![\w/.-])axolotl[ \t]+(?:preprocess|evaluate|inference|merge-lora|"
                   r"merge-sharded-fsdp-weights|quantize|vllm-serve|lm-eval)\b|"
                   r"(?<![\w.])axolotl\.cli\.(?:preprocess|evaluate|inference|merge_lora|"
                   r"merge_sharded_fsdp_weights|quantize|vllm_serve)\b")
_CONFIG = (".yaml", ".yml")
TRAINS = (("axolotl", "train"), ("axolotl.cli.train",))
"""Its commands that train (:data:`OTHER` do not): :attr:`Launch.trains`."""


def read(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """The first training command's config (linked) and options (``config.axolotl.*``, winning
    over the YAML); the configs of the other axolotl commands linked as not the job's config."""
    return launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                   key="axolotl", train_args=_train_args, config_ends=_CONFIG,
                                   skip_flags=True)


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
