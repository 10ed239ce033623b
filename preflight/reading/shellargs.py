"""A script's positional parameters, when a script of the job runs it with arguments: ``bash
recipe.sh actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=8``, whose launch
line ends in ``"$@"``. Nothing is run.

Why: real jobs are a short ``run.sh`` calling a long recipe with overrides (verl
examples/grpo_trainer/run_qwen3_5_27b_fsdp.sh:157 @ 1dda039 passes ``"$@"`` on to
``verl.trainer.main_ppo``; Megatron-Bridge, SkyRL and NeMo-RL scripts do the same). Read alone,
the recipe dropped the caller's words: holdout11's verl job lost its FP8 rollout (FP8D-RL-0001).

How: :mod:`.shellcalls` keeps each calling command's words (:class:`Given`: the text, the
``file:line`` it is written at, why its value is not known there) and the caller passes them
in the variables it gives the script (:data:`ARGV`). :func:`.shellbind.bind` appends a comment
block to the called script's text, one line per word (comments: no reader takes them for
commands), and hands the evaluator (:class:`Params`) where each word sits (:data:`PARAMS`);
every line read in that block is the caller's ``file:line`` (:attr:`.shellbind.Bound.origin`),
so a setting is reported where the user writes it.

Semantics, as bash gives them (tests run bash on ``set --`` / ``printf`` fixtures): ``"$@"``
one word per argument, ``$@`` / ``$*`` unquoted each split again, ``"$*"`` one word joined by
blanks, ``$1`` .. ``$9`` / ``${12}`` / ``${1:-default}`` (an unset or empty one takes the
default), ``${@:2}`` / ``${@:2:3}``, ``$#``, ``shift`` / ``shift N`` (past ``$#``: nothing
moves, bash's ``shift count out of range``), ``set -- a b``. A function's ``$1`` is its own
(unknown here); ``bash -c STR a b`` gives STR others (unknown), ``eval`` the script's. A script
nobody in the job runs keeps its parameters unknown (``"$@"`` adds nothing, ``$1`` is opaque
with the reason: no argument is invented); one run twice with different arguments, or with an
unquoted run-time value that bash may split into any number of words, has those positions
unknown with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from preflight.reading.shelltypes import Field, Part, Seg, Split, Statement

ARGV = "@argv"
"""Key of the variables a caller passes (``Linked.variables``) holding the calling command's
words after the script (:func:`encode`); no shell variable can have this name."""

ENVIRON = "@environ"
"""Key of the variables a caller passes that names (comma-separated) those of them that are the
called script's environment, so what it runs inherits them (``env.*`` facts; re-exported by
:mod:`.shellcalls`)."""

PARAMS = "@params"
"""Key of the variables the evaluator starts with, set by :func:`bind`: each word, where it
sits in the bound text."""

MAX_WORDS = 20_000
"""Arguments bound (``shellexpand.MAX_ARGS``); past it the rest are unknown."""

MAX_CHARS = 2 * 1024 * 1024
"""Characters of arguments bound (10^5 words of a few characters fit)."""


@dataclass(frozen=True)
class Given:
    """One argument a caller passes: its text, where it is written, why not known (if so);
    ``loose``: an unquoted run-time value, which bash splits into any number of words."""

    text: str
    where: str
    opaque: str | None = None
    loose: bool = False


def encode(words: Sequence[Given]) -> str:
    """The :data:`ARGV` value of a calling command's words (past :data:`MAX_WORDS`: unknown,
    so what the last ones set is never taken as not set)."""
    if len(words) > MAX_WORDS:
        return unknown(f"the command that runs it passes more than {MAX_WORDS:,} arguments "
                       f"({str(words[0].where)[:200]})")
    return json.dumps([[w.text, str(w.where), w.opaque, w.loose] for w in words])


def unknown(why: str) -> str:
    """The :data:`ARGV` value of a script whose arguments are not known (run twice with
    different ones, or run with more than :data:`MAX_WORDS`)."""
    return json.dumps({"unknown": why})


def moved(opaque: str) -> bool:
    """Whether a ``"$@"`` is opaque because a ``shift`` / ``set`` the text does not decide
    moved words a caller gave (:meth:`Params.builtin`): they are passed on, unknown (redteam8:
    dropped like a script's own unknown arguments, a caller's ``--fp8`` after
    ``[ -n "$X" ] && shift`` was read as FP8 "no")."""
    return opaque.startswith(("a `shift", "a `set`"))


MAX_CALLS = 4
"""Commands that run one script with different arguments read apart (each a read of it)."""


def differing(old: str | None, new: str, first: str, second: str) -> str:
    """The :data:`ARGV` of a script two commands run (``bash s.sh a``, ``bash s.sh b``):
    ``old`` when both give the same words, else both sets (:func:`calls`), each read apart
    (a setting they give differently is Unknown naming both lines: ``launchpick.differ``)."""
    if old is None or old == new:
        return new if old is None else old
    runs = calls(old) or [(old, first)]
    if not calls(old) and isinstance(decode(old), str):
        return old                       # already unknown: stays so
    words = [_texts(v) for v, _ in runs]
    if _texts(new) in words:
        return old
    if len(runs) >= MAX_CALLS:
        return unknown(f"it is run with different arguments more than {MAX_CALLS} times "
                       f"({first or 'one command'}, {second} ...); which run is the job is "
                       "not known here")
    return json.dumps({"calls": [[v, w] for v, w in [*runs, (new, second)]]})


def calls(value: str | None) -> list[tuple[str, str]]:
    """Each (ARGV, file:line) of a script run with different arguments ([]: run once)."""
    try:
        got = json.loads(value or "null")
    except ValueError:
        return []
    if not isinstance(got, dict) or not isinstance(got.get("calls"), list):
        return []
    return [(str(v), str(w)) for v, w in got["calls"][:MAX_CALLS]]


def _texts(value: str) -> object:
    got = decode(value)
    words = [(w.text, w.opaque) for w in got] if isinstance(got, list) else got
    return words, sorted((run_env({}, value).get(ENVIRON) or "").split(","))


def with_env(given: dict[str, Any]) -> str | None:
    """The :data:`ARGV` of one call of a script with the environment that call gives it
    (:data:`ENVIRON`): ``bash s.sh`` and ``PR=fp8 bash s.sh`` are two runs, read apart, since
    the prefix decides the callee's branches (holdout21: the ModelZoo wrapper's ``if [[ ${PR}
    == fp8 ]]`` read with the first call's environment for all three)."""
    argv = given.get(ARGV)
    names = [n for n in str(given.get(ENVIRON) or "").split(",") if n]
    if argv is None or not names or calls(argv) or isinstance(decode(argv), str):
        return argv
    return json.dumps({"argv": argv, "env": {n: str(given.get(n, "")) for n in names}})


def _one_run(value: str | None) -> dict[str, Any] | None:
    """The run :func:`with_env` wrote (``{"argv": ..., "env": {...}}``), else None."""
    try:
        got = json.loads(value or "null")
    except ValueError:
        return None
    return got if isinstance(got, dict) and "argv" in got else None


def plain(value: str) -> str:
    """``value`` without the environment :func:`with_env` put with it (one run's words)."""
    got = _one_run(value)
    return str(got["argv"]) if got is not None else value


def run_env(inherited: dict[str, Any], value: str) -> dict[str, Any]:
    """``inherited`` as the run ``value`` (:func:`with_env`) starts: its environment in place
    of the last caller's, its words as :data:`ARGV`."""
    got = _one_run(value)
    out = {k: v for k, v in inherited.items()
           if k not in str(inherited.get(ENVIRON) or "").split(",")}
    if got is None or not isinstance(got.get("env"), dict):
        # a run given no environment (`bash s.sh` beside `PR=fp8 bash s.sh`): not another
        # call's (shell17: the plain run read PR=fp8 and asked FP8)
        return {**{k: v for k, v in out.items() if k != ENVIRON}, ARGV: value}
    env = {str(k): str(v) for k, v in got["env"].items()}
    return {**out, **env, ENVIRON: ",".join(env), ARGV: str(got["argv"])}


def decode(value: str | None) -> list[Given] | str | None:
    """The words a caller gives (a list), why they are not known (a str), or None (no caller
    in the job gives any: the script is run by hand)."""
    if not value:
        return None
    try:
        got = json.loads(value)
    except ValueError:
        return "the arguments its caller gives could not be read"
    if isinstance(got, dict) and "argv" in got:      # one run with its environment (with_env)
        return decode(str(got["argv"])) if got["argv"] is not None else None
    if isinstance(got, dict):
        return str(got.get("unknown", "it is run with several sets of arguments"))
    out: list[Given] = []
    chars = 0
    for item in got if isinstance(got, list) else []:
        text, where, opaque, loose = (list(item) + [None] * 4)[:4] if isinstance(
            item, list) else (None,) * 4
        chars += len(str(text))
        if chars > MAX_CHARS:
            return f"the calling command passes more than {MAX_CHARS:,} characters of arguments"
        out.append(Given(str(text), str(where), None if opaque is None else str(opaque),
                         bool(loose)))
    return out


class Params:
    """The positional parameters while a script is walked (:class:`.shellexpand.Eval`)."""

    def __init__(self, words: list[Field] | None, why: str | None = None,
                 at: dict[int, str] | None = None) -> None:
        self.words = words      # None: not known here
        self.why = why          # why (None: no caller in the job gives any; the part says why)
        self.at = at or {}      # offset of a bound word -> the caller's file:line

    @classmethod
    def of(cls, outer: dict[str, str]) -> Params:
        value = outer.get(PARAMS)
        if not value:
            return cls(None)
        try:
            got = json.loads(value)
        except ValueError:
            got = {"unknown": "its arguments could not be read"}
        if isinstance(got, dict):
            return cls(None, str(got.get("unknown")))
        return cls([[Seg(str(t), int(at), (), o, bool(loose))] for t, at, o, loose, _ in got],
                   at={int(at): str(where) for _, at, _, _, where in got})

    def fuzzy(self) -> int | None:
        """The first argument bash may split into any number of words (positions after it
        are not known)."""
        assert self.words is not None
        return next((n for n, f in enumerate(self.words) if any(s.loose for s in f)), None)

    def expand(self, part: Part, branch: tuple[int, ...], inside: bool,
               at: Callable[[int], int], default: Callable[[], list[Field]] | None = None
               ) -> list[Field] | None:
        """What ``part`` (``$1``, ``"$@"``, ``$#`` ...) holds, as a variable's fields; None: keep
        it opaque with its own reason (no caller gives the script arguments). ``default``: its
        default's fields, where that holds references (``${1:-${ROOT}/x}``)."""
        def opaque(why: str) -> list[Field]:
            return [[Seg(part.text, at(part.offset), branch, why, not part.quoted)]]
        if inside:
            return opaque(f"{part.text} is an argument of the function it is used in")
        if self.words is None:
            return opaque(self.why) if self.why else None
        name = part.param or ""
        fuzzy = self.fuzzy()
        loose = ("argument {} of the calling command is a run-time value that bash may split "
                 "into any number of words").format((fuzzy or 0) + 1)
        if name == "#":
            return opaque(loose) if fuzzy is not None else \
                [[Seg(str(len(self.words)), at(part.offset), branch)]]
        if name in "@*":
            words = self.words
            if part.span is not None:
                start, length = part.span
                if start == 0:      # `${@:0:1}`: $0 first (redteam8: read as nothing)
                    zero = [Seg("$0", at(part.offset), branch, f"{part.text} with offset 0 "
                                "begins with the script's name ($0)", not part.quoted)]
                    if length == 0:
                        return []
                    rest = self.expand(replace(part, span=(1, None if length is None else
                                                           length - 1)), branch, inside, at)
                    return [zero, *(rest or [])] if length != 1 else [zero]
                if fuzzy is not None and (fuzzy < start - 1 or (
                        length is not None and fuzzy < start - 1 + length)):
                    return opaque(loose)
                words = words[start - 1:None if length is None else start - 1 + length]
            return [list(f) for f in words]
        n = int(name) - 1
        if fuzzy is not None and n >= fuzzy:
            return opaque(loose)
        value = [list(self.words[n])] if n < len(self.words) else None
        if part.default is not None and (value is None or not part.unset_only and not any(
                s.text or s.opaque for f in value for s in f)):     # `${3-d}` of '' is ''
            return default() if default is not None else \
                [[Seg(part.default, at(part.offset), branch)]]
        # unset: "$3" is one empty word, $3 none (word splitting drops it)
        return value if value is not None else [[Seg("", at(part.offset), branch)]]

    def builtin(self, texts: list[str], fields: list[Field], sure: bool, inside: bool,
                loop: str | None = None) -> bool:
        """``shift [N]`` / ``set [options] -- ARGS``: the parameters after it (True: it was
        one). ``sure``: the statement runs (not in a branch that may not); ``inside``: in a
        function (its own parameters change, not the script's); ``loop``: where it runs any
        number of times, or in a subshell (redteam8: ``while [ $# -gt 0 ]; do shift; done``
        was one shift, ``(shift)`` shifted the script's own)."""
        if not texts or texts[0] not in ("shift", "set"):
            return False
        if texts[0] == "set":
            k = 1
            while k < len(texts) and texts[k][:1] in "-+" and texts[k] not in ("--", "-"):
                k += 2 if "o" in texts[k][1:] else 1     # `-euo pipefail`: o takes a name
            if k >= len(texts):
                return True               # options only: the parameters stay
            new: list[Field] | None = [list(f) for f in fields[k + (texts[k] in ("--", "-")):]]
            what = "a `set` that gives the script new arguments"
        else:
            count = texts[1] if len(texts) > 1 else "1"
            new = None
            if self.words is not None and re.fullmatch(r"\d{1,9}", count) and (
                    any(s.opaque for f in fields[1:2] for s in f) is False):
                n = int(count)
                fuzzy = self.fuzzy()
                if n <= len(self.words) and (fuzzy is None or n <= fuzzy):
                    new = self.words[n:]
                elif n > len(self.words) and fuzzy is None:
                    new = self.words      # bash: "shift count out of range", nothing moves
            what = f"a `shift {count[:12]}`"
        if inside:
            return True
        if not sure or loop:
            self.words, self.why = None, f"{what} may or may not run (an if/case branch)" \
                if not loop else f"{what} {loop}, so the arguments after it are not known here"
        elif new is None:
            if self.words is not None or self.why is not None:
                self.words, self.why = None, f"{what} moves the arguments by a count not known here"
        else:
            self.words, self.why = new, None
        return True



def function_params(split: Split, ev: Any) -> dict[int, Params]:
    """What the script's calls of its functions give each (by its index in
    ``split.functions``): ``main "$@"`` at the end of a script, ``run a.b=c`` (a function's
    ``$1`` is its caller's word). Calls from inside a function are not followed; a function
    called with different words, or in a branch that may not run, has them unknown; one never
    called keeps them unknown (``ev``: a fresh :class:`.shellexpand.Eval` to walk with)."""
    names = {name: n for n, name in enumerate(split.names)}
    found: dict[int, list[tuple[list[Field], bool]]] = {}
    ev.functions = split.functions
    for st in split.statements:
        if any(ev.runs.get(b) is False for b in st.branch) or any(
                a <= st.offset < b for a, b in split.functions):
            continue
        if st.test is not None:
            ev.decide(st)
            continue
        if st.assign is not None:
            ev.assign(st)
            continue
        fields = ev.command(st)
        first = "".join(s.text for s in fields[0]) if fields else ""
        if first in names and len(found) < 64:
            found.setdefault(names[first], []).append(
                (fields[1:], all(ev.runs.get(b) is True for b in st.branch)))
        elif fields:
            ev.positional(st, fields)
    out: dict[int, Params] = {}
    for n, calls in found.items():
        words = {tuple(tuple((s.text, s.opaque) for s in f) for f in got) for got, _ in calls}
        if len(words) == 1 and all(sure for _, sure in calls):
            out[n] = Params([list(f) for f in calls[0][0]], at=ev.params.at)
        else:
            out[n] = Params(None, f"the function {split.names[n][:40]} is called with different "
                                  "arguments, or in a branch that may not run")
    return out


class Positional:
    """What :class:`.shellexpand.Eval` does with positional parameters while it walks."""

    params: Params
    outer: dict[str, str]
    runs: dict[int, bool | None]
    remap: Callable[[int], int]
    functions: list[tuple[int, int]] = []   # the walked text's function bodies
    bodies: dict[int, Params] = {}          # and the arguments the script's calls give them

    def positional(self, st: Statement, fields: list[Field]) -> bool:
        """``shift`` / ``set -- ARGS``: the positional parameters after it (True: it was)."""
        if not fields or "".join(s.text for s in fields[0]) not in ("shift", "set"):
            return False
        params = self.params_at(st.offset)
        return (params or self.params).builtin(
            ["".join(s.text for s in f) for f in fields], fields,
            all(self.runs.get(b) is True for b in st.branch), params is None,
            "runs in a loop" if st.loop else "runs in a subshell" if st.subshell else None)

    def prepare(self, split: Split) -> None:
        """Walk ``split``: its function bodies, and what the script's calls give them."""
        self.functions = split.functions
        fresh: Any = type(self)
        self.bodies = function_params(split, fresh(self.outer, self.remap)) \
            if split.functions and split.names else {}

    def params_at(self, offset: int) -> Params | None:
        """The positional parameters at ``offset``: the script's, or a function's that its
        calls give (None: a function's, not known here)."""
        for n, (a, b) in enumerate(self.functions):
            if a <= offset < b:
                return self.bodies.get(n)
        return self.params
