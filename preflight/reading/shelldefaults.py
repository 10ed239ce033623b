"""A script whose positional parameters all carry defaults, read as run without arguments.

A recipe the user runs by hand often takes optional arguments with the script's own defaults:
``RUN_NAME=${1:-"gsm8k-PPO-..."}``, ``CAP=${2:-"-1"}`` then ``actor.imp_ratio_cap=${CAP}``
(yaof20/verl 928d71a5 recipe/flash_rl/gsm8k_qwen0_5B_fp8.sh, holdout19). Nothing in the job
gives it arguments, so ``$2`` was Unknown and the FlashRL rollout's importance-sampling cap with
it. A careful engineer reads the script as its author ships it: run without arguments, each
``${N:-default}`` / ``${N-default}`` is its default, and says so. :func:`defaults_only` finds
those scripts; :mod:`preflight.jobs.scriptargs` binds them to no arguments (so
:mod:`.shellargs` gives each its default) and adds the FP8D-CFG-RUNTIME-ARGS note naming the
assumption, which :mod:`preflight.jobs.walk` drops where a script of the job runs it (then its
caller's words are bound instead).

Only where every use of a positional parameter is one with a default: a bare ``$1``, ``"$@"``,
``$*``, ``$#``, ``${@:2}``, ``shift`` or ``set --`` means the arguments are part of how the
script is run, and they stay unknown as before; so do scripts with functions (whose ``$1`` are
their own) and ones that source others with words (``source env.sh a``). Comments are not
uses (:func:`.shellvars.strip_comments`); a single-quoted ``'$1'`` (an awk program's) is counted
as one, which only keeps the script's parameters unknown (quotes inside double quotes are
literal, so no quoting is guessed at).
"""

from __future__ import annotations

import re

from preflight.reading.shellvars import strip_comments

MAX_TEXT = 1024 * 1024
"""Characters of script looked at (a job file is at most 1 MiB: reading/parse.py)."""

_DEFAULTED = re.compile(r"\$\{([1-9][0-9]{0,3}):?-")
"""``${N:-`` / ``${N-``: a positional parameter with a default."""
_ANY = re.compile(r"\$(?:[1-9@*#]|\{(?:[0-9@*#]|![@*]))")
"""Any positional parameter use (``$1``, ``${12}``, ``"$@"``, ``$#``, ``${#}``, ``${@:2}``)."""
_MOVES = re.compile(r"(?m)(?:^|[;&|({]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:shift\b|set[ \t]+"
                    r"(?:--|[^-+\s])|[\w.:-]+[ \t]*\(\)|function[ \t]|(?:source|\.)[ \t]+"
                    r"[^\s;&|]+[ \t]+[^\s;&|#])")


def defaults_only(text: str) -> list[str] | None:
    """The positional parameters ``text`` uses (``$2``, ...), when every use carries a default
    and nothing moves or shadows them (module docstring); None otherwise, or when it uses none."""
    if len(text) > MAX_TEXT:
        return None
    body = strip_comments(text)
    if _MOVES.search(body):
        return None
    uses = list(_ANY.finditer(body))
    if not uses:
        return None
    names: list[str] = []
    for m in uses:
        d = _DEFAULTED.match(body, m.start())
        if d is None:
            return None
        if f"${d.group(1)}" not in names:
            names.append(f"${d.group(1)}")
    return names
