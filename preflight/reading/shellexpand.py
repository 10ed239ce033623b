"""The arguments a launch script passes to its training program: words expanded, nothing run.

:func:`launch_args` walks the statements of :mod:`.shellwords` in order, keeping what each
variable holds at that point (``A=(...)``, ``A+=(...)``, ``S="..."``, ``S="$S more"``,
``X=${X:-default}``), and expands the first command that runs the entry point the caller looks
for (``verl.trainer.main_ppo``, ``run_recipe.py``, ``train.py`` ...): ``"${ARR[@]}"`` gives one
argument per element, an unquoted ``$S`` is split on blanks, and ``bash -c "$CMD"`` / ``eval``
re-split their string, so ``CMD="$CMD $CLI_OVERRIDES"; srun bash -c "$CMD"`` yields the
overrides. Every argument keeps the offset where its first character was *written* (inside the
array or string that holds it), so a setting is reported at its own line.

What cannot be known here stays unknown, with the reason: a ``$(...)``, a positional
parameter nobody in the job gives (those a caller gives are bound: :mod:`.shellargs`), a
variable never set in the script (it comes from the environment) make the argument
:attr:`Arg.opaque`; a value assigned inside an ``if``/``case`` branch that does not also hold
the launch command may not apply (:attr:`Arg.conditional`, with the line of the branch's
assignment). Bounded: the expanded text is capped (:data:`MAX_CHARS`), so ``A="$A $A"`` thirty
times over stops with :class:`TooLarge` instead of filling memory.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from preflight.reading.shellargs import Params, Positional, moved
from preflight.reading.shelltests import bracket, glob
from preflight.reading.shelltypes import Field, Seg
from preflight.reading.shellvars import runtime_reason
from preflight.reading.shellwords import Part, Split, Statement, Word, split

MAX_CHARS = 2 * 1024 * 1024
"""Characters all expansions of one script may produce, each piece counting 16 more (a real
script: kilobytes; a 1 MB script expanded once fits)."""

MAX_ARGS = 20_000
"""Arguments of the launch command read (10,000 overrides is already no real job)."""


class TooLarge(Exception):
    """The script's variables expand to more than :data:`MAX_CHARS`; ``offset`` is where."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


@dataclass(frozen=True)
class Arg:
    """One argument of the launch command."""

    text: str                       # quotes removed, variables substituted
    offset: int                     # where its first character is written in the script
    opaque: str | None = None       # why its value is not known here (then ``text`` is as written)
    conditional: int | None = None  # offset of the assignment, when made in another if/case branch


@dataclass(frozen=True)
class Launch:
    """The entry point found and the arguments after it."""

    entry: Arg
    args: tuple[Arg, ...]
    before: tuple[Arg, ...]         # the wrappers and their flags (torchrun --nproc_per_node 8)
    offset: int                     # where the command statement starts
    forwarded: bool = False         # "$@" passes the caller's arguments on: more may come
    env: tuple[tuple[str, str], ...] = ()   # the script's variables there, as text (values
                                            # with a run-time part left out)


_BLANK = re.compile(r"\S+")
_SHELLS = {"bash", "sh", "zsh", "dash"}
_NOT_LAUNCHERS = {"echo", "printf", "cat", "grep", "sed", "awk", "ls", "cp", "mv", "rm", "ln",
                  "test", "[", "[[", "cd", "mkdir", "tee", "head", "tail", "chmod", "touch", "wc",
                  "wget", "curl", "git", "pip", "find", "readlink", "realpath", "dirname",
                  "basename", "which", "type", "command", "sleep", "kill", "pkill", "tar"}


class _Eval(Positional):
    def __init__(self, outer: dict[str, str] | None = None,
                 remap: Callable[[int], int] | None = None) -> None:
        self.env: dict[str, list[Field]] = {}
        self.outer = outer or {}     # set by the scripts this one sources (no offsets here)
        self.spent = 0
        self.remap = remap or (lambda offset: offset)   # offsets of a `bash -c` string
        self.runs: dict[int, bool | None] = {}      # branch -> runs (None: cannot tell)
        self.params = Params.of(self.outer)         # $1, "$@" (reading/shellargs.py)

    def decide(self, st: Statement) -> None:
        """Whether the branch an ``if`` / ``elif`` / ``else`` opens runs, from its test and
        the branches before it (None where a test cannot be evaluated here)."""
        assert st.test is not None
        branch, before = st.test
        earlier = [self.runs.get(b) for b in before]
        if any(r is True for r in earlier):
            self.runs[branch] = False
        elif not st.words:                      # else
            self.runs[branch] = True if all(r is False for r in earlier) else None
        else:
            fields = [] if st.patterns is not None else \
                [f for w in st.words for f in self.word(w, st.branch, True)]
            got = self.matches(st) if st.patterns is not None else bracket(
                None if any(s.opaque for f in fields for s in f) else
                ["".join(s.text for s in f) for f in fields])
            self.runs[branch] = got if all(r is False for r in earlier) or got is False \
                else None

    def matches(self, st: Statement) -> bool | None:
        """Whether ``case SUBJECT in PATTERNS)`` picks this arm (None: cannot tell here)."""
        assert st.patterns is not None
        subject = _join(self.word(st.words[0], st.branch, False)) if st.words else []
        if any(s.opaque for s in subject):
            return None
        text = "".join(s.text for s in subject)

        def value(part: Part) -> str | None:
            held = _join(self.lookup(part, st.branch))
            return None if any(s.opaque for s in held) else "".join(s.text for s in held)

        got: bool | None = False
        for pattern in st.patterns:
            match = glob(pattern, value)
            hit = match(text) if match is not None else None
            if hit is None:
                got = None
            elif hit:
                return True
        return got

    def exited(self, st: Statement) -> None:
        """``exit`` in a branch nobody can decide: the launch after it is reached only when
        that branch did not run (``if [ -z "$ROOT" ]; then usage; exit 1; fi``), so for the
        launch it did not (a subshell's ``exit`` ends the subshell only)."""
        if st.branch and not st.subshell and self.runs.get(st.branch[-1], None) is None:
            self.runs[st.branch[-1]] = False

    def step(self, st: Statement) -> list[Field] | None:
        """One statement of a walk in order: None where it runs no command here (a branch not
        taken, a test, an assignment, ``exit``, ``shift`` / ``set --``: each applied), else
        its command's fields."""
        if any(self.runs.get(b) is False for b in st.branch):
            return None       # in a branch whose test is false here: it does not run
        if st.test is not None:
            self.decide(st)
            return None
        if st.assign is not None:
            self.assign(st)
            return None
        fields = self.command(st)
        if fields and "".join(s.text for s in fields[0]) == "exit":
            self.exited(st)
            return None
        return None if self.positional(st, fields) else fields

    def charge(self, fields: list[Field], at: int) -> None:
        self.spent += sum(len(s.text) + 16 for f in fields for s in f)
        if self.spent > MAX_CHARS:
            raise TooLarge(at)

    def lookup(self, part: Part, branch: tuple[int, ...]) -> list[Field]:
        value = self.env.get(part.text)
        if value is None and part.text in self.outer:
            why = runtime_reason(self.outer[part.text])
            value = [[Seg(self.outer[part.text], part.offset, ()) if why is None else
                      Seg("$" + part.text, self.remap(part.offset), branch, why)]]
        if value is not None and not (part.default is not None and not part.unset_only and
                                      not _nonempty(value)):      # `${A-d}` of '' is ''
            return value if part.array else value[:1]
        if part.default_parts:
            return [_join(self.word(part.default_parts, branch, False))]
        if part.default is not None:
            return [[Seg(part.default, self.remap(part.offset), branch)]]
        why = f"${part.text} is not set in the script (it comes from the environment)"
        return [[Seg("$" + part.text, self.remap(part.offset), branch, why)]]

    def word(self, word: Word, branch: tuple[int, ...], split: bool) -> list[Field]:
        """The fields a word expands to (``split``: unquoted expansions are word-split)."""
        fields: list[Field] = [[]]
        started = False        # the word yields at least one field, even if empty
        for part in word:
            params = None if part.param is None else self.params_at(part.offset)
            value = None if part.param is None else (params or self.params).expand(
                part, branch, params is None, self.remap)
            if value is None and part.opaque is not None:
                fields[-1].append(Seg(part.text, self.remap(part.offset), branch, part.opaque,
                                      not part.quoted))
                started = True
                continue
            if not part.var:
                fields[-1].append(Seg(part.text, self.remap(part.offset), branch))
                started = True
                continue
            value = self.lookup(part, branch) if value is None else value
            if part.quoted or not split:
                items = value if part.array and split else [_join(value)]
                for n, item in enumerate(items):
                    if n:
                        fields.append([])
                    fields[-1].extend(item)
                started = started or bool(items)
                continue
            for n, item in enumerate(value):
                if n:                # unquoted $@ / ${A[@]}: each element ends a word
                    fields.append([])
                pieces = _split(item)
                if not pieces:
                    continue
                fields[-1].extend(pieces[0])
                for piece in pieces[1:]:
                    fields.append(list(piece))
                started = True
        if len(fields) > 1:          # (the empty words unquoted elements leave: none)
            fields = [f for f in fields if f] or [[]]
        if not started or (len(fields) == 1 and not fields[0] and not _quoted_empty(word)):
            return []
        return fields

    def assign(self, st: Statement) -> None:
        assert st.assign is not None
        if st.array:
            value = [f for w in st.words for f in self.word(w, st.branch, True)]
        else:
            value = [_join([f for w in st.words for f in self.word(w, st.branch, False)])]
        self.charge(value, st.offset)
        old = self.env.get(st.assign, [])
        if st.append and st.array:
            value = [*old, *value]
        elif st.append:
            value = [[*(old[0] if old else []), *(value[0] if value else [])]]
        self.env[st.assign] = value

    def command(self, st: Statement) -> list[Field]:
        fields = [f for w in st.words for f in self.word(w, st.branch, True)]
        self.charge(fields, st.offset)
        return fields


def _nonempty(value: list[Field]) -> bool:
    return any(s.text for f in value for s in f)


def _quoted_empty(word: Word) -> bool:
    return any(p.quoted and not p.var for p in word)


def _join(fields: list[Field]) -> Field:
    out: Field = []
    for n, f in enumerate(fields):
        if n and f:
            out.append(Seg(" ", f[0].offset, f[0].branch))
        out.extend(f)
    return out


def _split(field: Field) -> list[Field]:
    """Word splitting on blanks, keeping each piece's offset (opaque pieces stay whole)."""
    out: list[Field] = []
    cur: Field = []
    for seg in field:
        if seg.opaque is not None:
            cur.append(replace(seg, loose=True))    # bash splits it: any number of words
            continue
        pos = 0
        for m in _BLANK.finditer(seg.text):
            if m.start() > pos and cur:      # blanks before this piece end the one before
                out.append(cur)
                cur = []
            cur.append(Seg(m.group(0), seg.offset + m.start(), seg.branch))
            pos = m.end()
        if pos < len(seg.text) and cur:      # so do trailing blanks
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _arg(field: Field, branch: tuple[int, ...], runs: dict[int, bool | None]) -> Arg:
    text = "".join(s.text for s in field)
    opaque = next((s.opaque for s in field if s.opaque), None)
    # set inside an if/case branch that the launch command itself is not in, and that is not
    # known to run
    cond = next((s.offset for s in field if any(
        b not in branch and runs.get(b) is not True for b in s.branch)), None)
    start = next((s.offset for s in field if s.text), field[0].offset if field else 0)
    return Arg(text, start, opaque, cond)


def _inner_script(fields: list[Field]) -> tuple[int, Field] | None:
    """``bash -c STR`` / ``sh -lc STR`` / ``eval WORDS``: (index of the shell word, the string
    that is run as a script of its own)."""
    for n, f in enumerate(fields):
        name = os.path.basename("".join(s.text for s in f))
        if name == "eval" and n + 1 < len(fields):
            return n, _join(fields[n + 1:])
        if name in _SHELLS:
            k = n + 1
            while k < len(fields):
                opt = "".join(s.text for s in fields[k])
                if not opt.startswith("-") or opt.startswith("--"):
                    return None
                k += 1
                if "c" in opt[1:]:
                    return (n, fields[k]) if k < len(fields) else None
            return None
    return None


def _flatten(field: Field) -> tuple[str, Callable[[int], int]]:
    """The field's text, and where each of its characters was written in the script."""
    starts: list[int] = []
    pos = 0
    for seg in field:
        starts.append(pos)
        pos += len(seg.text)

    def remap(offset: int) -> int:
        k = max(bisect.bisect_right(starts, offset) - 1, 0)
        if not field:
            return 0
        seg = field[k]
        return seg.offset if seg.opaque else seg.offset + max(offset - starts[k], 0)

    return "".join(s.text for s in field), remap




def launch_args(split: Split, is_entry: Callable[[str], bool],
                outer: dict[str, str] | None = None) -> Launch | None:
    """The first command whose words include an entry point ``is_entry`` accepts, expanded
    (``outer``: variables the scripts it sources set). Raises :class:`TooLarge` when the
    script's variables expand beyond the budget."""
    return next(_launches(split, is_entry, _Eval(outer), (), 0), None)


def launches(split: Split, is_entry: Callable[[str], bool], outer: dict[str, str] | None = None,
             limit: int = 8) -> list[Launch]:
    """Every command (at most ``limit``) :func:`launch_args` would consider, in order: a script
    may run the entry point more than once (redteam2: a decoy in a function never called)."""
    return list(itertools.islice(_launches(split, is_entry, _Eval(outer), (), 0), limit))


def _launches(split: Split, is_entry: Callable[[str], bool], ev: _Eval,
              prefix: tuple[int, ...], depth: int) -> Iterator[Launch]:
    ev.prepare(split)
    for st in split.statements:
        if prefix:    # a `bash -c` string: its branches sit inside the command that runs it
            st = replace(st, branch=prefix + tuple(-b for b in st.branch),
                         test=(-st.test[0], tuple(-b for b in st.test[1])) if st.test else None)
        fields = ev.step(st)
        if fields is None:
            continue
        inner = _inner_script(fields) if depth < 4 else None
        if inner is not None:
            text, remap = _flatten(inner[1])
            child = _Eval(ev.outer, remap)
            child.env, child.spent, child.runs = dict(ev.env), ev.spent, ev.runs
            # `eval` runs in the script's shell (its "$@"); `bash -c STR a b` gets a b
            child.params = ev.params if "".join(s.text for s in fields[inner[0]]) == "eval" \
                else Params(None, "a `bash -c` string's $1, \"$@\" are the words after it")
            for found in _launches(split_text(text), is_entry, child, st.branch, depth + 1):
                ev.spent = child.spent
                yield replace(found, offset=ev.remap(st.offset))
            ev.spent = child.spent
            continue
        texts = ["".join(s.text for s in f) for f in fields]
        if texts and os.path.basename(texts[0]) in _NOT_LAUNCHERS:
            continue          # `echo "... train.py ..."`, `cp train.py x`: nothing runs it
        at = next((n for n, t in enumerate(texts) if is_entry(t)), None)
        if at is None:
            continue
        # "$@" of a script nobody in the job runs: its arguments, none known (never invented)
        unbound = [len(f) == 1 and f[0].opaque is not None and t in ("$@", "$*") and
                   not moved(f[0].opaque) for f, t in zip(fields[at + 1:], texts[at + 1:])]
        forwarded = any(unbound)
        args = [_arg(f, st.branch, ev.runs) for f, drop in zip(fields[at + 1:], unbound)
                if not drop][:MAX_ARGS]
        before = tuple(_arg(f, st.branch, ev.runs) for f in fields[:at])
        env = tuple((name, "".join(s.text for s in value[0])) for name, value in ev.env.items()
                    if len(value) == 1 and not any(s.opaque for s in value[0]))
        yield Launch(_arg(fields[at], st.branch, ev.runs), tuple(args), before,
                     ev.remap(st.offset), forwarded, env)


split_text = split
Eval = _Eval
"""The evaluator :func:`launch_args` walks a script with (:mod:`.shellcalls` walks it too)."""
