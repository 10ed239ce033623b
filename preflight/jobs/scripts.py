"""Text configs: launch scripts (``accelerate launch``, HF Trainer flags, Megatron flags) and
argparse argument files, to facts; a script bash would not run is a problem.

Shell scripts (by extension or a ``#!...sh`` first line; argument files have no shell syntax)
are checked before their flags are read: an unterminated quote or ``(`` (:mod:`.shell`) makes
the file unusable, and Windows line endings are reported, with the facts still read from the
script as meant.
"""

from __future__ import annotations

from preflight.frameworks import megatron_args as megatron
from preflight.jobs import launch, shell
from preflight.jobs.parse import ParseError
from preflight.jobs.types import ConfigProblem, ReaderOutput

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
         ) -> tuple[str | None, ReaderOutput]:
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
    got, out = _read(path, text, kind, explicit)
    if crlf is not None and got is not None:
        out = ReaderOutput(out.facts, out.provenance, (crlf, *out.problems), out.linked)
    return got, out


def _read(path: str, text: str, kind: str | None, explicit: bool,
          ) -> tuple[str | None, ReaderOutput]:
    out: ReaderOutput | None = None
    if kind in (None, "accelerate", "hf_trainer") and (
            launch.LAUNCH.search(text) or launch.HF_HINT.search(text)):
        out = launch.read(path, text)
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
    out = megatron.read_args_text(path, text)
    if not out.facts:
        raise ParseError("no --arguments found in this file")
    return "megatron", out
