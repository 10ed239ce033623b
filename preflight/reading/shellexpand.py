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

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from preflight.reading import shelldir, shellparam
from preflight.reading.launchedit import passive
from preflight.reading.shellargs import Params, Positional, moved
from preflight.reading.shelldecide import Decide
from preflight.reading.shellfields import flatten as _flatten
from preflight.reading.shellfields import join as _join
from preflight.reading.shellfields import nonempty as _nonempty
from preflight.reading.shellfields import quoted_empty as _quoted_empty
from preflight.reading.shellfields import split_field as _split
from preflight.reading.shellfiles import Files, environment, note, ran
from preflight.reading.shellinner import carried, inner_script
from preflight.reading.shellmaybe import Maybe
from preflight.reading.shellmaybe import arg as _arg
from preflight.reading.shellmaybe import words as _maybe
from preflight.reading.shellreach import unreached
from preflight.reading.shelltypes import Arg, Field, Seg
from preflight.reading.shellvars import runtime_reason
from preflight.reading.shellwords import Part, Split, Statement, Word, split

HIDDEN = "@*"
"""shellcalls.ANY: set where the caller sourced a file whose exports are not followed."""
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
class Launch:
    """The entry point found and the arguments after it."""

    entry: Arg
    args: tuple[Arg, ...]
    before: tuple[Arg, ...]         # the wrappers and their flags (torchrun --nproc_per_node 8)
    offset: int                     # where the command statement starts
    forwarded: bool = False         # "$@" passes the caller's arguments on: more may come
    env: tuple[tuple[str, str], ...] = ()   # the script's variables there, as text (values
                                            # with a run-time part left out)
    maybe: tuple[Arg, ...] = ()     # words that may also be on it: other values of the variables
                                    # it expands, from if/case branches not decided here
    maybe_cut: int | None = None    # where those values were cut (reading/shellmaybe.py)


class _Eval(Positional, Maybe, Decide):
    def __init__(self, outer: dict[str, str] | None = None,
                 remap: Callable[[int], int] | None = None) -> None:
        self.env: dict[str, list[Field]] = {}
        self.outer = outer or {}     # set by the scripts this one sources (no offsets here)
        self.spent = 0
        self.remap = remap or (lambda offset: offset)   # offsets of a `bash -c` string
        self.runs: dict[int, bool | None] = {}      # branch -> runs (None: cannot tell)
        self.chains: dict[int, tuple[int, set[bool | None]]] = {}   # (earlier)
        self.params = Params.of(self.outer)         # $1, "$@" (reading/shellargs.py)
        self.files = Files()    # what the script wrote so far, what it exports (shellfiles)
        # `$PWD` / `$(pwd)` in the script's own words: the folder its statement runs in
        # (reading/shellpwd.py; None: a run-time value, as in a `bash -c` string)
        self.pwd: Callable[[int], list[Field]] | None = None

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
        if fields and "".join(s.text for s in fields[0]) == "shopt":
            self.shopt(st, fields)
        return None if self.positional(st, fields) else fields

    def charge(self, fields: list[Field], at: int) -> None:
        self.spent += sum(len(s.text) + 16 for f in fields for s in f)
        if self.spent > MAX_CHARS:
            raise TooLarge(at)

    def lookup(self, part: Part, branch: tuple[int, ...]) -> list[Field]:
        value = self.env.get(part.text)
        if value is None and part.text == "PWD" and self.pwd is not None and \
                "PWD" not in self.outer:
            value = self.pwd(self.remap(part.offset))
        if value is None and part.text in self.outer:
            why = runtime_reason(self.outer[part.text])
            value = [[Seg(self.outer[part.text], part.offset, ()) if why is None else
                      Seg("$" + part.text, self.remap(part.offset), branch, why)]]
        if value is not None and not (part.default is not None and not part.unset_only and
                                      not _nonempty(value)):      # `${A-d}` of '' is ''
            return value if part.array else value[:1]
        if (hidden := runtime_reason(self.outer.get(HIDDEN) or "")) is not None:
            # a file the caller sourced exports what the text does not show (shellcalls.ANY):
            # `${PR:-bf16}` may be its PR, never the default (shell18's open item)
            return [[Seg("$" + part.text, self.remap(part.offset), branch,
                         f"${part.text} may be set by what the caller sources: {hidden}")]]
        if part.default_parts:
            return [_join(self.word(part.default_parts, branch, False))]
        if part.default is not None:
            return [[Seg(part.default, self.remap(part.offset), branch)]]
        why = f"${part.text} is not set in the script (it comes from the environment)"
        return [[Seg("$" + part.text, self.remap(part.offset), branch, why)]]

    def separator(self, part: Part) -> str | None:
        """What ``"$*"`` puts between words: IFS's first character as the script sets it
        (redteam8: ``IFS=,`` was read as a blank); None: not known here."""
        held = self.env.get("IFS") if part.param == "*" and part.quoted else None
        if held is None:
            return None if part.param == "*" and part.quoted and "IFS" in self.outer else " "
        text = "".join(s.text for f in held[:1] for s in f)
        return None if len(held) != 1 or any(s.opaque for s in held[0]) or "\\" in text \
            else text[:1] or ""

    def default_of(self, part: Part, branch: tuple[int, ...]
                   ) -> Callable[[], list[Field]] | None:
        """A positional parameter's default that holds references (``${1:-${ROOT}/x}``)."""
        return (lambda: [_join(self.word(part.default_parts, branch, False))]) \
            if part.default_parts else None

    def word(self, word: Word, branch: tuple[int, ...], split: bool, test: bool = False
             ) -> list[Field]:
        """The fields a word expands to (``split``: unquoted expansions are word-split;
        ``test``: a quoted empty value is one empty word, as in ``[ -n "$X" ]``)."""
        fields: list[Field] = [[]]
        started = False        # the word yields at least one field, even if empty
        for part in word:
            params = None if part.param is None else self.params_at(part.offset)
            value = None if part.param is None else (params or self.params).expand(
                part, branch, params is None, self.remap, self.default_of(part, branch))
            if value is None and part.folder is not None:     # the script's folder
                got = shelldir.evaluate(part, lambda w: self.word(w, branch, False), self.outer)
                value = None if got is None else [[Seg(got, self.remap(part.offset), branch)]]
            if value is None and part.op is not None:       # `${X%.sh}` (shellparam)
                value = self.operated(part, branch)
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
                sep = self.separator(part)
                items = value if part.array and split else [_join(value, sep)] \
                    if sep is not None else [[Seg(part.text + "/IFS", self.remap(part.offset), branch,
                                                  '"$*" joins its words with the first '
                                                  "character of IFS, not known here")]]
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
        if not started or (len(fields) == 1 and not fields[0] and not _quoted_empty(word) and
                           not (test and any(p.quoted for p in word))):
            return []
        return fields

    def operated(self, part: Part, branch: tuple[int, ...]) -> list[Field] | None:
        """``${X%.sh}``, ``${X/a/b}``: the operator on X's value where that is known here."""
        assert part.op is not None
        name, *op = part.op
        held = _join(self.lookup(Part(name, part.offset, var=True), branch))
        got = None if any(s.opaque for s in held) else shellparam.apply(
            (op[0], op[1], op[2]), "".join(s.text for s in held))
        return None if got is None else [[Seg(got, self.remap(part.offset), branch)]]

    def assign(self, st: Statement) -> None:
        assert st.assign is not None
        if st.element is not None:
            self.element(st)
            return
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
        self.track(st, old)     # what it may hold instead (reading/shellmaybe.py)

    def element(self, st: Statement) -> None:
        """``A[i]=v``: element ``i`` replaced where it is held, else ``v`` appended (an index
        not known here, ``A[${#A[@]}]=v``: appended, the common use)."""
        assert st.assign is not None and st.element is not None
        one = _join([f for w in st.words for f in self.word(w, st.branch, False)])
        self.charge([one], st.offset)
        old, at = self.env.get(st.assign, []), st.element
        if 0 <= at < len(old):
            new = [*old[:at], [*old[at], *one] if st.append else one, *old[at + 1:]]
        else:
            new = [*old, one]
        self.env[st.assign] = new
        # a replaced element: the array before may still be what the launch sees
        self.track(replace(st, append=not 0 <= at < len(old)), old)

    def command(self, st: Statement) -> list[Field]:
        fields = [f for w in st.words for f in self.word(w, st.branch, True)]
        self.charge(fields, st.offset)
        return fields


def launch_args(split: Split, is_entry: Callable[[str], bool],
                outer: dict[str, str] | None = None,
                pwd: Callable[[int], list[Field]] | None = None) -> Launch | None:
    """The first command whose words include an entry point ``is_entry`` accepts, expanded
    (``outer``: variables the scripts it sources set; ``pwd``: ``$PWD`` at an offset, from the
    walk of :mod:`.shellcalls`). Raises :class:`TooLarge` when the script's variables expand
    beyond the budget."""
    ev = _Eval(outer)
    ev.pwd = pwd
    return next(_reached(split, outer, _launches(split, is_entry, ev, (), 0)), None)


def launches(split: Split, is_entry: Callable[[str], bool], outer: dict[str, str] | None = None,
             limit: int = 8) -> list[Launch]:
    """Every command (at most ``limit``) :func:`launch_args` would consider, in order: a script
    may run the entry point more than once (a sweep, a baseline and the FP8 run)."""
    return list(itertools.islice(_reached(split, outer, _launches(
        split, is_entry, _Eval(outer), (), 0)), limit))


def _reached(split: Split, outer: dict[str, str] | None, found: Iterator[Launch]
             ) -> Iterator[Launch]:
    """``found`` less the commands bash never runs (:func:`.shellreach.unreached`: in a function
    the script never calls, after its ``exit``): redteam2's decoy in a function never called
    was a launch, and so the FP8 one of a multi-launch job (redteam11 prime-rl, session 43).
    A sourced script's functions may be called by the script that sources it: all kept."""
    if not split.text or shelldir.RUNS in (outer or {}):
        yield from found
        return
    why = unreached(split.text)
    yield from (lr for lr in found if why(lr.offset) is None)


def _launches(split: Split, is_entry: Callable[[str], bool], ev: _Eval,
              prefix: tuple[int, ...], depth: int) -> Iterator[Launch]:
    ev.prepare(split)
    for st in split.statements:
        if prefix:    # a `bash -c` string: its branches sit inside the command that runs it
            st = replace(st, branch=prefix + tuple(-b for b in st.branch),
                         test=(-st.test[0], tuple(-b for b in st.test[1])) if st.test else None)
        fields = ev.step(st)
        if st.writes or st.exported or st.unexported or st.prefix or ev.files.held:
            note(ev.files, st, fields, [_join(ev.word(w, st.branch, False)) if fields else None
                                        for w, _ in st.writes], ev.runs,
                 not any(a <= st.offset < b for a, b in ev.functions))
        if fields is None:
            continue
        inner = inner_script(fields) if depth < 4 else None
        wrote = ran(ev.files, fields) if inner is None and depth < 4 else None
        if inner is not None or wrote is not None:
            run = inner or wrote
            assert run is not None
            # a file the script wrote runs in a new shell: its exported variables only
            script, seen = (run[1], dict(ev.env)) if inner else \
                environment(ev.files, ev.env, run[1])
            text, remap = _flatten(script)
            child = _Eval(ev.outer if inner else {}, remap)
            child.env = seen
            child.spent, child.runs = ev.spent, ev.runs
            child.files = ev.files if inner else Files(ev.files.held)
            ev.share(child)
            outer = _maybe(ev.named(st.words), st.branch, ev.runs, MAX_ARGS)
            # `eval` runs in the script's shell (its "$@"); `bash -c STR a b` gets a b
            child.params = ev.params if inner and "".join(
                s.text for s in fields[inner[0]]) == "eval" else Params(
                None, "a `bash -c` string's $1, \"$@\" are the words after it" if inner else
                "the $1, \"$@\" of a script the job writes and runs are the words after it")
            for found in _launches(split_text(text), is_entry, child, st.branch, depth + 1):
                ev.spent = child.spent
                found = carried(found, run[1], st.branch, ev.runs)
                yield replace(found, offset=ev.remap(st.offset), maybe=found.maybe + outer,
                              maybe_cut=found.maybe_cut if found.maybe_cut is not None else
                              ev.ghost_cut)
            ev.spent = child.spent
            continue
        texts = ["".join(s.text for s in f) for f in fields]
        at = next((n for n, t in enumerate(texts) if is_entry(t)), None)
        if at is None or passive(texts[:at + 1]):
            continue          # `echo "... train.py ..."`, `sed -i ... train.py`: nothing runs
                              # it (reading/launchedit.py; up to the entry: `find -exec` runs it)
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
                     ev.remap(st.offset), forwarded, env,
                     _maybe(ev.named(st.words), st.branch, ev.runs, MAX_ARGS), ev.ghost_cut)


split_text = split
Eval = _Eval
"""The evaluator :func:`launch_args` walks a script with (:mod:`.shellcalls` walks it too)."""
