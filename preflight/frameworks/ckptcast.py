"""Checkpoint folders the job itself marks FP8: the source of a cast *from* FP8 the job runs, and
the copies of that folder the job makes.

A launcher that converts a checkpoint from FP8 knows its source is FP8: miles'
``U.fp8_cast_bf16(path_src=..., path_dst=...)`` runs DeepSeek's ``tools/fp8_cast_bf16.py
--input-fp8-hf-path {path_src} --output-bf16-hf-path {path_dst}``
(miles/utils/external_utils/command_utils.py l.115-125 at radixark/miles 31f1ca96; slime's
``command_utils`` has the same helper). ``U.rsync_simple(path_src, path_dst)`` is ``rsync -a
{path_src}/ {path_dst}`` (l.79-82 there): a copy, the same weights. So a rollout served from the
cast's source, or from a copy of it, serves FP8 weights (holdout17's miles DeepSeek-V3: the
trainer loads the ``-bf16`` cast, SGLang the rsync'd original). This is evidence in the job, not
a guess from a name: it is taken where the checkpoint's own ``config.json`` was not read.

Only paths the text gives whole count (a part computed when the script runs marks nothing); a
cast or copy under a condition the text does not decide still marks its source (whether the cast
runs does not change what the source holds), but a copy made only under such a condition marks
its destination Unknown with the condition.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks.ckptname import NAME_MAX
from preflight.reading.pysource import Module

CASTS = frozenset({"fp8_cast_bf16"})
"""Helpers whose ``path_src`` is an FP8 checkpoint (module docstring)."""
COPIES = frozenset({"rsync_simple"})
"""Helpers that copy ``path_src`` to ``path_dst`` whole."""
PACKAGES = ("miles.", "slime.")
MAX_CALLS = 64
"""Casts and copies looked at (a hostile script may make thousands)."""


@dataclass(frozen=True)
class Mark:
    """A folder the job marks FP8: the line that says so, and the value (True, or Unknown when
    the copy that makes it is made only under a condition the text does not decide)."""

    fp8: Any
    line: int
    why: str


def _norm(path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip() or len(path) > NAME_MAX or "\x00" in path:
        return None
    return posixpath.normpath(path.strip()).rstrip("/") or "/"


def _pair(call: Any) -> tuple[str | None, str | None]:
    src = call.kwargs.get("path_src", call.args[0] if call.args else None)
    dst = call.kwargs.get("path_dst", call.args[1] if len(call.args) > 1 else None)
    return _norm(src), _norm(dst)


def marks(module: Module) -> dict[str, Mark]:
    """The folders the script marks FP8 (module docstring), by normalised path."""
    casts: list[Any] = []
    copies: list[Any] = []
    for call, _ in module.calls():
        if not call.func.startswith(PACKAGES):
            continue
        if call.name in CASTS:
            casts.append(call)
        elif call.name in COPIES:
            copies.append(call)
        if len(casts) + len(copies) > MAX_CALLS:
            break
    out: dict[str, Mark] = {}
    for call in casts:
        src, _ = _pair(call)
        if src is not None and src not in out:
            out[src] = Mark(True, call.line, f"{call.name}(path_src={src[:120]!r}) at line "
                                             f"{call.line} casts it from FP8")
    # a copy of a marked folder holds the same weights; copies of copies too (bounded)
    for _ in range(len(copies)):
        grew = False
        for call in copies:
            src, dst = _pair(call)
            if src in out and dst is not None and dst not in out:
                held = out[src]
                why = (f"{held.why}; {call.name} at line {call.line} copies it to "
                       f"{dst[:120]!r}")
                fp8 = held.fp8 if call.when is None else Unknown(
                    f"{why}, only {call.when.reason[:160]}")
                out[dst] = Mark(fp8, call.line, why)
                grew = True
        if not grew:
            break
    return out


def marked(module: Module, path: Any) -> Mark | None:
    """The mark of the checkpoint folder ``path``, if the script marks it FP8."""
    at = _norm(path)
    return marks(module).get(at) if at is not None else None
