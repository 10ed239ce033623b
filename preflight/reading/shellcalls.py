"""The scripts a launch script runs (``VAR=v bash x.sh``, ``sbatch x.sh``, ``./x.sh``), the
environment each one starts with, and the folder every command runs in (``cd DIR``). Nothing is
run: the statements of :mod:`.shellwords` are walked in order with :mod:`.shellexpand`'s
evaluator (``if`` / ``case`` branches decided where the values are known).

Why: a launch line is often a wrapper that sets knobs for another script, and that script's
``${VAR:-default}`` takes them (verl examples/grpo_trainer/run_qwen3_30b_a3b_megatron.sh:16-17
@ 1dda039 reads ``INFER_BACKEND`` / ``ROLLOUT_QUANTIZATION``; Megatron-Bridge
examples/models/gpt_oss/slurm_sft.sh:67-76 @ 067f987 ``RECIPE_NAME``; torchao
benchmarks/float8/training/llama3.sh @ 36027d8 ``TORCHTITAN_ROOT`` and then ``cd`` into it
before a relative ``CONFIG_FILE``). Read alone, each of those scripts took its defaults.

What a called script sees, as bash gives it: the caller's environment (what it inherited, what
it ``export``s, everything after ``set -a``) and the ``VAR=value`` words before the command
(``env VAR=value ...`` too; ``env -i`` starts empty). ``sbatch`` / ``srun`` pass the whole
environment unless ``--export`` says otherwise (``NONE``: nothing; names without ``ALL``: only
those). A value the caller cannot know (a ``$(...)``, its own environment, a branch that may not
run) is passed as a :func:`~.shellvars.runtime` marker: the variable is set, its value unknown,
so the callee's default does not apply. Bounded: :data:`MAX_CALLS` calls per script.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

from preflight.findings import Source
from preflight.reading import shellcmdopts, shelldir, shellexports, shellpwd
from preflight.reading.shellargs import ENVIRON, MAX_WORDS, PARAMS, Given
from preflight.reading.shellexpand import Eval, Field, TooLarge
from preflight.reading.shellfolder import CWD, Folder, folder_of
from preflight.reading.shellvars import runtime, runtime_reason
from preflight.reading.shellwords import Statement, split

MAX_CALLS = 16
"""Scripts followed from one script (a real one runs one or two)."""

ANY = "@*"
"""A name of :data:`ENVIRON` standing for every variable not named: the caller sourced a file
(or more were given than are kept) whose exports are not followed (its value: a runtime
marker)."""

CALLER = "@caller"
"""Key of the variables a caller passes that holds the ``file:line`` of the command."""

SELF = shelldir.SELF
"""Stands for the script's own folder in a path (``$(dirname "$0")``, ``SCRIPT_DIR=$(cd
"$(dirname "${BASH_SOURCE[0]}")" && pwd)``: :mod:`.shelldir`); :func:`folder_of` puts in the
real one."""

_SHELLS = shellcmdopts.SHELLS
_WRAPPERS = {"nohup", "exec", "setsid", "time", "command"}
_SLURM = {"sbatch", "srun"}
_SCRIPT_EXT = shellcmdopts.SCRIPT_EXT


@dataclass(frozen=True)
class Call:
    """One script the walked script runs."""

    script: str                              # its path, as the command names it (expanded)
    offset: int                              # where the command starts
    env: tuple[tuple[str, str], ...]         # what it starts with (runtime() markers inside)
    folder: Folder                           # the folder it starts in
    how: str                                 # bash | sbatch | srun | ./x.sh ...
    argv: tuple[Given, ...] = ()             # the words after it: its "$@" (shellargs)


@dataclass(frozen=True)
class Walked:
    """What :func:`walk` found; never changed once made (:func:`walk` hands out one per
    script, text and environment)."""

    calls: tuple[Call, ...] = ()
    folders: tuple[tuple[int, Folder], ...] = ()     # (statement offset, folder from there)
    assumed: int | None = None     # offset of the first `$(pwd)` read as the launch folder
    start: tuple[str, tuple[str, ...]] | None = None    # that folder, and the paths saying so

    def folder_at(self, offset: int) -> Folder:
        """The folder the statement at or before ``offset`` runs in."""
        got = Folder()
        for at, folder in self.folders:
            if at > offset:
                break
            got = folder
        return got


class _Walk:
    def __init__(self, path: str, text: str, outer: dict[str, str], environ: str) -> None:
        self.path, self.text = path, text
        self.ev = Eval({k: v for k, v in outer.items() if not k.startswith("@") or k == PARAMS})
        # its own environment (names its caller marked so), passed on to what it runs
        self.exported = set(environ.split(",")) - {""}
        self.allexport = False
        # a runtime marker once a sourced file (here or in a caller) may export anything
        self.hidden: str | None = outer.get(ANY) if ANY in self.exported else None
        self.prefix: list[str] = []                      # VAR=v words of the next command
        self.folders: dict[tuple[int, ...], Folder] = {(): Folder()}
        self.calls: list[Call] = []
        self.moves: list[tuple[int, Folder]] = []
        self.outer = outer
        self.pwd: Folder | None = None          # the folder $PWD holds
        self.held: list[Field] = []
        self.start: tuple[str, tuple[str, ...]] | None = None   # shellpwd.launch_folder
        self.assumed: int | None = None

    @property
    def out(self) -> Walked:
        return Walked(tuple(self.calls), tuple(self.moves), self.assumed, self.start)

    def _pwd(self, here: Folder, st: Statement) -> None:
        """``$PWD`` where ``st`` runs (:mod:`.shellpwd`), unless the script set it itself."""
        if here != self.pwd and (self.pwd is None or self.ev.env.get(shellpwd.NAME) is
                                 self.held):
            self.pwd = here
            if CWD not in self.outer and self.start is None:
                self.start = shellpwd.launch_folder(self.path, self.text)
            start = {CWD: self.start[0]} if self.start is not None else {}
            self.held = shellpwd.fields(*folder_of(here, self.path, {**self.outer, **start}),
                                        st.offset)
            self.ev.env[shellpwd.NAME] = self.held
        if self.assumed is None and CWD not in self.outer and \
                self.ev.env.get(shellpwd.NAME) is self.held and any(
                p.var and p.text == shellpwd.NAME for w in st.words for p in w):
            self.assumed = st.offset

    def line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def folder(self, st: Statement) -> Folder:
        inside = st.subshell
        while inside not in self.folders:
            inside = inside[:-1]
        return self.folders[inside]

    def run(self) -> Walked:
        ev = self.ev
        ev.prepare(split(self.text))
        for st in split(self.text).statements:
            if any(ev.runs.get(b) is False for b in st.branch):
                continue
            here = self.folder(st)
            if not self.moves or self.moves[-1][1] != here:
                self.moves.append((st.offset, here))
            self._pwd(here, st)
            if st.test is not None:
                ev.decide(st)
                continue
            if st.assign is not None:
                self._assign(st)
                continue
            if st.exported or st.unexported:
                names = {"".join(p.text for p in w) for w in st.words}
                self.exported = self.exported | names if st.exported else self.exported - names
                continue
            fields = ev.command(st)
            prefix, self.prefix = self.prefix, []
            texts = ["".join(s.text for s in f) for f in fields]
            if not texts:
                continue
            ev.positional(st, fields)   # `shift`, `set -- a b`: "$@" from here (shellargs)
            if texts[0] == "exit":
                ev.exited(st)
            elif texts[0] in ("cd", "pushd"):
                self.folders[st.subshell] = self._cd(st, fields, here)
            elif texts[0] == "unset" and "-f" not in texts:
                self.exported -= set(texts[1:])     # redteam7: no longer in the environment
            elif texts[0] in ("source", "."):
                self._sourced(st, fields, texts, here)
            elif texts[0] == "popd":
                self.folders[st.subshell] = Folder(why=f"popd (line {self.line(st.offset)})")
            elif texts[0] == "set":
                self._set(texts)
            elif len(self.calls) - sum(c.how == "source" for c in self.calls) < MAX_CALLS:
                call = self._call(st, fields, texts, prefix, here)   # (sources: their own)
                if call is not None:
                    self.calls.append(call)
        return self.out

    def _sourced(self, st: Statement, fields: list[Field], texts: list[str], here: Folder
                 ) -> None:
        """``source x.sh [a b]``: its exports are not followed (redteam7: what it sets is not
        known here), and ``a b`` are its "$@" (shargs: jobs/scripts.py links it)."""
        known = shellexports.followed(self.outer, texts[1]) if len(texts) > 1 and not any(
            s.opaque for s in fields[1]) else None
        if known is not None:       # a config script whose exports its text shows (mlperf51)
            self.exported |= set(known)
        elif self.hidden is None:
            self.hidden = runtime(f"{os.path.basename(self.path)}:{self.line(st.offset)} "
                                  f"sources {' '.join(texts[1:2])[:80]}, whose exports are "
                                  "not followed here")
        if len(texts) > 1 and sum(c.how == "source" for c in self.calls) < MAX_CALLS:
            # its commands run in this shell (shdir: its launch is the job's), with what this
            # script exports in their environment
            env = ((n, self._value(n, st)) for n in sorted(self.exported))
            self.calls.append(Call(texts[1], st.offset, tuple((n, v) for n, v in env if v),
                                   here, "source", tuple(self._argv(st, fields[2:]))))

    def _set(self, texts: list[str]) -> None:
        """``set -a`` / ``set +a`` / ``set -o allexport``: whether assignments are exported."""
        for t in texts[1:]:
            if re.fullmatch(r"[-+][a-zA-Z]*a[a-zA-Z]*", t):
                self.allexport = t[0] == "-"
        if "allexport" in texts and len(texts) > 2:
            self.allexport = texts[texts.index("allexport") - 1] == "-o"

    def _assign(self, st: Statement) -> None:
        self.ev.assign(st)     # `SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)`: shelldir's marker
        self._note(st)

    def _note(self, st: Statement) -> None:
        name = st.assign or ""
        if st.prefix:
            self.prefix.append(name)
        elif st.unexported:
            self.exported.discard(name)
        elif st.exported or self.allexport:
            self.exported.add(name)

    def _value(self, name: str, st: Statement) -> str | None:
        """What ``name`` holds for the command ``st`` (None: not set), as text or a marker."""
        value = self.ev.env.get(name)
        if value is None:
            return self.ev.outer.get(name)
        if len(value) != 1:
            return None                  # bash does not export arrays
        return self._text(value[0], st, name)

    def _text(self, field_: Field, st: Statement, name: str) -> str:
        where = os.path.basename(self.path)
        for seg in field_:
            if seg.opaque:
                return runtime(f"{name} is given by {where}:{self.line(seg.offset)}, where "
                               f"{seg.opaque}")
            if runtime_reason(seg.text) is not None:
                return seg.text
            for b in seg.branch:
                if b not in st.branch and self.ev.runs.get(b) is not True:
                    return runtime(f"{name} is given by {where}, and set inside an if/case "
                                   f"branch (line {self.line(seg.offset)}) that may not run")
        return "".join(s.text for s in field_)

    def _cd(self, st: Statement, fields: list[Field], here: Folder) -> Folder:
        line = self.line(st.offset)
        args = [f for f in fields[1:] if not "".join(s.text for s in f).startswith("-")]
        if not args:
            return Folder(why=f"cd to the home folder (line {line})")
        target = self._text(args[0], st, "the folder")
        why = runtime_reason(target)
        if why is not None:
            return Folder(why=f"the script changes folder at line {line} to one not known "
                              f"here ({why.split(', where ', 1)[-1]})")
        if any(self.ev.runs.get(b) is not True for b in st.branch):
            return Folder(why=f"the script changes folder at line {line} inside a branch "
                              "that may not run")
        if target == "-":
            return Folder(why=f"cd - (line {line})")
        if shelldir.starts(target) or os.path.isabs(target):
            return Folder(target)
        if here.why is not None:
            return here
        return Folder(os.path.normpath(os.path.join(here.path, target)) if here.path else
                      os.path.normpath(target))

    def _call(self, st: Statement, fields: list[Field], texts: list[str], prefix: list[str],
              here: Folder) -> Call | None:
        # the command's environment: what is exported, then its own VAR=value words
        env: dict[str, str | None] = {n: self._value(n, st) for n in [*self.exported, *prefix]}
        given: dict[str, str | None] = {}       # set past `env -i` / `sbatch --export=NONE`
        everything = True
        i, how = 0, ""
        while i < len(texts):
            word = os.path.basename(texts[i])
            if word in _WRAPPERS:
                i += 1
            elif word == "env":
                i += 1
                while i < len(texts):
                    t = texts[i]
                    if t in ("-i", "-", "--ignore-environment"):
                        everything = False
                    elif t.startswith(("-u", "--unset")):   # -u X, -uX, --unset=X
                        name, step = shellcmdopts.unset_name(texts, i)
                        env.pop(name, None)
                        i += step
                    elif (m := re.fullmatch(r"([A-Za-z_]\w*)=(.*)", t, re.S)) is not None:
                        got = self._text(fields[i], st, m.group(1))
                        given[m.group(1)] = got if runtime_reason(got) is not None else \
                            got.split("=", 1)[1]
                    elif t != "--":
                        break
                    i += 1
            elif word in _SLURM:
                how = word
                i, keep = shellcmdopts.slurm_options(texts, i + 1)
                if keep is not None:
                    everything = "ALL" in keep
                    for item in keep:
                        name, eq, value = item.partition("=")
                        if eq:
                            given[name] = value
                        elif name not in ("ALL", "NONE") and not everything:
                            given[name] = env.get(name)
            elif word in _SHELLS:
                how = how or word
                i += 1
                while i < len(texts) and texts[i][:1] in ("-", "+") and texts[i] != "--":
                    if "c" in texts[i][1:] and not texts[i].startswith("--"):
                        return None          # bash -c STRING: read by shellexpand
                    i += 2 if texts[i] in ("-o", "+o", "-O", "+O") else 1
                i += texts[i:i + 1] == ["--"]
                break
            else:
                break
        if i >= len(texts):
            return None
        script = texts[i]
        direct = not how
        if any(s.opaque for s in fields[i]) or (direct and "/" not in script) or \
                (how in _SLURM and not script.lower().endswith(_SCRIPT_EXT)
                 and "/" not in script):
            return None
        if not direct or script.lower().endswith(_SCRIPT_EXT) or "." not in \
                os.path.basename(script):
            kept = {**(env if everything else {}), **given,
                    **({ANY: self.hidden} if self.hidden is not None and everything else {})}
            return Call(script, st.offset, tuple((n, v) for n, v in kept.items()
                                                 if v is not None), here, how or script,
                        tuple(self._argv(st, fields[i + 1:])))
        return None

    def _argv(self, st: Statement, fields: list[Field]) -> list[Given]:
        """The words after the script, each with the ``file:line`` it is written at (a word
        this script was given itself keeps its caller's) and why its value is not known."""
        out = []
        for n, f in enumerate(fields[:MAX_WORDS + 1], 1):
            at = next((s.offset for s in f if s.text or s.opaque), f[0].offset if f else st.offset)
            where = self.ev.params.at.get(at) or Source(self.path, self.line(at))
            text = self._text(f, st, f"argument {n}")
            why = runtime_reason(text)
            out.append(Given("".join(s.text for s in f) if why else text, where, why,
                             any(s.loose for s in f)))
        return out


def walk(path: str, text: str, outer: dict[str, str] | None = None,
         environ: dict[str, str] | None = None) -> Walked:
    """The scripts ``text`` (the script at ``path``) runs and the folders its commands run in;
    ``outer``: the variables it starts with (what its caller gave, what it sources),
    ``environ``: what names those of them that are its environment (its :data:`ENVIRON`
    entry, passed on to what it runs; by default ``outer``'s, where its caller puts it).

    One check asks twice for each launch script (:mod:`preflight.jobs.scripts` for the scripts
    it calls, :func:`~.overridelaunch.find_launch` for the folder its launch runs in): the
    answer is kept for the last few scripts, keyed by everything it depends on."""
    outer = outer or {}
    names = (environ if environ is not None else outer).get(ENVIRON, "")
    return _walk(path, text, tuple(sorted(outer.items())), names)


@lru_cache(maxsize=8)
def _walk(path: str, text: str, outer: tuple[tuple[str, str], ...], environ: str) -> Walked:
    w = _Walk(path, text, dict(outer), environ)
    try:
        return w.run()
    except TooLarge:
        return w.out
