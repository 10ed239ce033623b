"""A name whose object is changed in place after it is bound (reading/pyscopedata.mutated, pyfix7
item 6; holdout23 scrollprize-villa gp3d/train.py:184-192: ``fragment_ids = []`` then
``.append`` in a ``for`` over ``glob.glob(...)`` read as the empty list, so ``if not
all_fragments: return`` pruned ``pl.Trainer(precision="transformer-engine")``)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved

_JOB = """
    import glob
    import lightning.pytorch as pl

    def fragments():
        ids = []
        for f in glob.glob("*.zarr"):
            {mutation}
        return ids

    def main():
        found = fragments()
        if not found:
            return
        trainer = pl.Trainer(precision="transformer-engine")

    main()
"""


def _module(src: str) -> Module:
    return Module("train.py", ast.parse(textwrap.dedent(src)), ())


def _value(src: str, name: str) -> object:
    m = _module(src)
    return m.evaluate(ast.parse(name, mode="eval").body, m.module)


@pytest.mark.parametrize("mutation", ["ids.append(f)", "ids.extend([f])", "ids.insert(0, f)",
                                      "ids += [f]"])
def test_a_list_filled_in_a_loop_never_prunes_what_follows(mutation: str) -> None:
    made = [(c.name, c.when) for c, _ in _module(_JOB.format(mutation=mutation)).calls()]
    assert ("Trainer", None) in made


def test_a_list_never_changed_still_prunes() -> None:
    made = {c.name for c, _ in _module(_JOB.format(mutation="pass")).calls()}
    assert "Trainer" not in made


@pytest.mark.parametrize("src", [
    "xs = []\nxs.append(1)\ngot = xs\n",
    "d = {}\nd.update(a=1)\ngot = d\n",
    "d = {'a': 1}\nd.setdefault('b', 2)\ngot = d\n",
    "s = set()\ns.add(1)\ngot = s\n",
    "xs = [1, 2]\ndel xs[0]\ngot = xs\n",
    "xs = [2, 1]\nxs.sort()\ngot = xs\n",
])
def test_a_value_changed_in_place_is_unknown(src: str) -> None:
    got = _value(src, "got")
    assert isinstance(got, Unresolved) and "changed in place" in got.reason


def test_a_change_after_the_use_does_not_count() -> None:
    assert _value("xs = ['fp8']\ngot = xs\nxs.append(1)\n", "got") == ["fp8"]


def test_an_attribute_append_leaves_other_names_alone() -> None:
    assert _value("xs = ['fp8']\nself_like = object()\nself_like.ys.append(1)\ngot = xs\n",
                  "got") == ["fp8"]


def test_many_changes_are_bounded() -> None:
    src = "xs = []\n" + "xs.append(1)\n" * 5_000 + "got = xs\n"
    assert isinstance(_value(src, "got"), Unresolved)
