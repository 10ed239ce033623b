"""Values a shell variable may hold instead of the one the walk holds (issue 22: a launch's
flags only from what reaches the command).

:mod:`.shellexpand` walks a script keeping one value per variable. Where an ``if`` / ``case``
test cannot be decided here, the assignment in its branch replaces that value all the same,
and the value it may not have replaced was lost: Pai-Megatron-Patch's run_mcore_qwen3.sh:319-333
(alibaba/Pai-Megatron-Patch @ a098ca5a) sets ``pr_options`` in three arms of ``if [ $PR = fp16 ]
... elif [ $PR = fp8 ]``; with ``PR`` unknown the walk kept the fp8 arm's flags only, so the
fp16 arm's ``--fp16`` vanished instead of being "may be given". This mixin keeps, per variable,
those other values (:class:`Ghost`): the value an assignment in an undecided branch may not have
replaced, and the ghosts of every variable an assignment's words name (``run_cmd="torchrun ...
${pr_options}"`` carries ``pr_options``'s), so the launch command sees every value that may
reach it (:attr:`.shellexpand.Launch.maybe`). A variable never expanded into the command brings
nothing, however many values it held.

Bounded: at most :data:`MAX_GHOSTS` per variable; past it :attr:`Maybe.ghost_cut` says where,
and the readers take the launch as not fully known.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from preflight.reading.shellfields import split_field
from preflight.reading.shelltypes import Arg, Field, Statement, Word

MAX_GHOSTS = 64
"""Other values kept per variable (a real script's if/elif ladder has a handful of arms)."""


@dataclass(frozen=True)
class Ghost:
    """A value a variable may hold: ``over`` is where the assignment that may have replaced it
    is written, ``branches`` the undecided if/case branches that assignment stands in (a launch
    inside all of them sees the replacement, so not this value)."""

    value: tuple[Field, ...]
    over: int
    branches: tuple[int, ...]


class Maybe:
    """Mixin of the evaluator (:class:`.shellexpand.Eval`) keeping :class:`Ghost` values."""

    env: dict[str, list[Field]]
    runs: dict[int, bool | None]
    _ghosts: dict[str, tuple[Ghost, ...]] | None = None
    ghost_cut: int | None = None
    """Where a variable first had more than :data:`MAX_GHOSTS` other values."""

    def ghosts(self) -> dict[str, tuple[Ghost, ...]]:
        if self._ghosts is None:
            self._ghosts = {}
        return self._ghosts

    def share(self, other: Maybe) -> None:
        """``other`` (the evaluator of an ``eval`` / ``bash -c`` string) sees these ghosts."""
        other._ghosts = dict(self.ghosts())
        other.ghost_cut = self.ghost_cut

    def named(self, words: tuple[Word, ...]) -> tuple[Ghost, ...]:
        """The ghosts of the variables ``words`` expand (each once)."""
        table = self.ghosts()
        if not table:
            return ()
        out: dict[int, Ghost] = {}
        for word in words:
            for part in word:
                if part.var and part.param is None:
                    for g in table.get(part.text, ()):
                        out.setdefault(id(g), g)
        return tuple(out.values())

    def track(self, st: Statement, old: list[Field] | None) -> None:
        """After ``st`` assigned its variable (``old``: the value before): what else it may
        hold now."""
        assert st.assign is not None
        table = self.ghosts()
        undecided = tuple(b for b in st.branch if self.runs.get(b) is not True)
        got: dict[int, Ghost] = {}
        if undecided or st.append:      # the values before may still hold
            for g in table.get(st.assign, ()):
                got.setdefault(id(g), g)
        for g in self.named(st.words):  # `S="$S more"`, `CMD="torchrun $OPTS"`
            got.setdefault(id(g), g)
        if undecided and not st.append and old and any(s.text for f in old for s in f):
            g = Ghost(tuple(old), st.offset, undecided)
            got[id(g)] = g
        if not got:
            table.pop(st.assign, None)
            return
        kept = tuple(got.values())
        if len(kept) > MAX_GHOSTS:
            kept = kept[:MAX_GHOSTS]
            if self.ghost_cut is None:
                self.ghost_cut = st.offset
        table[st.assign] = kept


def arg(field: Field, branch: tuple[int, ...], runs: dict[int, bool | None]) -> Arg:
    """One argument of a launch from its expanded field (:class:`.shelltypes.Arg`)."""
    text = "".join(s.text for s in field)
    opaque = next((s.opaque for s in field if s.opaque), None)
    # set inside an if/case branch that the launch command itself is not in, and that is not
    # known to run
    cond = next((s.offset for s in field if any(
        b not in branch and runs.get(b) is not True for b in s.branch)), None)
    start = next((s.offset for s in field if s.text), field[0].offset if field else 0)
    return Arg(text, start, opaque, cond)


def words(ghosts: tuple[Ghost, ...], branch: tuple[int, ...], runs: dict[int, bool | None],
          limit: int = 20_000) -> tuple[Arg, ...]:
    """The words other values of a launch's variables give, each conditional on the branch it
    was set in or the one whose assignment may have replaced it (a launch inside that branch
    sees the replacement)."""
    out: list[Arg] = []
    for g in ghosts:
        if g.branches and all(b in branch for b in g.branches):
            continue
        for f in g.value:
            for piece in split_field(f):
                got = arg(piece, branch, runs)
                out.append(got if got.conditional is not None else replace(got, conditional=g.over))
                if len(out) >= limit:
                    return tuple(out)
    return tuple(out)
