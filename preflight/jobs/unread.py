"""What a job folder holds that was not read, said once (issue 22 item 5: ``train.py`` was
skipped without a word, and a launch script no reader recognised disappeared).

A folder is scanned for config-like files and Python scripts. Each file that ends up outside the
job is named with why: a config-like file or script no framework recognises (it may hold the
job's settings: a warning), a file no file of the job names (a leftover beside the job), a Python
file with no call any framework reads (model or data code). Python scripts are only parsed when
their text holds a framework's words (``Framework.python_hint``), at most :data:`MAX_SCRIPTS`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from preflight.reading.parse import read_text
from preflight.reading.types import ConfigProblem

MAX_SCRIPTS = 16
"""Python files of a folder tested for a framework's words (each read costs a file read)."""
MAX_NAMED = 12
"""Files named in the finding; more are counted."""

UNRECOGNISED = "no framework fp8-doctor reads recognises it"
LEFTOVER = "not part of the job: no file of the job names it"
CODE = "Python code without a call any framework reads"
AFTER = ("run by the launch script besides the training (data preparation, evaluation, "
         "export, merging, conversion): not the training's config")
WARN = (UNRECOGNISED,)


def other_kind(kind: str) -> str:
    """Why a folder file was left out under ``--kind``."""
    return f"not a {kind} file, and --kind {kind} was given"


def python_candidates(scripts: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(scripts to read, scripts left out)``: those whose text holds a framework's words
    (``TrainingArguments``, ``Accelerator``, ``Trainer.Config`` ...), the rest."""
    from preflight.frameworks import FRAMEWORKS

    hints = [f.python_hint for f in FRAMEWORKS if f.python_hint is not None]
    take: list[str] = []
    skip: list[str] = []
    for n, path in enumerate(scripts):
        if n >= MAX_SCRIPTS:
            skip.append(path)
            continue
        try:
            text = read_text(path)
        except Exception:  # noqa: BLE001 - unreadable here: listed as not read
            skip.append(path)
            continue
        (take if any(h.search(text) for h in hints) else skip).append(path)
    return take, skip


def problem(not_read: dict[str, str], roots: Sequence[str]) -> ConfigProblem | None:
    """One finding naming every file of the folder(s) that was not read, with why."""
    if not not_read:
        return None
    base = os.path.commonpath([os.path.abspath(r) for r in roots]) if roots else ""

    def name(path: str) -> str:
        full = os.path.abspath(path)
        return os.path.relpath(full, base) if base and full.startswith(base) else path

    items = sorted(not_read.items(), key=lambda kv: (kv[1] not in WARN, kv[0]))
    shown = "; ".join(f"{name(p)} ({why})" for p, why in items[:MAX_NAMED])
    more = f"; and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else ""
    level = "warning" if any(why in WARN for _, why in items) else "info"
    return ConfigProblem(
        base or items[0][0], None,
        f"{len(items)} file(s) of the folder were not read: {shown}{more}. Settings in them, "
        "if any, were not checked", level=level, code="not_read",
        fix="If one of them configures the job, name it (fp8-doctor check FILE ...), with "
            "--kind KIND when it is a framework fp8-doctor reads.")
