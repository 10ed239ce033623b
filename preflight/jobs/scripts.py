"""Text configs: launch scripts and argparse argument files, to facts, by the framework whose
launch command or flags they hold (each framework record's ``launch``: ``accelerate launch``, HF
Trainer flags, ``megatron sft``, Megatron flags); a script bash would not run is a problem.

Shell scripts (by extension or a ``#!...sh`` first line; argument files have no shell syntax)
are checked before their flags are read: an unterminated quote or ``(`` (:mod:`.shell`) makes
the file unusable, and Windows line endings are reported, with the facts still read from the
script as meant.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from preflight.findings import Source
from preflight.jobs import entryscripts, fp8asks, inlinepy, launchfacts, pymodlinks, scriptargs
from preflight.jobs.scriptcalls import shell_scripts, sourced_calls, with_calls
from preflight.jobs.sourcing import expanded, sourced
from preflight.reading import (
    launch,
    launchpick,
    launchroot,
    launchvar,
    shell,
    shellcalls,
    shellempty,
    shellheredoc,
    shellpwd,
    shellwrites,
)
from preflight.reading.parse import ParseError, read_text
from preflight.reading.refs import named
from preflight.reading.shelldir import RUNS
from preflight.reading.shellnames import SELF
from preflight.reading.shellstops import read_stops
from preflight.reading.shellvars import collect_variables, strip_comments
from preflight.reading.shellwords import plain, split
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

if TYPE_CHECKING:
    from preflight.frameworks import Framework


def is_shell(path: str, text: str) -> bool:
    """A shell script (argparse ``@file`` argument files have no shell quoting)."""
    return path.lower().endswith((".sh", ".bash", ".slurm", ".sbatch")) or (
        text.startswith("#!") and "sh" in text.partition("\n")[0])


def read(path: str, text: str, kind: str | None, explicit: bool,
         inherited: dict[str, str] | None = None) -> tuple[str | None, ReaderOutput]:
    """(kind, facts) of a text config; raises :class:`ParseError` for an unusable one."""
    if bound := scriptargs.read(read, path, text, kind, explicit, inherited):
        return bound     # `bash recipe.sh a.b=c`: read with its "$@" bound (jobs/scriptargs.py)
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
    docs = shell.heredocs(text) if shell_script else []
    # Here-document bodies are text (a config written out, `python - <<EOF` code), never the
    # script's commands: blanked, keeping the lines (issue 21 item 9; reading/shell.py). Those
    # a variable takes (`read -r -d '' CMD <<EOF`) are kept for the readers that expand it.
    took = shellheredoc.takes(text, docs)      # how each is used: once, for all three below
    values = shellheredoc.kept_text(text, docs, took) if docs else text
    # (`sbatch <<EOF` / `bash -s <<EOF`: the body is a script that runs, commands for everyone)
    # (each closing line kept, as bash sees it: with it blanked, the lexer the launch readers
    # share took the `<<EOF` as never closed and every command after it as its body, so a
    # `cat > notes <<EOF` before `uv run rl @ x.toml` left the job unread; redteam11)
    raw, text = text, shell.blank_heredocs(text, [
        replace(d, end=d.body_end) if d.closed and d.body_end >= d.start else d
        for n, d in enumerate(docs) if n >= len(took) or not shellheredoc.is_run(took[n])])
    heredoc = next(((d.line, d.delimiter) for d in docs if not d.closed), None)
    if heredoc is not None:
        # The body runs to the end of the file as the here-document's text: no command after
        # its start runs, so none of it is a launch line.
        line, delimiter = heredoc
        crlf_or_doc = ConfigProblem(path, line, (
            f"a here-document (<<{delimiter}) opened here is never closed: bash takes the rest of "
            "the file as its text, so nothing after this line runs; its lines were not read as "
            "commands"), level="warning", fix=f"Add a line {delimiter} where the text ends.")
        crlf = crlf or crlf_or_doc
    if shell_script and heredoc is None and (at := split(text).unclosed) is not None:
        # (redteam11: read as if closed, an FP8 setting in it counted for a script bash never
        # starts)
        word = text[at:at + 8].split(None, 1)[0].rstrip(";")
        what = (f"`{word}` here closes no `{_OPENS[word]}` open at this point"
                if word in _OPENS else
                f"`{word}` opened here is never closed (no "
                f"`{_CLOSES.get(word, 'done')}` before the end)")
        raise ParseError(f"{what}: bash refuses the script with a syntax error, so it would not "
                         "start the job", text.count("\n", 0, at) + 1)
    missing: list[ConfigProblem] = read_stops(path, values, docs, took)
    files, outer = sourced(path, text, missing, inherited) if shell_script else ([], {})
    outer = {**(inherited or {}), **outer, **({SELF: path} if shell_script else {})}  # `$0`'s name
    walked = shellcalls.walk(path, values, outer, inherited) if shell_script else None
    # the text without comments and its variables: once, for every reader below
    clean = strip_comments(text)
    here = shellheredoc.values(clean)        # its here-documents' values, for both below
    variables = collect_variables(clean, outer, here, script=path)
    unread: list[ConfigProblem] = []
    runs = _python_scripts(path, clean, variables, outer, walked, unread)   # and -m modules
    calls = shell_scripts(path, text, outer, walked, unread) if walked is not None else []
    if files:       # `source x.sh --fp8`: bash runs x.sh's commands, its launch is the job's
        calls += sourced_calls(files, path, {**collect_variables(
            clean, inherited, here, script=path), RUNS: outer.get(RUNS, path)}, walked, calls)
    # a file the script writes before using it is not the one in the job (redteam4)
    written = shellwrites.writes(clean, variables, raw) if shell_script else {}
    wrote: dict[str, object] = {}
    if written:
        runs, calls = (shellwrites.unwritten(path, written, links, None, unread, wrote)
                       for links in (runs, calls))
    # `python -c '...'` / `python - <<EOF`: programs read as virtual scripts of this file
    inline = inlinepy.read(path, text if shell_script else "", raw, outer, kind,
                           lambda pos: launchfacts.environ(path, clean, pos, variables, outer))
    unread.extend(inline[2])
    # which framework's launch the text holds: once (its entry check reads the scripts it runs)
    detected = _detect(clean, _frameworks(), path) or \
        _detect(expanded(clean, outer), _frameworks(), path) or \
        (_detect(plain(clean), _frameworks(), path) if shell_script else None)
    try:
        got, out = _read(path, text, kind, explicit and not runs and not calls and not any(
            p.level != "info" for p in unread) and inline[0] is None, outer, values, detected)
    except ParseError as exc:
        if heredoc is None:
            raise
        raise ParseError(f"{exc.message}; the here-document (<<{heredoc[1]}) opened at line "
                         f"{heredoc[0]} is never closed, so bash takes the rest of the file as its "
                         "text and nothing after that line runs", heredoc[0]) from None
    got, out = inlinepy.merged(got, out, inline[0], inline[1])
    broken: list[ParseError] = []
    if runs:
        got, out = _with_scripts(got, out, runs, kind, broken)
    if calls:
        got, out = with_calls(got, out, calls, kind, unread)
    missing.extend(unread)
    said = [p for p in unread if p.level != "info"]     # (a note is no reason: shellpwd's)
    if got is None and explicit and said:   # its launch may be in a script not read (redteam3)
        raise ParseError(said[0].message, said[0].line, level="warning", code="reference")
    if got is None and explicit and broken:
        # the script the launch line runs does not parse (or is no text file): the job stops
        # there, and the finding names it (redteam11: only "cannot tell which framework" was
        # said, of the launch script)
        raise broken[0]
    if (runs or calls) and got is None and explicit:
        _read(path, text, kind, explicit, outer, values, detected)   # raises: what it holds
    if got is not None:
        out = launchfacts.add(path, clean, variables, outer, out, detected, got)
        out = launchfacts.unread_options(out, runs, got)
    if got is not None and written:
        facts = {**out.facts, **{f"config.{got}.{k}": v for k, v in wrote.items()}}
        linked = shellwrites.unwritten(path, written, out.linked, got, missing, facts)
        out = ReaderOutput(facts, out.provenance, out.problems, tuple(linked))
    if got is not None and files:
        # `$0` in a sourced file: this script; its environment: what this script exports
        exported = sorted({n for c in (walked.calls if walked else ()) if c.how == "source"
                           for n, _ in c.env})
        own = {**collect_variables(clean, inherited, here, script=path),
               RUNS: outer.get(RUNS, path),
               **({shellcalls.ENVIRON: ",".join(exported)} if exported else {})}
        out = ReaderOutput(out.facts, out.provenance, out.problems, (
            *out.linked, *scriptargs.sourced_links(files, got, path, own, walked)))
    if missing and got is not None:
        out = ReaderOutput(out.facts, out.provenance, (*out.problems, *missing), out.linked)
    if crlf is not None and got is not None:
        out = ReaderOutput(out.facts, out.provenance, (crlf, *out.problems), out.linked)
    return got, out


_OPENS = {"fi": "if", "esac": "case", "done": "do", "}": "{"}
"""What each closing word closes (redfix12: an unclosed `{` group was said to lack a `done`)."""
_CLOSES = {opener: closer for closer, opener in _OPENS.items() if opener != "do"}
"""What closes each opener but loops (``while``/``for``/``until`` ... ``done``)."""


def _frameworks() -> Sequence[Framework]:
    from preflight.frameworks import FRAMEWORKS

    return FRAMEWORKS


def _python_scripts(path: str, clean: str, variables: dict[str, str], outer: dict[str, str],
                    walked: shellcalls.Walked | None, problems: list[ConfigProblem]) -> list[Linked]:
    """The Python scripts the launch lines of ``text`` run, found here, with their arguments:
    read with the script, after it, their settings winning (what the code sets beats the
    launcher: ``Accelerator(mixed_precision="bf16")`` over ``--mixed_precision fp8``). One not
    found here is left out quietly (``pretrain_gpt.py`` of a Megatron-LM checkout), and so is
    one that evaluates, exports or merges after a training script (``launch.not_training``):
    its ``Accelerator(mixed_precision="bf16")`` is not the training's. After ``cd DIR`` the
    script is looked for in DIR only (one of a folder not known here is not guessed at).
    ``clean``: the text without comments; ``variables``: its own (:func:`read`)."""
    found = []
    runs = launch.python_scripts(clean, variables)
    # a launcher held in a variable (`${CMD[@]} src/train.py`: reading/launchvar.py)
    runs += [r for r in launchvar.python_scripts(clean, outer) if r[2] not in {p for *_, p in runs}]
    trains = pymodlinks.trains(clean, variables, [s for s, _, _ in runs], _frameworks())
    for script, argv, pos in runs:
        line = clean.count("\n", 0, pos) + 1
        moved = walked.folder_at(pos) if walked is not None else shellcalls.Folder()
        if (rest := shellpwd.relative(script)) is not None and walked is not None:
            script = shellpwd.script_at(rest, path, outer, walked, moved, line, problems)
            if not script:
                continue
        if (moved.path or moved.why) and not os.path.isabs(os.path.expanduser(script)):
            folder, _ = shellcalls.folder_of(moved, path, outer)
            if folder is None:
                continue
            script = os.path.join(folder, script)
        link = named(script, "", path, Source(path, line), key="the launch line", line=line)
        if link.missing and not (moved.path or moved.why):
            link = _from_above(link, script, path, line, problems)
        if not link.missing and "$" not in script:
            shellempty.argv_notes(path, line, argv, variables, problems, clean)   # read as empty: said
            found.append(replace(link, after=True) if trains and launch.not_training(script)
                         else replace(link, overrides=True, argv=argv, environ=(
                             launchfacts.environ(path, clean, pos, variables, outer))))
    found += pymodlinks.links(path, clean, variables, outer, walked, _frameworks(), trains,
                              problems)
    return launchfacts.one_environ(found)


def _from_above(link: Linked, script: str, path: str, line: int,
                problems: list[ConfigProblem]) -> Linked:
    """``link`` found in the one folder above the launch script holding it (a path relative
    to the repository's top: :mod:`.launchroot`), read where it holds settings and left out
    silently where it holds none (``optional``: the launch folder is inferred, and such a
    script is often the framework's own entry point, miles' train.py under slime's launch
    line, holdout9); two such folders are a warning at the line naming both, nothing read."""
    found = launchroot.find(script, path)
    if found.path is not None:
        return replace(link, path=found.path, missing=False, optional=True)
    said = found.problem(path, line, "runs", script, fix=(
        "Name the training script too when you run fp8-doctor, or write its path from the "
        "script's folder ($(dirname \"$0\")/...)."))
    if said is not None and len(problems) < 64:
        problems.append(said)
    return link


def _with_scripts(got: str | None, out: ReaderOutput, runs: list[Linked], kind: str | None,
                  broken: list[ParseError]) -> tuple[str | None, ReaderOutput]:
    """``out`` naming ``runs`` too; a script read by no framework takes the kind of the first
    Python script it runs that one reads (``python train.py`` with ``TrainingArguments``).
    The first of them that does not parse goes to ``broken``."""
    from preflight.jobs import pyjob

    if got is None:
        errors: list[ParseError] = []
        for link in runs:
            peek, _ = pyjob.peek(link.path, kind, link.argv, link.environ, link.syspath,
                                 errors)
            if peek is not None:
                got = peek
                break
            if errors and errors[-1].code == "unreadable" and not broken:
                bad = errors[-1]
                broken.append(ParseError(f"{link.path}{f':{bad.line}' if bad.line else ''}, "
                                         f"which line {link.line} runs: {bad.message}",
                                         link.line))
        if got is None:
            return None, out
    return got, replace(out, linked=(*out.linked, *entryscripts.linked(got, out, runs)))


def _read(path: str, text: str, kind: str | None, explicit: bool, outer: dict[str, str],
          values: str, detected: Framework | None) -> tuple[str | None, ReaderOutput]:
    """Read ``text`` with the framework ``kind`` (``--kind``), else with the framework whose launch
    command occurs first in it, else whose flags occur first (each record's ``launch``:
    ``detected``, :func:`_detect` of the text without comments), else first in the
    here-documents a variable takes (``values``: the text with those bodies, which the readers
    that expand variables get: ``Launch.heredoc_values``)."""
    from preflight.frameworks import BY_KIND, FRAMEWORKS

    # a command named in a comment (`# see verl.trainer.main_ppo`) launches nothing
    fw = BY_KIND[kind] if kind is not None else (
        detected or
        (_detect(strip_comments(values), FRAMEWORKS, path) if values is not text else None))
    if fw is None or fw.launch is None:
        if not explicit:
            return None, ReaderOutput()
        if fw is not None:        # --kind X, X not read from launch scripts
            raise ParseError(f"{fw.title} is not read from launch scripts or argument files; "
                             f"pass its config file ({', '.join(fw.formats)})")
        known = [f.title for f in FRAMEWORKS if f.launch is not None]
        raise ParseError("cannot tell which framework this file is for (no launch command or "
                         f"arguments of {', '.join(known)}); it may start a framework "
                         "fp8-doctor does not read", code="unknown_framework", level="warning",
                         fix="If it launches one of those, pass --kind KIND; otherwise its "
                             "settings are not checked (the script itself is not faulted).")
    out = launchpick.read(fw.launch.read, path, values if fw.launch.heredoc_values else text,
                          outer, fw.launch.trains, fp8asks.asks)
    got = _kind_of(fw.kind, out, [f.kind for f in FRAMEWORKS])
    if kind is None and got is not None:
        return got, out
    if kind is not None and (any(n.startswith(f"config.{kind}.") for n in out.facts) or
                             any(link.kind == kind for link in out.linked)):
        if explicit and _detect(values, [fw], path) is None:
            # (a script another one sources takes its kind from that one: not a --kind forced)
            # --kind megatron on a line of `--config-file x.yaml model.fp8=e4m3`: every --flag
            # reads as a Megatron one, but none is Megatron's (issue 22 item 5)
            from preflight.jobs.read import UNRECOGNISED, kind_forced

            out = replace(out, facts={**out.facts, UNRECOGNISED: [path]}, problems=(
                kind_forced(path, None, kind, None), *out.problems))
        return kind, out   # `--kind hf_trainer` on an `accelerate launch ... --bf16` line
    if not explicit:
        return None, ReaderOutput()
    # the line of its launch command: what it names was not read (`llamafactory-cli train
    # /etc/passwd`, a script that is /dev/zero), and the finding says where (redteam2)
    at = _command_line(strip_comments(text), fw)
    what = " on its command line" if at else " in this file"
    if kind is None:
        raise ParseError(f"no {fw.title} settings found{what}", at)
    other = _detect(text, [f for f in FRAMEWORKS if f.kind != kind])
    raise ParseError(f"no {fw.title} settings found{what}" + (
        f" (it holds {other.title} settings: --kind {other.kind})" if other else ""), at)


def _command_line(text: str, fw: Framework) -> int | None:
    """The line of the first command (else flags) of ``fw`` in ``text``."""
    if fw.launch is None:
        return None
    hits = (launch.find(p, text) for p in (fw.launch.command, fw.launch.flags) if p is not None)
    hit = next((h for h in hits if h is not None), None)
    return None if hit is None else text.count("\n", 0, hit.start()) + 1


def _detect(text: str, frameworks: Sequence[Framework], path: str | None = None,
            ) -> Framework | None:
    """The framework whose launch command occurs first in ``text``; else whose flags do; one
    whose entry the Python scripts the text runs (the job's own) all lack is none (:func:`_entry`)."""
    for attr in ("command", "flags"):
        hits = [(m.start(), n, f) for n, f in enumerate(frameworks) if f.launch is not None and
                (pattern := getattr(f.launch, attr)) is not None and
                (m := launch.find(pattern, text)) is not None and
                _entry(f.launch.entry, text, path)]
        if hits:
            return min(hits, key=lambda h: (h[0], h[1]))[2]
    return None


def _entry(entry: re.Pattern[str] | None, text: str, path: str | None) -> bool:
    """Whether a framework's command or flags (``--fp8-recipe``) may be its launch: False
    only when every training script the text runs is found here (next to ``path``) and none
    holds ``entry`` (``import megatron``): ``python3 train.py --fp8-recipe mxfp8`` passes a
    click option of the job's train.py (holdout6). A script not found here (``pretrain_gpt.py``
    of a checkout, ``$MEGATRON/...``) or not readable decides nothing."""
    if entry is None or path is None:
        return True
    runs = [s for s, _, _ in launch.python_scripts(text, collect_variables(text, {}))
            if not launch.not_training(s)]
    if not runs:
        return True
    for script in runs[:launch.MAX_SCRIPTS]:
        here = os.path.join(os.path.dirname(path), os.path.expanduser(script))
        if "$" not in script and not os.path.isfile(here):
            here = launchroot.find(script, path).path or here    # from the repository's top
        if "$" in script or not os.path.isfile(here):
            return True
        try:
            if entry.search(read_text(here)):
                return True
        except (ParseError, OSError):
            return True
    return False


def _kind_of(launched: str, out: ReaderOutput, kinds: list[str]) -> str | None:
    """The kind a script is filed under: the framework read it for when it holds its settings,
    else the first kind whose settings it holds (an ``accelerate launch`` line with only HF
    Trainer flags), else the kind of the first file it names."""
    present = {n.split(".", 2)[1] for n in out.facts if n.count(".") >= 2}
    if launched in present:
        return launched
    return next((k for k in kinds if k in present),
                out.linked[0].kind if out.linked else None)
