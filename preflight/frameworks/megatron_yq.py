"""Megatron flags a launch script takes from a YAML file through ``yq`` (issue 22: reading the job
as it is written).

The Megatron MoE model zoo (yanring/Megatron-MoE-ModelZoo @ 1ed4179f72e4873bc246501a976ed21628e99582
``sbatch_benchmarking.sh:35-38``) builds its training flags from the model YAML's ``MODEL_ARGS``::

    TRAINING_PARAMS_FROM_CONFIG=$(yq '... comments="" | .MODEL_ARGS | to_entries | .[] |
        select(.value != "false") | with(select(.value == "true"); .value = "") |
        [.key + " " + .value] | join("")' ${TRAINING_PARAMS_PATH} | tr '\\n' ' ')

after ``envsubst < ${TRAINING_PARAMS_PATH} > ${TRAINING_PARAMS_PATH}.tmp`` (:28). Until session
42 the walk (:mod:`.megatron_walk`) left that ``$(...)`` as a run-time value, so holdout21's
``--use-distributed-optimizer: true`` never reached the facts and FP8D-MEG-0001 fired.

Here a ``$(yq 'EXPR' FILE [| tr '\\n' ' '])`` word of a training launch is evaluated when FILE is a
YAML inside the job and EXPR is a pipeline of the plain forms of mikefarah/yq v4 (its operator
docs at v4.44.1: https://github.com/mikefarah/yq/tree/v4.44.1/pkg/yqlib/doc/operators):
``.a.b`` / ``."--x"`` paths, ``.[]``, ``to_entries``, ``select(P == / != V)``,
``with(select(P == V); P = V)``, ``[A + " " + B]``, ``join("s")`` and ``... comments=""``. yq
compares and joins scalars by their text (``true == "true"``). Anything else -- another
operator, a value with ``${VAR}`` ``envsubst`` fills from the run's environment, a file outside
the job -- leaves the word a run-time value with the reason (the walk's cut, FP8 never "no").
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from preflight.reading.parse import ParseError, parse_yaml, read_text
from preflight.reading.refs import locate
from preflight.reading.shellexpand import Launch
from preflight.reading.shelltypes import Arg

MAX_COMMAND = 4096
"""Characters of one ``$(yq ...)`` looked at (a real one: a few hundred)."""
MAX_ITEMS = 4096
"""Values one evaluation may produce (a model YAML has about 100 flags)."""
MAX_STAGES = 32
"""Pipeline stages of one expression."""

_PATH = re.compile(r'(?:\.(?:[A-Za-z_][\w-]*|"[^"\\]*"))+')
_STEP = re.compile(r'\.([A-Za-z_][\w-]*|"[^"\\]*")')
_LIT = r'(?:"[^"\\]*"|true|false|null|-?\d+(?:\.\d+)?)'
_SELECT = re.compile(rf"select\(\s*({_PATH.pattern})\s*(==|!=)\s*({_LIT})\s*\)")
_WITH = re.compile(rf"with\(\s*select\(\s*({_PATH.pattern})\s*(==|!=)\s*({_LIT})\s*\)\s*;\s*"
                   rf"({_PATH.pattern})\s*=\s*({_LIT})\s*\)")
_COLLECT = re.compile(rf"\[\s*((?:{_PATH.pattern}|{_LIT})(?:\s*\+\s*(?:{_PATH.pattern}|{_LIT}))*)"
                      r"\s*\]")
_JOIN = re.compile(r'join\(\s*("[^"\\]*")\s*\)')
_COMMENTS = re.compile(r'\.\.\.\s+comments\s*=\s*""')
_VAR = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")


class Unsupported(Exception):
    """An expression, command or file this module does not read; the message says why."""


def expanded(path: str, text: str, lr: Launch) -> Launch:
    """``lr`` with each ``$(yq ...)`` argument replaced by the words its output gives, where it
    can be read here; one that cannot keeps its run-time reason, with why."""
    if not any(a.opaque and "$(yq" in a.opaque for a in lr.args):
        return lr
    env = dict(lr.env)
    args: list[Arg] = []
    for arg in lr.args:
        if not (arg.opaque and "$(yq" in arg.opaque):
            args.append(arg)
            continue
        try:
            late, words = _words(path, text, arg.offset, env)
        except Unsupported as why:
            args.append(replace(arg, opaque=f"{arg.opaque}; yq not read here: {why}"))
            continue
        args.extend(Arg(w, arg.offset, opaque=late if late and "$" in w else None,
                        conditional=arg.conditional) for w in words)
    return replace(lr, args=tuple(args))


def _words(path: str, text: str, offset: int, env: dict[str, str]) -> tuple[str, list[str]]:
    """The words the ``$(yq ...)`` written at ``offset`` of ``text`` gives (unquoted: bash splits
    its output on blanks), and why a word with ``$`` in it is a run-time value ('' when the
    file is read as it is: yq prints ``$`` as text)."""
    command = _command(text, offset)
    stages = _pipeline(command)
    head, rest = stages[0], stages[1:]
    if any(re.sub(r"\s+", " ", s.strip()) not in (r"tr '\n' ' '", r'tr "\n" " "') for s in rest):
        raise Unsupported(f"its output goes through {rest[0].strip()[:60]!r}")
    words = _shell_words(head)
    if words[:1] != ["yq"]:
        raise Unsupported("not a plain yq command")
    words = words[1:]
    if words[:1] in (["e"], ["eval"]):
        words = words[1:]
    if len(words) != 2 or words[0].startswith("-"):
        raise Unsupported("yq options or more than one expression and file")
    found, subst = _file(words[1], env, path, text)
    out = _evaluate(words[0], [_load(found)])
    lines: list[str] = []
    for value in out:
        if isinstance(value, (dict, list)):
            raise Unsupported("the expression gives a map or a list, not text")
        lines.append(_text(value))
    late = f"envsubst fills {words[1]}'s ${{VAR}} values from the run's environment" if subst \
        else ""
    return late, " ".join(lines).split()


def _command(text: str, offset: int) -> str:
    """The text inside ``$( ... )`` starting at ``offset`` (quotes respected)."""
    if not text.startswith("$(", offset):
        raise Unsupported("the substitution is not written where the launch says")
    depth, n, quote = 1, offset + 2, ""
    end = min(len(text), offset + MAX_COMMAND)
    while n < end:
        c = text[n]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                n += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[offset + 2:n]
        n += 1
    raise Unsupported(f"the substitution is longer than {MAX_COMMAND} characters or not closed")


def _split_top(expr: str, sep: str) -> list[str]:
    """``expr`` split at ``sep`` outside quotes and brackets."""
    parts, depth, quote, start = [], 0, "", 0
    for n, c in enumerate(expr):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(expr[start:n])
            start = n + 1
    parts.append(expr[start:])
    return parts


def _pipeline(command: str) -> list[str]:
    return _split_top(command.replace("\\\n", " "), "|")


def _shell_words(command: str) -> list[str]:
    import shlex

    try:
        return shlex.split(command, posix=True)
    except ValueError as exc:
        raise Unsupported(f"the yq command does not split: {exc}") from None


def _file(word: str, env: dict[str, str], path: str, text: str) -> tuple[str, bool]:
    """The YAML file ``word`` names (its variables from the launch's), and whether ``envsubst``
    wrote it (then the file read is its source)."""
    def put(m: re.Match[str]) -> str:
        value = env.get(m.group(1))
        if value is None or "\x01" in value or "$" in value:
            raise Unsupported(f"${m.group(1)} in its file name is not known here")
        return value
    name = _VAR.sub(put, word)
    subst = False
    # sbatch_benchmarking.sh:27-28: `envsubst < X > X.tmp; TRAINING_PARAMS_PATH=X.tmp`
    if name.endswith(".tmp") and re.search(r"(?m)^\s*envsubst\s*<", text):
        name, subst = name[:-4], True
    found = locate(name, path)
    if found is None:
        raise Unsupported(f"no file {name[-120:]!r} inside the job")
    return found, subst


_MERGE = re.compile(r"(?:^|[\s{,\[-])<<[ \t]*:")
_TAGGED = re.compile(r"(?:^|[\s:,\[{-])!!?[A-Za-z]")


def _load(found: str) -> Any:
    try:
        text = read_text(found)
        data = parse_yaml(text).data
    except ParseError as exc:
        raise Unsupported(f"{found}: {exc.message}") from None
    # a merge key (`<<: *base`): the YAML loader here merges it, yq keeps `<<` as a key unless
    # `explode(.)` (and its merge handling changed in v4.46: mikefarah/yq#766, #2502); a tag
    # (`!!binary`): yq prints the text as written, the loader its value (redteam16)
    if _MERGE.search(text) or _TAGGED.search(text):
        raise Unsupported(f"{os.path.basename(found)} has a YAML merge key or tag, which yq "
                          "reads otherwise than the loader here")
    return data


def _text(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _literal(token: str) -> str:
    return token[1:-1] if token.startswith('"') else token


def _get(value: Any, path: str) -> Any:
    for step in _STEP.findall(path):
        key = _literal(step)
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _set(value: Any, path: str, new: str) -> Any:
    steps = [_literal(s) for s in _STEP.findall(path)]
    if not isinstance(value, dict) or len(steps) != 1:
        raise Unsupported("an assignment deeper than one key")
    return {**value, steps[0]: new}


def _compare(value: Any, op: str, token: str) -> bool:
    same = _text(value) == _literal(token)
    return same if op == "==" else not same


def _evaluate(expr: str, stream: list[Any]) -> list[Any]:
    stages = _split_top(expr, "|")
    if len(stages) > MAX_STAGES:
        raise Unsupported(f"more than {MAX_STAGES} stages")
    for stage in stages:
        stream = [v for value in stream for v in _stage(stage.strip(), value)]
        if len(stream) > MAX_ITEMS:
            raise Unsupported(f"more than {MAX_ITEMS} values")
    return stream


def _stage(stage: str, value: Any) -> list[Any]:
    """One stage of a pipeline on one value (the forms the module docstring names)."""
    if stage == "." or _COMMENTS.fullmatch(stage):
        return [value]
    if stage in (".[]", "[]"):
        return list(value.values()) if isinstance(value, dict) else \
            list(value) if isinstance(value, list) else []
    if stage == "to_entries":
        if not isinstance(value, dict):
            raise Unsupported("to_entries of a value that is no map")
        return [[{"key": k, "value": v} for k, v in value.items()]]
    if _PATH.fullmatch(stage):
        return [_get(value, stage)]
    if stage.endswith("[]") and _PATH.fullmatch(stage[:-2]):
        return _stage(".[]", _get(value, stage[:-2]))
    m = _SELECT.fullmatch(stage)
    if m:
        return [value] if _compare(_get(value, m.group(1)), m.group(2), m.group(3)) else []
    m = _WITH.fullmatch(stage)
    if m:
        if _compare(_get(value, m.group(1)), m.group(2), m.group(3)):
            return [_set(value, m.group(4), _literal(m.group(5)))]
        return [value]
    m = _COLLECT.fullmatch(stage)
    if m:
        terms = [t.strip() for t in _split_top(m.group(1), "+")]
        got = [_get(value, t) if t.startswith(".") else _literal(t) for t in terms]
        if any(isinstance(g, (dict, list)) for g in got):
            raise Unsupported("+ of a map or a list")
        return [["".join(_text(g) for g in got)]]
    m = _JOIN.fullmatch(stage)
    if m and isinstance(value, list):
        return [_literal(m.group(1)).join(_text(v) for v in value)]
    raise Unsupported(f"the yq operator {stage[:60]!r} is not read here")
