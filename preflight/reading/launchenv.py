"""The environment a launch script gives its training command: ``export VAR=value`` (or
``VAR=value`` then ``export VAR``) before the command, and ``VAR=value cmd ...`` assignments
that prefix the command itself (bash puts those in that command's environment only).

This is how many jobs ask for FP8 without a config file: ``ACCELERATE_MIXED_PRECISION=fp8
accelerate launch train.py`` (huggingface/trl issue 3860), ``export NVTE_FP8_...=1``. What the
variables mean, and which of them a report may show, is the caller's business
(:mod:`preflight.jobs.scripts` keeps the allow-listed ones as ``env.*`` facts).

Text-level, like :mod:`.launch`: the script with comments and here-documents blanked. A value
with a part decided at run time (``$(...)``, a variable not set in the script) is left out, never
guessed; so is one after the command. An ``export`` inside a function counts when the script
calls the function before the command (:mod:`.shellfuncs`), is Unknown where that call may not
run, and is nothing when the function is never called first.
"""

from __future__ import annotations

import re

from preflight.reading import shellbranch, shelldecl, shellexports, shellfuncs
from preflight.reading.launch import MAX_ARGS, command_at, tokens
from preflight.reading.shellvars import runtime, typed

_NAME = re.compile(r"([A-Za-z_]\w*)=(.*)\Z", re.S)
# `export X=1`, `declare -x X=1`, `typeset -x`, `readonly -x`... (reading/shelldecl.py)
# (or after `then` / `;` / a case arm's `)` on a line: kept where the shell kit splits an
# export there, so none in a quoted string is taken)
_EXPORT = re.compile(r"(?m)(?:^|[;&|)]|\b(?:then|do|else)\b)[ \t]*"
                     r"(export|declare|typeset|readonly|local)[ \t]+")
_FUNCTION = re.compile(r"(?m)^[ \t]*(?:function[ \t]+\w+|\w+[ \t]*\(\)[ \t]*)\{?")
# redteam7: what else changes the environment before the command (bash's `unset`, `set -a`,
# `source`): a variable unset is gone, and `set -a` / a sourced file export what this text does
# not show
_UNSET = re.compile(r"(?m)^[ \t]*unset[ \t]+((?:-v[ \t]+)?[A-Za-z_][\w \t]*)$")
_ALLEXPORT = re.compile(r"(?m)^[ \t]*set[ \t]+(?:-[A-Za-z]*a[A-Za-z]*|-o[ \t]+allexport)\b")
_SOURCE = re.compile(r"(?m)^[ \t]*(?:source|\.)[ \t]+([^\s;&|]+)")
MAX_VARS = 200
"""Variables kept from one script (a real one sets a few dozen)."""

Var = tuple[str, str, int]      # name, value, offset where it is written


def launch_env(text: str, at: int, variables: dict[str, str], unknown: bool = False,
               ) -> list[Var]:
    """``(name, value, offset)`` for each variable the command at offset ``at`` gets from the
    script: exports before that command first, then its own prefix assignments (which win).
    ``unknown``: keep a variable whose value only the run knows, as a :func:`.shellvars.runtime`
    marker (a Python file's lookup of it is then Unknown, not its default)."""
    start, _ = command_at(text, at)
    found: dict[str, Var] = {}
    body = _function_spans(text[:start])
    later: dict[str, Var] = {}      # set where the text does not say whether or what
    simple = _simple_command(text, start, at)   # `export X=1; python x.py` on one line
    known = tuple(sorted((k, v) for k, v in variables.items()
                         if not re.search(r"[$`]", v) and k[:1] != "@"))
    sure = shellbranch.exports(text, known)
    walked = shellfuncs.walk(text, known)
    funcs = shellfuncs.functions(text, known) if body else shellfuncs.Functions()
    pending: list[tuple[int, Var]] = []
    for m in _EXPORT.finditer(text, 0, simple):
        line_start, line_end = command_at(text, m.start())
        words = list(tokens(text, m.end(), simple - 1 if m.start() < simple <= line_end else
                                  line_end))
        options, n = shelldecl.split_options([w for w, _ in words])
        decl = shelldecl.parse(m.group(1), options)
        called = _called(m, options, body, funcs, start, unknown)
        if called is None:
            continue
        when = called[2] if called[2] >= 0 else m.start()   # where bash runs it
        if m.group(1) == "export" and "-n" in options:
            for word, _ in words[n:]:       # `export -n X`: X is no longer in the environment
                if called[0] is True:
                    pending.append((when, (word.split("=", 1)[0], "", -1)))
            continue
        if not decl.exported or not decl.assigns:
            continue        # `export -n X=1`, `declare X=1` (not exported), `export -f f`
        for word, pos in words[n:]:
            hit = _NAME.match(word)
            name, raw = (hit.group(1), hit.group(2)) if hit else (word, None)
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                break
            if _local(text, body, m.start(), name, funcs, start):
                continue        # `local X` then `export X=1`: the function's own X
            inline = text[text.rfind("\n", 0, m.start()) + 1:m.start(1)].strip()
            runs, line = sure.get(pos, (None if inline else True, 0))
            if runs is False or (inline and pos not in sure) or not walked.reaches(pos, start):
                continue        # in a branch that does not run here (`if false; then`), or a
                # `( ... )` subshell the command is not in
            value = _exported(name, raw, variables, decl, unknown,
                              called[1] if called[0] is None else None,
                              line if runs is None else None)
            if value is not None:
                # in the order bash sets it: a function's export where it is first called
                pending.append((when, (name, value, pos)))
    order: dict[str, int] = {}
    for ran, var in sorted(pending, key=lambda p: p[0]):
        if var[2] < 0:
            found.pop(var[0], None)           # `export -n X`
            continue
        _keep(found, var, unknown)
        order[var[0]] = ran
    _unset_and_hidden(text, start, body, found, later if unknown else None, order, variables)
    found.update(later)
    for word, pos in tokens(text, _simple_command(text, start, at), at):
        hit = _NAME.match(word)
        if hit is None:
            break           # `srun VAR=1 x`: an argument, not bash's prefix assignment
        value = _value(hit.group(2), variables)
        if value is None and unknown:
            value = runtime(f"{hit.group(1)} is set on the launch line to "
                            f"{hit.group(2)[:40]!r}, known only when the script runs")
        if value is not None:
            _keep(found, (hit.group(1), value, pos), unknown)
    return list(found.values())


def _called(m: re.Match[str], options: list[str], body: list[tuple[int, int]],
            funcs: shellfuncs.Functions, start: int, unknown: bool,
            ) -> tuple[bool | None, str, int] | None:
    """Whether the export at ``m`` runs before the command at ``start`` (:mod:`.shellfuncs`
    for one in a function): (True / None with why, the order bash runs it in, -1: its own
    place); None: it does not reach the command (a function not called first, a function's
    own ``local`` / ``declare``, ``local`` outside a function, Unknown not asked for)."""
    if not any(a <= m.start() < b for a, b in body):
        return None if m.group(1) == "local" else (True, "", -1)
    fn = funcs.holding(m.start())
    # `declare -x` / `local -x` in a function is the function's own (gone when it returns;
    # `-g` makes it global): it reaches only a command in the same body
    own = m.group(1) in ("declare", "typeset", "local") and not any(
        "g" in o[1:] and o[0] == "-" for o in options)
    called = (None, "a function the script may call first", -1) if fn is None else \
        shellfuncs.runs_before(funcs, fn, start)
    if called[0] is False or own and (fn is None or funcs.holding(start) != fn):
        return None
    if called[0] is True and fn is not None and funcs.holding(start) != fn and \
            _RETURN.search(m.string, funcs.spans[fn][0], m.start()):
        # `return` / `exit` before the export in the body: it may never run (redteam12)
        called = (None, f"the function {funcs.names[fn][:40]} may return before its export", -1)
    if called[0] is None and (not unknown or m.group(1) == "local"):
        return None
    return called


def _exported(name: str, raw: str | None, variables: dict[str, str], decl: shelldecl.Decl,
              unknown: bool, function: str | None, branch: int | None) -> str | None:
    """The value ``export NAME[=raw]`` gives the command, a :func:`.shellvars.runtime` marker
    (``unknown``) where the run decides it: in ``function`` (why it may not run first), in a
    branch at line ``branch`` that may not run, or a value known only when the script runs."""
    value = _value(raw, variables) if raw is not None else variables.get(name)
    if function is not None:
        return runtime(f"{name} is exported inside {function}")
    if branch is not None and unknown:
        return runtime(f"{name} is exported only inside an if/case branch or loop "
                       f"(line {branch}) that may not run")
    if value is None:
        return runtime(f"{name} is exported with a value known only when the script "
                       "runs") if unknown else None
    if not decl.plain:
        return decl.value(value) if not decl.nameref else variables.get(value)
    return value


def _unset_and_hidden(text: str, start: int, body: list[tuple[int, int]],
                      found: dict[str, Var], later: dict[str, Var] | None,
                      order: dict[str, int], variables: dict[str, str]) -> None:
    """``unset X`` after X's export removes it; ``set -a`` or a sourced file before the
    command (outside functions) exports what the text does not show: every variable not set
    here is Unknown (``later``; None: not asked). A sourced file whose exports its text shows
    (:mod:`.shellexports`: plain top-level ``export``\\s, as for the scripts a sourcing script
    calls) gives those names instead, their values as the script's variables hold them."""
    for m in _UNSET.finditer(text, 0, start):
        if not any(a <= m.start() < b for a, b in body):
            for name in m.group(1).split():
                if name in found and order.get(name, found[name][2]) < m.start():
                    del found[name]
    head = [m for m in (*_ALLEXPORT.finditer(text, 0, start), *_SOURCE.finditer(text, 0, start))
            if not any(a <= m.start() < b for a, b in body) and not _followed(
                m, variables, found, order)]
    if head and later is not None:
        what = head[0].group(0).strip()[:80]
        later["*"] = ("*", runtime(f"the script runs `{what}` before the command: the variables "
                                   "it exports are not followed here"), head[0].start())


def _followed(m: re.Match[str], variables: dict[str, str], found: dict[str, Var],
              order: dict[str, int]) -> bool:
    """``source x.env`` (``m``) whose exports :mod:`.shellexports` knows: each name put in
    ``found`` (a later export in this script wins), True; False where they are not known."""
    if m.re is not _SOURCE or "$" in m.group(1) or (
            names := shellexports.followed(variables, m.group(1))) is None or \
            not shellexports.top_level(m.string, m.start(1)):
        return False
    for name in names[:MAX_VARS]:
        if name in found and order.get(name, found[name][2]) > m.start():
            continue
        value = variables.get(name)
        found[name] = (name, value if value is not None and not re.search(r"[$`]", value) else
                       runtime(f"{name} is exported by {m.group(1)[:80]} with a value known "
                               "only when the script runs"), m.start())
    return True


def _keep(found: dict[str, Var], var: Var, unknown: bool) -> None:
    """Keep ``var`` under :data:`MAX_VARS`; past it, every variable not kept is Unknown
    (``unknown``), never its default (redteam7: 300 exports before ``export RECIPE=bf16``)."""
    if var[0] in found or len(found) < MAX_VARS:
        found[var[0]] = var
    elif unknown:
        found["*"] = ("*", runtime(f"the script sets more than {MAX_VARS} variables for the "
                                   "command; those past them are not kept"), var[2])


def _simple_command(text: str, start: int, at: int) -> int:
    """Where the simple command holding offset ``at`` begins on its line (after the last
    ``|``, ``&&``, ``||``, ``;`` or ``&`` outside quotes): ``X=1 true | python x.py`` gives X
    to ``true`` only."""
    begin = start
    for m in _OPERATOR.finditer(text, start, at):
        if m.group(1) is not None:
            begin = m.end()
    return begin


# quoted text and escapes are skipped whole; `>&` / `&>` are redirections, not operators
_OPERATOR = re.compile(r"""'[^']*'|"(?:\\.|[^"\\])*"|\\.|[<>]&|&>|([|;&])""", re.S)


_RETURN = re.compile(r"(?:^|[;&|{(]|\b(?:then|do|else))[ \t]*(?:return|exit)\b", re.M)


def _local(text: str, body: list[tuple[int, int]], at: int, name: str,
           funcs: shellfuncs.Functions, command: int) -> bool:
    """Whether the export of ``name`` at ``at``, in a function, exports the function's own
    variable: ``local X`` / ``declare X`` (no ``-g``) earlier in the same body makes ``X``
    local, and ``export X=1`` then marks that one, gone when the function returns (bash(1)
    "local"; redteam12). A command in the same body still gets it."""
    fn = funcs.holding(at) if any(a <= at < b for a, b in body) else None
    if fn is None or funcs.holding(command) == fn:
        return False
    decl = re.compile(r"(?m)(?:^|[;{])[ \t]*(?:local|declare|typeset)((?:[ \t]+-\w+)*)"
                      r"[^\n;]*?[ \t]" + re.escape(name) + r"(?:[=\s;]|$)")
    hit = decl.search(text, funcs.spans[fn][0], at)
    return hit is not None and "g" not in hit.group(1)


def _value(raw: str, variables: dict[str, str]) -> str | None:
    text = str(typed(raw, variables))    # numbers keep their text: "1" -> 1 -> "1"
    return None if "$" in text or "`" in text else text


def _function_spans(text: str) -> list[tuple[int, int]]:
    """Rough extents of ``f() { ... }`` bodies: what they export runs only if called."""
    spans = []
    for m in _FUNCTION.finditer(text):
        close = re.compile(r"(?m)^[ \t]*\}").search(text, m.end())
        spans.append((m.start(), close.end() if close else len(text)))
    return spans


Given = tuple[tuple[str, str, str], ...]
"""What launch lines give a Python file's process: ``(name, value or a runtime marker, where)``;
the name ``*`` stands for every variable not named (an env file not read)."""
_EXPORT_FLAGS = ("--export=", "--export-file=", "--env-file=")
_ELASTIC = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
            "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "TORCHELASTIC_*", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES")
_LAUNCHER_SETS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # torch/distributed/elastic/agent/server/local_elastic_agent.py (torchrun, deepspeed's and
    # accelerate's launchers start it or set the same names), accelerate/utils/launch.py
    # prepare_simple_launcher_cmd_env (ACCELERATE_*, FSDP_*), ColossalAI's `colossalai run`
    # (runs torchrun: colossalai/cli/launcher/run.py L196 @ v0.5.0), Slurm (srun, sbatch, #SBATCH
    # headers), Open MPI / PMI
    (re.compile(r"torchrun|torch\.distributed\.(?:run|launch)|deepspeed|accelerate[ \t]+launch|"
                r"accelerate-launch|composer|colossalai[ \t]+run"), _ELASTIC),
    (re.compile(r"accelerate[ \t]+launch|accelerate-launch"), ("ACCELERATE_*", "FSDP_*")),
    (re.compile(r"\b(?:srun|sbatch)\b"), ("SLURM_*",)),
    (re.compile(r"mpirun|mpiexec"), ("OMPI_*", "PMI_*", "PMIX_*")),
)
_SBATCH = re.compile(r"(?m)^#SBATCH\b")


def process_env(path: str, text: str, at: int, variables: dict[str, str],
                inherited: list[tuple[str, str]]) -> Given:
    """The environment the command whose script word is at offset ``at`` gives the process
    (:mod:`.pyenviron` reads it): ``inherited`` (what the script's own caller passed, ``(name,
    where)``), ``export``\\s before the command, its ``X=v`` prefixes, ``env [-i] [-u X] X=v``
    and ``srun --export=NONE|ALL,X=v`` before the script (Slurm's sbatch/srun ``--export``, GNU
    env). An ``--export-file`` / ``--env-file`` is not read: every variable it may set is
    Unknown; so is every variable not given after ``env -S``, ``sudo`` or a container start
    (the ``*`` entry)."""
    from preflight.findings import Source

    def where(pos: int) -> str:
        return Source(path, text.count("\n", 0, pos) + 1)

    out: dict[str, tuple[str, str]] = {}
    start, _ = command_at(text, at)
    words = tokens(text, _simple_command(text, start, at), at)
    for launcher, names in _LAUNCHER_SETS:
        hit = launcher.search(text, start, at)
        if hit is None and "SLURM_*" in names and _SBATCH.search(text):
            hit = _SBATCH.search(text)
        label = hit.group(0).strip() if hit is not None else ""
        for name in names if hit is not None else ():
            out[name] = (runtime(f"{name} is set for the process by {label} when it runs"),
                         where(start))
    _inherited(out, inherited, variables, text, start)
    for name, value, pos in launch_env(text, at, variables, unknown=True):
        out[name] = (value, where(pos))
    in_env = False
    for i, (word, pos) in enumerate(words):
        if word in ("--export", "--export-file", "--env-file") and i + 1 < len(words):
            word = f"{word}={words[i + 1][0]}"     # `srun --export ALL,X=1` (getopt's two words)
        if word == "env" or word.endswith("/env"):
            in_env = True
        elif in_env and word in ("-i", "-", "--ignore-environment"):
            out.clear()
        elif in_env and word in ("-u", "--unset") and i + 1 < len(words):
            out.pop(words[i + 1][0], None)
        elif in_env and word.startswith(("-u", "--unset=")) and len(word) > 2:
            out.pop(word[2:] if word[1] == "u" else word[8:], None)   # `-uX`, `--unset=X`
        elif in_env and word.startswith(("-S", "--split-string")):
            out["*"] = (runtime("env -S splits a string into more assignments, not followed "
                                "here"), where(pos))
        elif word in ("sudo", "docker", "podman") or word.endswith(("/sudo", "/docker")):
            # sudo's env_reset and a container start from another environment (redteam7)
            out = {"*": (runtime(f"{word.rsplit('/', 1)[-1]} runs the command in an environment "
                                 "of its own, not the script's"), where(pos))}
        elif word in ("--export=NONE", "--export=NIL"):
            out.clear()
        elif word.startswith(_EXPORT_FLAGS[1:]):
            out["*"] = (runtime(f"the launch line names the env file {word.split('=', 1)[1][:80]}"
                                ", not read here"), where(pos))
        elif word.startswith("--export="):
            _slurm_export(word[9:], out, variables, where(pos))
        elif in_env and (hit := _NAME.match(word)) is not None:
            got = _value(hit.group(2), variables)
            out[hit.group(1)] = (got if got is not None else runtime(
                f"{hit.group(1)} is given a value known only when the script runs"), where(pos))
    if len(words) > MAX_ARGS:       # redteam7: `env` with 20,000 assignments, cut unread
        out["*"] = (runtime(f"the launch line has more than {MAX_ARGS:,} words; the variables "
                            "it sets past them are not read"), where(words[-1][1]))
    return tuple((n, v, w) for n, (v, w) in out.items())


def _inherited(out: dict[str, tuple[str, str]], inherited: list[tuple[str, str]],
               variables: dict[str, str], text: str, start: int) -> None:
    """What the script's caller gave it (``(name, where)``; ``@*``: the caller sourced a file,
    reading/shellcalls.py ``ANY``), less what the script unsets before ``start``; past
    :data:`MAX_VARS` every variable not kept is Unknown (redteam7)."""
    for name, src in inherited[:MAX_VARS]:
        given = variables.get(name)
        if name == "@*":
            out["*"] = (given if isinstance(given, str) else runtime(
                "the caller sources a file whose exports are not followed here"), src)
            continue
        out[name] = (given if isinstance(given, str) and "$" not in given else runtime(
            f"{name} comes from the caller with a value known only when it runs"), src)
    if len(inherited) > MAX_VARS:
        out["*"] = (runtime(f"the caller gives more than {MAX_VARS} variables; those past them "
                            "are not kept"), inherited[MAX_VARS][1])
    for m in _UNSET.finditer(text, 0, start):
        for name in m.group(1).split():
            out.pop(name, None)


def _slurm_export(value: str, out: dict[str, tuple[str, str]], variables: dict[str, str],
                  where: str) -> None:
    """``srun`` / ``sbatch --export=[ALL,]X[=v],...`` (Slurm doc/man/man1/srun.1, --export):
    without ALL only the names listed (and SLURM_*) reach the task; with ALL the caller's own
    value of a name wins over the one given here (redteam7)."""
    items = value.split(",")
    every = "ALL" in items
    given: dict[str, tuple[str, str]] = {}
    for item in items:
        name, eq, raw = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or name == "ALL":
            continue
        if not eq:
            if name in out:
                given[name] = out[name]     # `--export=X`: X's current value
            continue
        got = _value(raw, variables)
        given[name] = (got if got is not None else runtime(
            f"{name} is given a value known only when the script runs"), where)
    if not every:
        kept = {n: v for n, v in out.items() if n.startswith("SLURM_")}
        out.clear()
        out.update(kept)
    for name, pair in given.items():
        if not every or name not in out:
            out[name] = pair
