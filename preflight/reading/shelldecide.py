"""Whether an ``if`` / ``elif`` / ``else`` branch or a ``case`` arm runs, decided from the values
the script holds at that point; nothing is run.

A mixin of the evaluator (:class:`.shellexpand.Eval`), split out of shellexpand.py (shfix2,
session 39: it was at the 400-line bound). A test is evaluated where its words are known
(:mod:`.shelltests`: ``[ -n X ]``, ``[ X = Y ]``, ``case`` patterns); an arm after one that runs
does not run; a branch nobody can decide is None (its values *may* apply), except that an
``exit`` in such a branch means the launch after it is reached only when the branch did not run.
"""

from __future__ import annotations

from collections.abc import Callable

from preflight.reading import shellarith, shellchain, shellloops
from preflight.reading.shellfields import join as _join
from preflight.reading.shelltests import bracket, glob
from preflight.reading.shelltypes import Field, Part, Statement, Word


class Decide:
    """Mixin of :class:`.shellexpand.Eval`: the branches decided so far (``runs``)."""

    runs: dict[int, bool | None]      # branch -> runs (None: cannot tell)
    nocase: bool | None = False       # `shopt -s nocasematch` in force (None: not known)
    chains: dict[int, tuple[int, set[bool | None]]]

    def word(self, word: Word, branch: tuple[int, ...], split: bool, test: bool = False
             ) -> list[Field]:
        raise NotImplementedError     # the evaluator's

    def lookup(self, part: Part, branch: tuple[int, ...]) -> list[Field]:
        raise NotImplementedError     # the evaluator's

    def decide(self, st: Statement) -> None:
        """Whether the branch an ``if`` / ``elif`` / ``else`` opens runs, from its test and
        the branches before it (None where a test cannot be evaluated here)."""
        assert st.test is not None
        branch, before = st.test
        earlier = self.earlier(before)
        if True in earlier:
            self.runs[branch] = False
        elif st.loop_test == "arith":           # for ((INIT; COND; STEP))
            self.runs[branch] = shellarith.loop_runs(
                "".join(p.text for w in st.words for p in w), self.integer(st.branch))
        elif st.loop_test == "for":
            self.runs[branch] = shellloops.runs("for", None, [
                f for w in st.words for f in self.word(w, st.branch, True)])
        elif not st.words:                      # else
            self.runs[branch] = True if earlier <= {False} else None
        else:
            got = self.matches(st) if st.patterns is not None else shellchain.evaluate(
                st.words, st.chain, lambda words: self.test(   # `{ a || b; } && ! c`: as bash
                    [f for w in words for f in self.word(w, st.branch, True, True)], st.branch))
            got = shellloops.runs(st.loop_test, got, []) if st.loop_test else got
            self.runs[branch] = got if earlier <= {False} or got is False else None

    def earlier(self, before: tuple[int, ...]) -> set[bool | None]:
        """What the earlier branches of this ``if`` do, each looked at once (arms are decided
        in order, each final by the next: 10^4 elif arms were 10^8 lookups)."""
        seen, got = self.chains.get(before[0], (0, set())) if before else (0, set())
        got = got | {self.runs.get(b) for b in before[seen:]}
        if before:
            self.chains[before[0]] = (len(before), got)
        return got

    def integer(self, branch: tuple[int, ...]) -> Callable[[str], str | None]:
        """A variable's value as text where known here, for :mod:`.shellarith`."""
        def value(name: str) -> str | None:
            held = _join(self.lookup(Part(name, 0, var=True), branch))
            return None if any(s.opaque for s in held) else "".join(s.text for s in held)
        return value

    def test(self, fields: list[Field], branch: tuple[int, ...] = ()) -> bool | None:
        words = ["".join(s.text for s in f) for f in fields]
        negate = words[:1] == ["!"] and len(words) == 2
        if len(words) == 1 + negate and shellarith.is_arith(words[-1]) and \
                not any(s.opaque for s in fields[-1]):       # `if (( N > 1 ))`, `if ! (( 0 ))`
            got = shellarith.succeeds(words[-1], self.integer(branch))
            return None if got is None else got != negate
        return bracket(None if any(s.opaque for f in fields for s in f) else
                       ["".join(s.text for s in f) for f in fields], self.nocase)

    def shopt(self, st: Statement, fields: list[Field]) -> None:
        """``shopt -s nocasematch`` / ``shopt -u nocasematch``: ``case`` and ``[[ == ]]``
        match regardless of case from here on (redteam11: ``case $P in FP8)`` with ``P=fp8``
        was read as not matching); set in a branch not known to run: not known."""
        words = ["".join(s.text for s in f) if not any(s.opaque for s in f) else None
                 for f in fields[1:]]
        if None in words:         # `shopt -s $OPTS`: may be it
            self.nocase = None
            return
        flags = [w for w in words if w is not None and w.startswith("-")]
        if "nocasematch" not in words or "-o" in flags or not {"-s", "-u"} & set(flags):
            return                # another option, `set -o`'s, or a query (`shopt -q`)
        on = "-s" in flags
        sure = all(self.runs.get(b) is True for b in st.branch) and not st.subshell
        self.nocase = on if sure or self.nocase == on else None

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
            match = glob(pattern, value, self.nocase)
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
