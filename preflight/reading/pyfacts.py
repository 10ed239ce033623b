"""Facts from the calls of a Python job file (:mod:`.pysource`), as the config readers give them.

A framework's ``read_python`` picks the calls it knows and puts their arguments here under its
``config.<kind>.*`` names, with this file's lines, exactly as its YAML reader would (so the
existing rules apply unchanged: ``TrainingArguments(bf16=True)`` is ``config.hf_trainer.bf16``).
What the text does not give is an ``Unknown`` with the reason; two calls that disagree on a
setting make it ``Unknown`` too (which one runs is the script's control flow), and so does a
setting made under a condition the text does not decide (``if torch.cuda.is_available():``);
one in a branch the text shows does not run (the launch line's ``--precision bf16`` against
``if args.precision == "fp8":``) is not a setting at all.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.parse import MAX_FACTS_PER_FILE, usable_key
from preflight.reading.pyenviron import EnvStr
from preflight.reading.pyoutside import why as why_outside
from preflight.reading.pyownfp8 import FP8_CALL, reaches
from preflight.reading.pyscopes import Scope
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.pyvalues import MAX_STEPS
from preflight.reading.refs import named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput, cut_short

MAX_NESTING = 8
FP8_KEYWORD = re.compile(r"(?:^|_)(?:fp8|float8)(?:_(?:enabled?|training|train))?$",
                         re.IGNORECASE)
"""A keyword that switches FP8 (``fp8``, ``load_in_fp8``, ``use_fp8``, ``enable_float8``,
``fp8_enabled`` as TE's ``make_graphed_callables`` and job models spell it, ``enable_fp8_training``
as torchtune does (redteam6); not an option of FP8 such as ``fp8_recipe`` or
``enable_fsdp_float8_all_gather``, which says nothing of whether FP8 runs): set on a call this
reader did not read, it may switch FP8 on where the reader sees "no FP8 setting" (holdout10:
unsloth's ``FastLanguageModel.from_pretrained(load_in_fp8=True)`` beside TRL's ``GRPOConfig``
was read as FP8 "no")."""


def plain(value: Any, depth: int = 0) -> Any:
    """A value as a fact holds it: literals as they are, an imported name as its dotted name
    (``torch.bfloat16``; a constant of a module outside the job is Unknown, :mod:`.pyoutside`),
    what the text does not give as ``Unknown`` with the reason."""
    if isinstance(value, Unresolved):
        return Unknown(value.reason)
    if isinstance(value, Ref):      # a constant of a module outside the job: pyoutside
        outside = why_outside(value)
        return value.name if outside is None else Unknown(outside)
    if isinstance(value, Call):
        return Unknown(f"a {value.name or 'computed'}() object built when the script runs")
    if isinstance(value, (list, frozenset)):    # a set (reading/pybuiltins.py) as a list
        items = [plain(v, depth + 1) for v in (sorted(value, key=repr)
                                                if isinstance(value, frozenset) else value)]
        bad = next((v for v in items if isinstance(v, Unknown)), None)
        return bad if bad is not None else items
    if isinstance(value, dict):
        return Unknown("a mapping")     # flattened by put_all; here only when too deep
    return value


class PyOut:
    """What one Python file gives: facts with their ``file:line``, problems, files it names."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.facts: dict[str, Any] = {}
        self.prov: dict[str, Source] = {}
        self.problems: list[ConfigProblem] = []
        self.linked: list[Linked] = []
        self._when: Unresolved | None = None

    def calls(self) -> Iterator[tuple[Call, Scope]]:
        """The file's calls (:meth:`.pysource.Module.calls`); what is put while a call made under
        a condition the text does not decide is looked at is Unknown with that condition."""
        try:
            for call, scope in self.module.calls():
                self._when = call.when
                yield call, scope
        finally:
            self._when = None

    @contextmanager
    def made(self, call: Call) -> Iterator[None]:
        """Put facts from ``call`` (taken from :meth:`calls` earlier) as :meth:`calls` would:
        Unknown with its condition when it is made under one the text does not decide."""
        self._when = call.when
        try:
            yield
        finally:
            self._when = None

    def where(self, line: int | None, path: str | None = None) -> Source:
        return Source(path or self.module.path, line)

    def put(self, name: str, value: Any, line: int | None, path: str | None = None) -> None:
        """One fact; a second, different value for it makes it Unknown with both lines (and so
        does a value put from a call made under a condition the text does not decide)."""
        value = plain(value if self._when is None else self._when)
        where = value.where if isinstance(value, EnvStr) else self.where(line, path)
        value = str(value) if isinstance(value, EnvStr) else value
        if name in self.facts:
            old = self.facts[name]
            if old != value and not (isinstance(old, Unknown) and "set to" in old.reason):
                first = getattr(self.prov.get(name), "line", None)
                self.facts[name] = Unknown(
                    f"set to {_short(old)} at line {first} and to {_short(value)} at line "
                    f"{line}; which one runs depends on the script's control flow")
            return
        if len(self.facts) >= MAX_FACTS_PER_FILE:
            cut_short(self.facts, self.prov, name, self.where(line, path))
            return
        self.facts[name] = value
        self.prov[name] = where     # an environment variable's: the launch line, or its default

    def put_all(self, prefix: str, call: Call, watch: tuple[str, ...] = ()) -> None:
        """Every keyword of ``call`` under ``prefix`` (mappings flattened: ``fsdp_config={..}``
        -> ``prefix.fsdp_config.<key>``). With a ``**mapping`` the text does not give, each of
        ``watch`` not given is Unknown (it may be set there)."""
        for key, value in call.kwargs.items():
            if usable_key(key):
                self._put_tree(f"{prefix}.{key}", value, call.lines.get(key, call.line), 0)
        if call.star is not None:
            for key in watch:
                if key not in call.kwargs:
                    self.put(f"{prefix}.{key}", Unresolved(
                        f"{key} may be set by the **mapping passed at line "
                        f"{call.star.line or call.line}, which the text does not give"),
                        call.star.line or call.line)

    def _put_tree(self, name: str, value: Any, line: int, depth: int) -> None:
        if isinstance(value, dict) and depth < MAX_NESTING:
            for key, inner in value.items():
                if usable_key(key):
                    self._put_tree(f"{name}.{key}", inner, line, depth + 1)
            return
        self.put(name, value, line)

    def link(self, target: Any, kind: str, line: int | None, key: str) -> None:
        if isinstance(target, str) and "$" not in target and "{" not in target:
            self.linked.append(named(target, kind, self.module.path, self.where(line), key=key,
                                     line=line))

    def output(self) -> ReaderOutput:
        self._unread_fp8()
        spent = self.module._weights
        if spent.steps > MAX_STEPS:     # values past the bound were not read: "no FP8" is no answer
            self.problems.append(ConfigProblem(self.module.path, spent.cut_at or 1, (
                f"the file takes more than {MAX_STEPS:,} steps to follow: what comes after this "
                "line was not read"), level="warning", cut=True))
        return ReaderOutput(dict(self.facts), {k: v for k, v in self.prov.items()},
                            tuple(self.problems), tuple(self.linked))

    def _unread_fp8(self) -> None:
        """An FP8 keyword set on a call none of this file's facts came from makes
        ``config.<kind>.unread_args`` Unknown, so that intent says FP8 Unknown, never "no"
        (:data:`FP8_KEYWORD`); a reader that read it (a fact named after the keyword at its
        line) decides. A fact of another call on the same line is no reading of it (redteam6:
        ``m = from_pretrained(load_in_fp8=True); args = GRPOConfig(...)`` was FP8 "no")."""
        kinds = {n.split(".")[1] for n in self.facts if n.startswith("config.") and n.count(".") > 1}
        if len(kinds) != 1:
            return
        key = f"config.{kinds.pop()}.unread_args"
        read = {(getattr(src, "line", None), part) for n, src in self.prov.items()
                for part in n.split(".")[2:]}
        for word, line, func in self._fp8_words():
            if func.startswith("__main__.") and reaches(self.module.tree, func[9:]) is not None:
                continue    # the job's own FP8 layer: its gate is read (:mod:`.pyownfp8`)
            if (line, word) not in read and key not in self.facts:
                self.facts[key] = Unknown(
                    f"{word}= is passed to {func[:80]} at line {line}, which "
                    "fp8-doctor does not read: whether it runs the job in FP8 is not known")
                self.prov[key] = self.where(line)
                return
        # a call of a function named as an FP8 conversion that no reader read here: the job's
        # own module's (read with it, :mod:`.pyownfp8`) or a package's (issue 22: nanochat's
        # convert_to_float8_training is its own, not torchao's; not found: FP8 was "no")
        lines = {getattr(src, "line", None) for src in self.prov.values()
                 if getattr(src, "path", self.module.path) == self.module.path}
        for call, _scope in self.module.calls():
            if FP8_CALL.match(call.name or "") and not call.func.startswith("__main__.") and \
                    call.line not in lines and key not in self.facts:
                self.facts[key] = Unknown(
                    f"{call.func[:80]}() is called at line {call.line}: by its name it converts "
                    "the model to FP8, and fp8-doctor read no FP8 setting from it here")
                self.prov[key] = self.where(call.line)
                return

    def _fp8_words(self) -> Iterator[tuple[str, int | None, str]]:
        """(keyword, line, call) of every FP8 switch the file sets to a value that may be on:
        the keywords of its calls and what :func:`_set_in_text` finds."""
        for call, _scope in self.module.calls():
            for word, value in call.kwargs.items():
                if isinstance(word, str) and FP8_KEYWORD.search(word) and value not in _OFF:
                    yield word, call.lines.get(word, call.line), call.func
        yield from _set_in_text(self.module.tree)


def _set_in_text(tree: ast.AST) -> Iterator[tuple[str, int | None, str]]:
    """FP8 switches set where :meth:`Module.calls` does not look (redteam6): keywords of calls
    inside a lambda, and keys of a mapping later passed as ``**kw``: ``{"load_in_fp8": True}``
    (in ``kw.update({...})``, ``kw |= {...}``), ``kw["load_in_fp8"] = True`` (also annotated,
    augmented, in a tuple), ``kw.setdefault("load_in_fp8", True)``, ``setattr(c, "fp8", True)``.
    One pass, each node once (a walk of every lambda's body was quadratic: 2,000 nested lambdas
    took 5 s)."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_lambda = stack.pop()
        if isinstance(node, ast.Call):
            if in_lambda:
                for kw in node.keywords:
                    if kw.arg and FP8_KEYWORD.search(kw.arg) and not _off(kw.value):
                        yield kw.arg, kw.value.lineno, _name(node.func)
            func = node.func
            at = 1 if isinstance(func, ast.Name) and func.id == "setattr" else 0 if \
                isinstance(func, ast.Attribute) and func.attr == "setdefault" else None
            if at is not None and len(node.args) > at + 1 and not _off(node.args[at + 1]):
                word = _word(node.args[at])
                if word:
                    yield word, node.lineno, _name(func)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                word = _word(k)
                if word and not _off(v):
                    yield word, k.lineno if k else node.lineno, "a mapping"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and \
                node.value is not None and not _off(node.value):
            targets: list[ast.expr] = list(node.targets) if isinstance(node, ast.Assign) \
                else [node.target]
            while targets:
                target = targets.pop()
                if isinstance(target, (ast.Tuple, ast.List)):
                    targets.extend(target.elts)
                elif isinstance(target, ast.Subscript) and (word := _word(target.slice)):
                    yield word, node.lineno, _name(target.value)
        inside = in_lambda or isinstance(node, ast.Lambda)
        stack.extend((child, inside) for child in ast.iter_child_nodes(node))


def _word(node: ast.AST | None) -> str | None:
    """A string constant naming an FP8 switch."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 80 \
            and FP8_KEYWORD.search(node.value):
        return node.value
    return None


def _name(node: ast.expr) -> str:
    """A dotted name for a message (``kw``, ``FastLanguageModel.from_pretrained``), bounded."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < 8:
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "(...)")
    return ".".join(reversed(parts))


_OFF = (False, None, 0, "", "no", "none", "off")


def _off(node: ast.expr) -> bool:
    """A literal that leaves an FP8 switch off (anything else may turn it on)."""
    return isinstance(node, ast.Constant) and node.value in _OFF


def _short(value: Any) -> str:
    text = f"Unknown ({value.reason})" if isinstance(value, Unknown) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
