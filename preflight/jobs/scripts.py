"""Text configs: launch scripts (``accelerate launch``, HF Trainer flags, Megatron flags) and
argparse argument files, to facts; a script bash would not run is a problem.

Shell scripts (by extension or a ``#!...sh`` first line; argument files have no shell syntax)
are checked before their flags are read: an unterminated quote or ``(`` (:mod:`.shell`) makes
the file unusable, and Windows line endings are reported, with the facts still read from the
script as meant.
"""

from __future__ import annotations

import re

from preflight.frameworks import _launchers as launchers
from preflight.frameworks import megatron_args as megatron
from preflight.frameworks import swift
from preflight.jobs import launch, shell
from preflight.jobs.parse import ParseError
from preflight.jobs.shellvars import collect_variables, strip_comments, unterminated_heredoc
from preflight.jobs.sourcing import sourced
from preflight.jobs.types import ConfigProblem, Linked, ReaderOutput

_NO_LAUNCH = {
    "accelerate": "no `accelerate launch` command in this script",
    "hf_trainer": "no HF Trainer arguments (--output_dir, --per_device_train_batch_size) in this "
                  "script",
}


def is_shell(path: str, text: str) -> bool:
    """A shell script (argparse ``@file`` argument files have no shell quoting)."""
    return path.lower().endswith((".sh", ".bash", ".slurm", ".sbatch")) or (
        text.startswith("#!") and "sh" in text.partition("\n")[0])


def read(path: str, text: str, kind: str | None, explicit: bool,
         inherited: dict[str, str] | None = None) -> tuple[str | None, ReaderOutput]:
    """(kind, facts) of a text config; raises :class:`ParseError` for an unusable one."""
    crlf: ConfigProblem | None = None
    shell_script = is_shell(path, text)   # \r\n below does not change the #! line's "sh"
    if shell_script and "\r\n" in text:
        # bash keeps the \r: `\<CR><LF>` is no line continuation and every word ends in \r
        # ("$'\r': command not found"). Read what the script means, and say it will not run.
        crlf = ConfigProblem(path, text.count("\n", 0, text.index("\r\n")) + 1, (
            "Windows (CRLF) line endings: bash keeps the \\r, so line continuations break and "
            "commands fail ($'\\r': command not found); convert it with dos2unix"))
    text = text.replace("\r\n", "\n")   # argument files: Python reads them with universal newlines
    if shell_script and (open_at := shell.unterminated(text)):
        what, line = open_at
        raise ParseError(f"{what} opened here is never closed: bash stops at the end of the file "
                         "with a syntax error, so this script would not start the job", line)
    heredoc = unterminated_heredoc(text) if shell_script and "<<" in text else None
    if heredoc is not None:
        # The body runs to the end of the file as the here-document's text: no command after
        # its start runs, so none of it is a launch line. Blank it, keeping the lines.
        line, delimiter = heredoc
        start = sum(len(x) + 1 for x in text.split("\n")[:line])
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:])
        crlf_or_doc = ConfigProblem(path, line, (
            f"a here-document (<<{delimiter}) opened here is never closed: bash takes the rest of "
            "the file as its text, so nothing after this line runs; its lines were not read as "
            "commands"), level="warning", fix=f"Add a line {delimiter} where the text ends.")
        crlf = crlf or crlf_or_doc
    files, outer = sourced(path, text) if shell_script else ([], {})
    outer = {**(inherited or {}), **outer}
    try:
        got, out = _read(path, text, kind, explicit, outer)
    except ParseError as exc:
        if heredoc is None:
            raise
        raise ParseError(f"{exc.message}; the here-document (<<{heredoc[1]}) opened at line "
                         f"{heredoc[0]} is never closed, so bash takes the rest of the file as its "
                         "text and nothing after that line runs", heredoc[0]) from None
    if got is not None and files:
        own = collect_variables(strip_comments(text), inherited)
        # what it sources belongs to this job (read as this kind, if it holds any settings)
        out = ReaderOutput(out.facts, out.provenance, out.problems, (*out.linked, *(
            Linked(f, got, path, key="source", optional=True, variables=tuple(own.items()))
            for f in files)))
    if crlf is not None and got is not None:
        out = ReaderOutput(out.facts, out.provenance, (crlf, *out.problems), out.linked)
    return got, out


def _read(path: str, text: str, kind: str | None, explicit: bool, outer: dict[str, str],
          ) -> tuple[str | None, ReaderOutput]:
    out: ReaderOutput | None = None
    # override launch lines (verl, NeMo-RL, Megatron-Bridge, NeMo-Automodel) and slime
    launched = kind if kind in launchers.KINDS else \
        launchers.detect(text) if kind is None else None
    if launched is not None:
        out = launchers.read_text(launched, path, text, outer)
        if out.facts:
            return launched, out
        if kind is not None:
            if not explicit:
                return None, ReaderOutput()
            raise ParseError(f"no {launched} launch line found in this script")
        out = None
    if kind == "swift" or (kind is None and swift.COMMAND.search(text)):
        # `megatron sft --fp8_recipe ...`: ms-swift, before the Megatron and HF checks below
        return "swift", swift.read_text(path, text, outer)
    if kind in (None, "accelerate", "hf_trainer") and (
            launch.LAUNCH.search(text) or launch.HF_HINT.search(text)):
        out = launch.read(path, text, outer)
        got = launch.kind_of(out.facts) or (out.linked[0].kind if out.linked else None)
        if got is not None and kind is None:
            return got, out
        if kind is not None and (any(n.startswith(f"config.{kind}.") for n in out.facts) or
                                 any(link.kind == kind for link in out.linked)):
            return kind, out   # `--kind hf_trainer` on an `accelerate launch ... --bf16` line
    if kind in ("accelerate", "hf_trainer"):
        if not explicit:
            return None, ReaderOutput()
        other = launch.kind_of((out if out is not None else launch.read(path, text)).facts)
        raise ParseError(_NO_LAUNCH[kind] + (f" (it holds {other} settings: --kind {other})"
                                             if other else ""))
    if kind is None and not megatron.TEXT_HINTS.search(text):
        if explicit:
            raise ParseError("cannot tell which framework this file is for (no `accelerate "
                             "launch` or HF Trainer command, no Megatron arguments); pass "
                             "--kind to say")
        return None, ReaderOutput()
    out = megatron.read_args_text(path, text, outer)
    if not out.facts:
        if not explicit:
            return None, ReaderOutput()
        raise ParseError("no --arguments found in this file")
    return "megatron", out
