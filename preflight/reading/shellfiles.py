"""Scripts a launch script writes and then runs: ``echo "$CMD" > worker.sh`` (or ``printf '%s'
"$CMD" > f``) then ``bash worker.sh`` / ``torchrun --no-python bash worker.sh`` / ``srun sh f`` /
``./f``. What runs is the text written, read as a script of its own, never the file of that
name on disk.

Why (shell16, holdout23): Google's gpu-recipes GKE launchers build the worker command in a
here-document a variable takes, write it to a file and have torchrun run it with bash
(training/a4/deepseek_v3/megatron-bridge-gke/nemo2602/.../launcher.sh l.88-141 @ 1f338bb4:
``worker_command=$(cat <<- EOM ... EOM)``, ``echo "$worker_command" > worker_command.sh``,
``torchrun ... --no-python bash worker_command.sh``); the training command was never read.

What bash does: ``echo`` writes its arguments joined by one blank (bash manual, ``echo``
builtin: ``-e`` interprets backslash escapes, not followed here: Unknown), ``printf FORMAT ARG``
with ``%s`` writes ARG; the variables are expanded when the line writes the file (so the value
then is what the file holds). ``bash FILE`` runs FILE in a new shell: only exported variables
reach it (bash manual, "Command Execution Environment"), so every other one is Unknown there,
never the writer's value; its ``$1``... are the words after FILE. A file written in a branch not
known to run, by another command (``cp``, a program's output), or appended to after an unknown
write, is not followed: what it holds is not known here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from preflight.reading.shellfields import join
from preflight.reading.shelltypes import Field, Seg, Statement
from preflight.reading.shellwrites import command_writes

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "sbatch"})
"""Commands that run a script file named after their options (``sbatch F``: bash runs F on a
node, man sbatch)."""
MAX_FILES = 64
"""Files remembered per script (a real one writes a handful)."""


@dataclass
class Files:
    """What the walk knows of the files the script wrote so far, and what it exports."""

    held: dict[str, Field | None] = field(default_factory=dict)   # None: not known here
    exported: set[str] = field(default_factory=set)


def _text(f: Field) -> str | None:
    """A field's text, None where part of it is known only at run time."""
    return None if any(s.opaque for s in f) else "".join(s.text for s in f)


def _path(f: Field) -> str | None:
    """A file's name as written, None where not known or a device (redteam17: ``echo ... >
    /dev/null`` then ``bash /dev/null`` runs nothing; /dev/stdout, /dev/fd/N, /proc/self/fd/N
    hold nothing a later read gets back)."""
    got = _text(f)
    path = os.path.normpath(got) if got else None
    return None if path is None or path.startswith(_DEVICES) else path


_DEVICES = ("/dev/", "/proc/", "//dev/", "//proc/")
_GONE = frozenset({"rm", "unlink", "truncate", "shred"})
"""Commands after which a file the script wrote no longer holds that text (redteam17)."""
_MOVES = frozenset({"cd", "pushd", "popd"})
"""Commands after which a relative name is another file (redteam17: ``cd sub; bash f``)."""
_ARGUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
"""bash options taking the next word (``bash --rcfile f g`` runs g, not f)."""


def _content(fields: list[Field]) -> Field | None:
    """What ``echo ARGS`` / ``printf '%s' ARG`` writes (None: another command, or not known)."""
    name = os.path.basename(_text(fields[0]) or "") if fields else ""
    args = fields[1:]
    if name in (":", "true") and fields[0] and not fields[0][0].opaque:
        return []                  # `> f` (shellwords: `: > f`) writes nothing: f is emptied
    if name == "echo":
        while args and _text(args[0]) in ("-n", "-E"):
            args = args[1:]
        if args and (_text(args[0]) or "").startswith("-") or \
                any("\\" in s.text for f in args for s in f):
            return None            # `-e` and backslashes: escapes not followed here
        got = join(args)
        end = [Seg("\n", got[-1].offset, got[-1].branch)] if got and _text(
            fields[1]) != "-n" else []
        return got + end
    if name == "printf" and len(args) == 2 and _text(args[0]) in ("%s", "%s\\n"):
        return args[1] + ([Seg("\n", args[1][-1].offset, args[1][-1].branch)]
                          if args[1] and _text(args[0]) == "%s\\n" else [])
    if name == "printf" and len(args) == 1 and (fmt := _text(args[0])) is not None and \
            "%" not in fmt and "\\" not in fmt:
        return args[0]
    return None


def note(files: Files, st: Statement, fields: list[Field] | None,
         target: list[Field | None], runs: dict[int, bool | None], sure: bool = True) -> None:
    """Apply one statement: ``export`` marks names exported; a write records what the file
    holds (``target``: each of ``st.writes`` expanded, None where not known; ``sure``: False
    where the statement may not run when the walk passes it -- in a function body, whose calls
    are not followed here -- so what the file holds is not known)."""
    if st.exported and st.assign is not None:
        files.exported.add(st.assign)
    elif st.exported:
        files.exported.update(name for w in st.words if (name := "".join(p.text for p in w)))
    if st.unexported and st.assign is not None:
        files.exported.discard(st.assign)
    if st.prefix and st.assign is not None:
        files.exported.add(st.assign)       # `A=1 bash f`: in that command's environment
    if fields is None:
        return
    if files.held:          # `cp x f`, `sed -i ... f`, `tee f`: what f holds is not known
        made: dict[str, int] = {}
        words = [_text(f) or "\0?" for f in fields]
        command_writes(words, 0, made, None)
        base = os.path.basename(words[0]) if words else ""
        if base in _GONE:      # `rm -f f`: gone or emptied (any word: flags are no names)
            made.update((os.path.normpath(w), 0) for w in words[1:] if w)
        elif base in _MOVES:   # another folder: every relative name now means another file
            made.update((n, 0) for n in files.held if not n.startswith("/"))
        for name in made:
            if name in files.held:
                files.held[name] = None
    if not st.writes:
        return
    decided = sure and not st.background and all(runs.get(b) is True for b in st.branch)
    content = _content(fields) if decided else None
    for (_, append), got in zip(st.writes, target):
        path = _path(got) if got is not None else None
        if path is None or (path not in files.held and len(files.held) >= MAX_FILES):
            continue
        if append is None:         # `2> f`, `exec 3> f`: another descriptor's output
            files.held[path] = None
        elif append:
            old = files.held.get(path, [])
            files.held[path] = None if old is None or content is None else [*old, *content]
        else:
            files.held[path] = None if content is None else list(content)


def ran(files: Files, fields: list[Field]) -> tuple[int, Field] | None:
    """``bash FILE``, ``sh -e FILE``, ``./FILE`` (after wrappers: ``torchrun --no-python bash
    FILE``, ``srun ./FILE``) of a file the script wrote with known text: (index of FILE, the
    text). None: no such run, or what the file holds is not known."""
    if not files.held or (fields and _text(fields[0]) in (".", "source")):
        return None              # `source f`: this shell runs it (jobs/sourcing.py's)
    for n, f in enumerate(fields):
        name = _text(f) or ""
        if os.path.basename(name) in SHELLS:
            k = n + 1
            while k < len(fields) and (word := _text(fields[k]) or "").startswith(("-", "+")):
                if word in _ARGUED:
                    k += 2
                    continue
                if "c" in word.lstrip("-") and not word.startswith("--"):
                    return None            # `bash -c STR`: .shellinner's
                k += 1
            path = _path(fields[k]) if k < len(fields) else None
            got = files.held.get(path) if path is not None else None
            return (k, got) if got is not None else None
        path = os.path.normpath(name) if "/" in name else None
        if path is not None and files.held.get(path) is not None:
            return n, files.held[path] or []
    return None


def environment(files: Files, env: dict[str, list[Field]], content: Field
                ) -> tuple[Field, dict[str, list[Field]]]:
    """What a script run by a new shell sees of the writer's variables (the exported ones),
    and its text with each piece the write left unknown (``$X`` from the environment, a
    ``$(...)``) sealed as a name of its own holding that piece: split again, it stays the
    unknown value it was when written, never what the writer or the environment sets later
    (``echo "... $A" > f; A=1; export A; bash f`` is no ``1``)."""
    seen = {k: v for k, v in env.items() if k in files.exported}
    out: Field = []
    for n, seg in enumerate(content):
        if seg.opaque is None or n >= 4096:
            out.append(seg)
            continue
        name = f"_fp8d_written_{n}"
        seen[name] = [[seg]]
        out.append(replace(seg, text="${" + name + "}"))
    return out, seen


_CAT = re.compile(r"[ \t]*(?:(?:then|do|else)[ \t]+)?cat(?:[ \t]+(>>?)[ \t]*([^\s<>;&|()]+))?[ \t]*")
_TEE = re.compile(r"[ \t]*(?:(?:then|do|else)[ \t]+)?tee[ \t]+(?:(-a)[ \t]+)?([^\s<>;&|()-][^\s<>;&|()]*)"
                  r"(?:[ \t]*>[ \t]*/dev/null)?[ \t]*")
_AFTER = re.compile(r"[ \t]*(?:(>>?)[ \t]*([^\s<>;&|()]+))?[ \t]*")
MAX_LOOK = 262144
"""Characters after a here-document searched for the command that runs the file it writes."""


def written_script(last: str, after: str, text: str, end: int) -> str | None:
    """``cat > F <<EOF`` / ``cat <<EOF > F`` / ``tee F <<EOF`` (``last``: the command before the
    operator on its line, ``after``: the rest of that line) whose F a later command of
    ``text`` (from ``end``) runs as a script (``bash F``, ``srun sh F``, ``sbatch F``,
    ``./F``): F as written; None: another here-document. Its body is then a script that runs
    (kept for the readers, as ``sbatch <<EOF`` bodies are), never config text."""
    cat, tee, rest = _CAT.fullmatch(last), _TEE.fullmatch(last), _AFTER.fullmatch(after)
    if rest is None or (cat is None and tee is None):
        return None
    named = [t for t in ((cat.group(2) if cat else None), tee.group(2) if tee else None,
                         rest.group(2)) if t]
    if len(named) != 1 or (tee is not None and rest.group(2) and rest.group(2) != "/dev/null"):
        return None
    target = named[0].strip("\"'")
    if not target or target == "/dev/null" or "`" in target or "$(" in target:
        return None
    name = re.escape(target.removeprefix("./"))
    runs = re.compile(r"(?:^|[\s;&|(])(?:(?:bash|sh|zsh|dash|ksh|sbatch)(?:[ \t]+-[^\s;&|]*)*"
                      r"[ \t]+[\"']?(?:\./)?" + name + r"|(?<!\.[ \t])(?<!source[ \t])\./" + name +
                      r")[\"']?(?=[\s;&|)]|\Z)")
    return target if runs.search(text, max(end - 1, 0), end + MAX_LOOK) else None


__all__ = ["SHELLS", "Files", "environment", "note", "ran", "written_script"]
