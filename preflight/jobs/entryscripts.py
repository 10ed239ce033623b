"""The scripts a launch line runs, as the launch script names them for the walk.

A launch line whose own framework is read from it (``torchrun pretrain_gpt.py --fp8-format
hybrid``: Megatron-LM's flags; ``python3 train.py --actor-num-nodes ...``: slime's; Megatron-
Bridge's ``setup_experiment.py -c fp8_mx``) runs a script that is that framework's entry point:
its settings are the launch line's, and the script itself holds none fp8-doctor reads. Read as
a config of its own, it drew FP8D-CFG-NOT-CONFIG ("no setting ... FP8 is not judged from it")
on every such job that keeps the script beside its launch script, while FP8 was judged from the
line that runs it. Such a script (its text holds the framework's ``Launch.entry``, e.g.
``import megatron``) is linked like a sourced script: read where it holds settings a reader
knows (a Megatron-Bridge recipe script), left out silently where it holds none. A script of any
other kind (``accelerate launch train.py`` whose ``train.py`` builds no Accelerator fp8-doctor
can read) keeps the warning.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace

from preflight.reading.parse import ParseError, read_text
from preflight.reading.types import Linked, ReaderOutput


def linked(got: str, out: ReaderOutput, runs: Sequence[Linked]) -> tuple[Linked, ...]:
    """``runs`` that ``out`` does not name yet; those that are ``got``'s own entry point, where
    ``out`` read ``got``'s settings from the launch, marked ``optional``."""
    named = {os.path.realpath(link.path) for link in out.linked}
    extra = tuple(r for r in runs if os.path.realpath(r.path) not in named)
    from preflight.frameworks import BY_KIND

    fw = BY_KIND.get(got)
    entry = fw.launch.entry if fw is not None and fw.launch is not None else None
    if entry is None or not out.facts:
        return extra
    return tuple(replace(r, optional=True) if not r.missing and _holds(r.path, entry) else r
                 for r in extra)


def _holds(path: str, entry: re.Pattern[str]) -> bool:
    try:
        return bool(entry.search(read_text(path)))
    except (ParseError, OSError, ValueError):
        return False
