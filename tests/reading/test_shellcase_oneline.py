"""``case`` opened on the line of the ``do`` / ``then`` before it (shell16): ``while getopts
"a:b" opt; do case $opt in a) FP8=$OPTARG;; esac; done`` on one line took the arms for more of
the loop's test, ``esac`` closed nothing and the script was refused (NO-JOB); it splits as the
multi-line form does."""

from __future__ import annotations

import pytest

from preflight.reading.shellexpand import launch_args
from preflight.reading.shellwords import split

MULTI = ('FP8=0\nwhile getopts "f:l:" opt; do\n  case $opt in f) FP8=$OPTARG;; l) LR=1;; esac\n'
         'done\n')
ONE = 'FP8=0\nwhile getopts "f:l:" opt; do case $opt in f) FP8=$OPTARG;; l) LR=1;; esac; done\n'
RUN = "python train.py --fp8 $FP8\n"


def _shape(text: str) -> list[tuple[object, ...]]:
    return [(st.assign, st.branch, st.test, st.loop_test, st.patterns is not None,
             tuple("".join(p.text for p in w) for w in st.words)) for st in split(text).statements]


@pytest.mark.parametrize("one, multi", [
    (ONE, MULTI),
    ('if [ -n "$A" ]; then case $A in x) B=1;; esac; fi\n',
     'if [ -n "$A" ]; then\n  case $A in x) B=1;; esac\nfi\n'),
    ('for a in "$@"; do case $a in --fp8) F=1;; *) ;; esac; done\n',
     'for a in "$@"; do\n  case $a in --fp8) F=1;; *) ;; esac\ndone\n'),
    ('if [ -n "$A" ]; then B=1; else case $A in x) B=2;; esac; fi\n',
     'if [ -n "$A" ]; then B=1; else\n  case $A in x) B=2;; esac\nfi\n'),
])
def test_one_line_splits_as_the_multi_line_form(one: str, multi: str) -> None:
    assert split(one).unclosed is None and split(multi).unclosed is None
    assert _shape(one) == _shape(multi)


def test_the_option_value_is_a_runtime_value_on_one_line_too() -> None:
    got = launch_args(split(ONE + RUN), lambda w: w == "train.py")
    assert got is not None and got.args[1].opaque is not None      # FP8=0 or -f's value


def test_a_case_never_closed_on_one_line_is_still_refused() -> None:
    assert split('while getopts "f" o; do case $o in f) X=1;; done\n').unclosed is not None
