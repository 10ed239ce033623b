"""The rules a check evaluates: the bundled base plus the team's own rule packs (``--rules DIR``).

Why (issue 12): ``--rules DIR`` used to *replace* the bundled rules, so adding one team rule
dropped every known-bug check. Packs now add to the base; ``--no-bundled-rules`` replaces it.
Pack rule ids may use their own prefix (``ACME-0001``); an id or alias that is already taken
(by the base or another pack) is a load error naming both files, never a silent override.
"""

from __future__ import annotations

from collections.abc import Sequence

from preflight.engine.loader import load_rules, no_rule_files
from preflight.engine.model import Problem, RuleLoadError, RuleSet


def load_check_rules(packs: Sequence[str] = (), *, bundled: bool = True,
                     with_tests: bool = False, present: frozenset[str] | None = None) -> RuleSet:
    """The bundled rules (unless ``bundled`` is False) and every rule in ``packs``, as one set.

    ``present``: the fact names of the one check this set will evaluate; bundled rules certainly
    quiet on them are then counted but not built (:func:`preflight.engine.loader.load_rules`).

    Raises :class:`RuleLoadError` for a pack file that does not load or that reuses an id, and
    a usage error when there is no rule at all (a gate that checks nothing must not pass).
    """
    base = load_rules(None, with_tests=with_tests, present=present) if bundled else None
    extra = load_rules(list(packs), with_tests=with_tests) if packs else None
    if extra is not None and len(extra) == 0:
        raise no_rule_files(list(packs))
    if base is None and extra is None:
        raise no_rule_files(list(packs))
    if base is None or extra is None:
        return base if base is not None else extra  # type: ignore[return-value]
    clashes = []
    # without case (issue 21 item 10): a pack's fp8d-ds-0002 would pass for the bundled rule
    taken = {n.casefold(): n for r in base for n in (r.id, *r.aliases)}
    taken.update((n.casefold(), n) for n in base.skipped)
    for rule in extra:
        for own in (rule.id, *rule.aliases):
            name = taken.get(own.casefold())
            if name is not None:
                other = base.get(name)
                where = other.path if other is not None else base.canonical(name)
                same = "" if name == own else f" (as {name!r}: ids are compared without case)"
                clashes.append(Problem(rule.path, None,
                                       f"rule id {own!r} is already used by the bundled rule "
                                       f"{where}{same}; give the pack its own prefix "
                                       "(e.g. ACME-0001)"))
    if clashes:
        raise RuleLoadError(clashes)
    rules = tuple(sorted((*base.rules, *extra.rules), key=lambda r: r.id))
    return RuleSet(rules, base.warnings + extra.warnings, base.sources + extra.sources,
                   skipped=base.skipped)
