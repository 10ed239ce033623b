"""NeMo 2 launch lines: the performance scripts run as modules, and the ``nemo llm`` CLI.

- ``python -m scripts.performance.llm.pretrain_llama3_8b -g b200 -c fp8 -fr mxfp8`` (NeMo's
  ``scripts/performance/README.md``: run from the NeMo checkout's root): the module's file
  ``scripts/performance/llm/pretrain_llama3_8b.py`` is linked with the words after it as its
  command line, so :mod:`.nemo2_py` reads the script with them (``python path/to/x.py`` is
  linked by every launch script already, :func:`preflight.reading.launch.python_scripts`).
- ``nemo llm pretrain|finetune --factory llama3_8b trainer.plugins=... trainer.strategy.
  tensor_model_parallel_size=2`` (NeMo-Run's CLI, ``nemo/collections/llm/api.py`` entry
  points): ``--factory``/``-f`` names the recipe; ``key=value`` words set its attributes,
  read as ``config.nemo2.<the same names as a script's>`` at their line.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from preflight.frameworks import nemo_images
from preflight.reading.launch import Out, command_at, find, tokens
from preflight.reading.refs import named
from preflight.reading.shellvars import collect_variables, strip_comments, typed
from preflight.reading.types import ReaderOutput

KIND = "nemo2"
PREFIX = f"config.{KIND}"
MODULE = re.compile(r"(?<![\w/.-])python[0-9.]*[ \t]+(?:-\w+[ \t]+)*-m[ \t]+"
                    r"(scripts\.performance\.[\w.]+)")
CLI = re.compile(r"(?<![\w/.-])nemo[ \t]+llm[ \t]+(pretrain|finetune|train)\b")
COMMAND = re.compile(f"{MODULE.pattern}|{CLI.pattern}")
# `nemo llm` override keys and the fact each one is (the names nemo2_py gives a script's)
_CLI_KEYS = {"trainer.plugins": "plugins", "trainer.precision": "trainer.precision",
             "trainer.strategy": "trainer.strategy"}
_CLI_PREFIXES = (("trainer.plugins.", "plugins."), ("trainer.strategy.", "strategy."),
                 ("model.config.", "model.config."))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    clean = strip_comments(text)
    variables = collect_variables(clean, outer, script=path)
    out = Out(path, text)
    hit = find(COMMAND, clean)
    if hit is None:
        return ReaderOutput()
    start, end = command_at(clean, hit.start())
    words = tokens(clean, hit.end(), end)
    out.too_long(words)
    if hit.group(1) is not None:                    # python -m scripts.performance...
        module = hit.group(1)
        out.put(f"{PREFIX}.entry", module, hit.start(1))
        link = named(module.replace(".", "/") + ".py", KIND, path, out.where(hit.start(1)),
                     key="python -m", line=out.line(hit.start(1)))
        argv = tuple(str(typed(w, variables)) for w, _ in words)
        out.linked.append(replace(link, overrides=True, argv=argv))
    else:
        out.put(f"{PREFIX}.entry", f"nemo llm {hit.group(2)}", hit.start())
        _cli(out, words, variables)
    return nemo_images.with_pins(path, text, ReaderOutput(out.facts, out.prov,
                                                           tuple(out.problems), tuple(out.linked)))


def _cli(out: Out, words: list[tuple[str, int]], variables: dict[str, str]) -> None:
    """``--factory NAME`` and ``key=value`` words of ``nemo llm <command>``."""
    i = 0
    while i < len(words):
        word, pos = words[i]
        if word in ("--factory", "-f") and i + 1 < len(words):
            out.put(f"{PREFIX}.recipe", _value(words[i + 1][0], variables), words[i + 1][1])
            i += 2
            continue
        key, eq, raw = word.partition("=")
        if eq and not key.startswith("-"):
            name = _CLI_KEYS.get(key) or next(
                (mine + key[len(theirs):] for theirs, mine in _CLI_PREFIXES
                 if key.startswith(theirs)), None)
            if name is not None:
                value = _value(raw, variables)
                if name == "plugins" and isinstance(value, str):
                    value = value.removesuffix("()")
                out.put(f"{PREFIX}.{name}", value, pos)
        i += 1


def _value(raw: str, variables: dict[str, str]) -> Any:
    got = typed(raw, variables)
    if isinstance(got, str):
        low = got.lower()
        if low in ("true", "false"):
            return low == "true"
        if low in ("none", "null"):
            return None
    return got
