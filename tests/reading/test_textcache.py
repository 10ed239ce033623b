"""One text per file per check (reading/textcache.py): a launch line's train.py is opened once
however often detection and the readers look at it, and a new check reads it afresh."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from preflight.base import bounded
from preflight.jobs.read import read_paths
from preflight.reading import textcache
from preflight.reading.parse import read_text

TRAIN = """\
import click
import torch


@click.command()
@click.option("--fp8-recipe", default="tensorwise")
@click.option("--fp8-format", default="e4m3")
def main(fp8_recipe, fp8_format):
    torch.manual_seed(0)


if __name__ == "__main__":
    main()
"""


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    opened: Counter[str] = Counter()
    real = bounded.read_bytes

    def read_bytes(path: str, limit: int) -> bytes:
        opened[os.path.realpath(path)] += 1
        return real(path, limit)

    monkeypatch.setattr(bounded, "read_bytes", read_bytes)
    return opened


def test_each_job_file_is_read_once_per_check(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    run = tmp_path / "run.sh"
    # Megatron's flags beside a script of the job that is no Megatron entry point (holdout6)
    run.write_text("#!/bin/bash\npython3 train.py --fp8-recipe mxfp8 --fp8-format e4m3 "
                   "--num-layers 2\n")
    opened = _counting(monkeypatch)
    read_paths([str(run)])
    assert opened, "nothing read"
    assert max(opened.values()) == 1, opened
    read_paths([str(run)])
    assert opened[os.path.realpath(tmp_path / "train.py")] == 2     # a new check reads afresh


def test_outside_a_check_nothing_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    assert read_text(str(path)) == "a: 1\n"
    path.write_text("a: 2\n")
    assert read_text(str(path)) == "a: 2\n"
    with textcache.per_check():
        assert read_text(str(path)) == "a: 2\n"
        path.write_text("a: 3\n")
        assert read_text(str(path)) == "a: 2\n"      # one text for the whole check
    assert read_text(str(path)) == "a: 3\n"


def test_the_kept_texts_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textcache, "MAX_KEPT", 10)
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    big.write_text("x" * 20)
    small.write_text("y")
    with textcache.per_check():
        read_text(str(big))
        read_text(str(small))
        assert textcache.get(str(big)) is None and textcache.get(str(small)) == "y"


def test_a_text_put_again_counts_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The running total takes a replaced text's length back out (mend: it was summed anew)."""
    monkeypatch.setattr(textcache, "MAX_KEPT", 10)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with textcache.per_check():
        textcache.put(a, "x" * 6)
        textcache.put(a, "x" * 2)          # 6 + 2 <= 10: replaces the 6
        textcache.put(b, "y" * 7)          # 2 + 7 <= 10: kept (9 + 7 would not be)
        assert textcache.get(a) == "xx" and textcache.get(b) == "y" * 7


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 12)), max_size=20))
def test_the_running_total_keeps_what_the_sum_kept(tmp_path_factory: pytest.TempPathFactory,
                                                  puts: list[tuple[str, int]]) -> None:
    """Whatever is put, in any order, the same texts are kept as when every kept text's
    length was summed on each put (the rule before the running total)."""
    root = tmp_path_factory.getbasetemp()
    model: dict[str, str] = {}
    old_max = textcache.MAX_KEPT
    textcache.MAX_KEPT = 16
    try:
        with textcache.per_check():
            for name, size in puts:
                path, text = os.path.realpath(root / name), "z" * size
                if sum(map(len, model.values())) + size <= 16:
                    model[path] = text
                textcache.put(path, text)
                assert {n: textcache.get(n) for n in model} == model
                assert all(textcache.get(os.path.realpath(root / n)) is None
                           for n in "abc" if os.path.realpath(root / n) not in model)
    finally:
        textcache.MAX_KEPT = old_max


def test_a_memo_is_worked_out_once_per_check() -> None:
    made: list[str] = []

    def make(key: str) -> str:
        made.append(key)
        return key.upper()

    assert textcache.memo("a", lambda: make("a")) == "A"
    assert textcache.memo("a", lambda: make("a")) == "A"
    assert made == ["a", "a"]                        # outside a check: nothing kept
    with textcache.per_check():
        assert [textcache.memo(k, lambda k=k: make(k)) for k in "aba"] == ["A", "B", "A"]
        assert made == ["a", "a", "a", "b"]
        assert textcache.memo("b", lambda: make("b")) == "B"
    with textcache.per_check():                      # a new check works it out again
        assert textcache.memo("a", lambda: make("a")) == "A"
    assert made == ["a", "a", "a", "b", "a"]


def test_the_memos_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textcache, "MAX_MEMOS", 2)
    made: list[int] = []
    with textcache.per_check():
        for n in [1, 2, 3, 1, 3]:
            textcache.memo(n, lambda n=n: made.append(n))
    assert made == [1, 2, 3, 3]                      # 3 was not kept: worked out again
