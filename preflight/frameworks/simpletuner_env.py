"""SimpleTuner's ``config.env`` form: ``export BASE_MODEL_PRECISION="fp8-torchao"`` lines that
SimpleTuner turns into its command-line options, read as ``config.simpletuner.<option>``.

Read at bghira/SimpleTuner v4.8.0 (0a03ecf3), simpletuner/helpers/configuration/env_file.py:
``parse_env_file`` (l.149-189) strips each line, skips ``#`` and empty lines, drops a leading
``export ``, takes ``KEY+=value`` as words appended to KEY and ``KEY=value`` with one pair of
matching quotes stripped; ``load_env_config`` (l.231-280) maps the variables of
``env_to_args_map`` (l.3-146) to options -- ``"true"`` gives the bare flag, ``"false"`` nothing,
any other value ``--option=value`` -- and appends ``TRAINER_EXTRA_ARGS`` split on spaces last,
so an option given there wins (argparse keeps the last). The loader uses ``config.env`` as the
config when the job's ``config/`` has no config.json or config.toml (loader.py
``auto_detect_config_backend``, l.37-54). A value holding ``${...}`` is Unknown here (SimpleTuner
resolves placeholders at run time, template_vars.py).
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.types import ReaderOutput

PREFIX = "config.simpletuner"
# the variables of env_to_args_map (v4.8.0) that the SimpleTuner reader derives from or that
# claim the file; an option any other variable sets decides no FP8 here
ENV_TO_ARG = {
    "BASE_MODEL_PRECISION": "base_model_precision", "MIXED_PRECISION": "mixed_precision",
    "MODEL_FAMILY": "model_family", "MODEL_TYPE": "model_type",
    "MODEL_NAME": "pretrained_model_name_or_path", "DATALOADER_CONFIG": "data_backend_config",
    "TRAIN_BATCH_SIZE": "train_batch_size",
    "USE_GRADIENT_CHECKPOINTING": "gradient_checkpointing", "QUANTIZE_VIA": "quantize_via",
    "QUANTIZATION_CONFIG": "quantization_config", "LORA_TYPE": "lora_type",
    "OPTIMIZER": "optimizer", "LEARNING_RATE": "learning_rate",
    "MAX_NUM_STEPS": "max_train_steps", "RESOLUTION": "resolution",
    "RESOLUTION_TYPE": "resolution_type", "TRAINING_NUM_PROCESSES": "num_processes",
}
EXTRA = "TRAINER_EXTRA_ARGS"
# a text file is SimpleTuner's config.env when it sets one of these (no other trainer's)
FLAGS = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?(?:BASE_MODEL_PRECISION|DATALOADER_CONFIG|"
                   r"TRAINER_EXTRA_ARGS)[ \t]*\+?=")
MAX_LINES = 5000
MAX_WORDS = 512


def _lines(text: str) -> dict[str, tuple[list[str], int]]:
    """``parse_env_file``: each variable's words and the line that last set it."""
    out: dict[str, tuple[list[str], int]] = {}
    for number, raw in enumerate(text.split("\n")[:MAX_LINES], 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[7:]
        if "+=" in line:
            key, value = line.split("+=", 1)
            words = value.strip('"').strip("'").strip().split()[:MAX_WORDS]
            old = out.get(key.strip(), ([], number))[0]
            out[key.strip()] = ((old + words)[:MAX_WORDS], number)
        elif "=" in line:
            key, value = line.split("=", 1)
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[key.strip()] = (value.split()[:MAX_WORDS], number)
    return out


def _typed(value: str) -> Any:
    return Unknown(f"{value[:60]!r} holds a placeholder SimpleTuner resolves when it runs") \
        if "${" in value else value


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The options a ``config.env`` gives SimpleTuner (``outer``: unused, the file is read by
    SimpleTuner's own parser, not a shell)."""
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    found = _lines(text)
    for env, arg in ENV_TO_ARG.items():
        if env not in found:
            continue
        words, line = found[env]
        value = " ".join(words)
        if value.lower() == "false" or not value:
            continue                    # no flag given: the option's default
        facts[f"{PREFIX}.{arg}"] = True if value.lower() == "true" else _typed(value)
        prov[f"{PREFIX}.{arg}"] = Source(path, line)
    if EXTRA in found:
        words, line = found[EXTRA]
        for name, value in _options(words):
            facts[f"{PREFIX}.{name}"] = _typed(value) if isinstance(value, str) else value
            prov[f"{PREFIX}.{name}"] = Source(path, line)
    return ReaderOutput(facts, prov)


def _options(words: list[str]) -> list[tuple[str, Any]]:
    """``--k=v``, ``--k v`` and a bare ``--k`` (a flag: True) of TRAINER_EXTRA_ARGS."""
    out: list[tuple[str, Any]] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("--") or len(word) < 3:
            continue
        name, eq, value = word[2:].partition("=")
        if eq:
            out.append((name, value))
        elif i < len(words) and not words[i].startswith("--"):
            out.append((name, words[i]))
            i += 1
        else:
            out.append((name, True))
    return out
