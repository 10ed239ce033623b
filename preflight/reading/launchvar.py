"""Launch lines whose launcher a variable holds: ``CMD=(torchrun --nproc_per_node=8)`` then
``${CMD[@]} src/train.py``, ``"${LAUNCHER[@]}" python x.py``, ``RUNNER="torchrun ..."`` then
``$RUNNER x.py``. The text finders (:func:`.launch.python_scripts`) look for a launcher word in
the text, so these ran no script at all: the job was unread (holdout24 mlperf51, AMD's MLPerf
Training v5.1 llama2_70b_lora run_and_time.sh @ 441d65f: ``declare -a CMD; CMD=( 'torchrun'
'--nproc_per_node=8' ); ${CMD[@]} src/train.py``).

Here the statements are walked with the shell kit's evaluator (:func:`.shellexpand.launches`:
branches decided, commands bash never runs dropped), and a command whose first word is an
expansion and whose expanded words start with a launcher (:data:`.launch.LAUNCHER`, the same
words the text finder takes) runs the first ``.py`` after it. A launcher not known here (the
variable comes from the environment, a ``$(...)``) runs nothing known: not guessed at.
"""

from __future__ import annotations

from preflight.reading.launch import LAUNCHER, MAX_SCRIPTS
from preflight.reading.shellexpand import TooLarge, launches
from preflight.reading.shellvars import runtime
from preflight.reading.shellwords import split


def python_scripts(text: str, outer: dict[str, str] | None = None
                   ) -> list[tuple[str, tuple[str, ...], int]]:
    """``(script, its arguments, offset of the script's word)`` for each ``.py`` a launcher
    held in a variable runs (as :func:`.launch.python_scripts` gives them); ``outer``: the
    variables the script starts with (what it sources, what its caller gives)."""
    words = split(text)
    if words.truncated_at is not None:
        return []
    try:
        found = launches(words, lambda w: w.endswith(".py"), outer, limit=4 * MAX_SCRIPTS)
    except TooLarge:
        return []
    heads = {st.offset: st.words[0] for st in words.statements if st.words}
    out: list[tuple[str, tuple[str, ...], int]] = []
    for lr in found:
        head = heads.get(lr.offset)
        if head is None or not any(p.var for p in head) or not lr.before or \
                any(a.opaque for a in (*lr.before, lr.entry)):
            continue          # a literal command word: the text finder's; a run-time one
        runs = " ".join(a.text for a in lr.before)
        m = LAUNCHER.match(runs)
        if m is None or m.start() != 0:
            continue
        argv = tuple(runtime(a.opaque) if a.opaque else a.text for a in lr.args)
        out.append((lr.entry.text, argv, lr.entry.offset))
        if len(out) >= MAX_SCRIPTS:
            break
    return out
